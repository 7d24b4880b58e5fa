#pragma once
// Memory every backend's adapters agree on, so the CPU and GPU programs size it the same way:
// the KV-cache block's layout and the scratch (workspace) an instruction needs.
#include "runtime/execution_plan.h"
#include "runtime/param_block.h"

#include <cstdint>

namespace tmmu::runtime {

// A slot's KV-cache block holds K then V, each [positions][kv heads * head dim] f32: the
// positions a block of `bytes` holds.
uint64_t kv_cache_positions(const AttentionParams& p, uint64_t bytes);

// Floats of ExecutionContext::workspace an instruction needs at `rows` rows: MLPs two hidden
// rows per row (gate and up, or the GELU input), attention q, k, v and the attended rows, and
// room for one row of scores (the CPU's; GPU kernels keep theirs on chip).
uint64_t workspace_floats(const ExecutionPlan& plan, const Instruction& insn, uint64_t rows);

// The most any instruction of `plan` needs at the plan's rows.
uint64_t plan_workspace_floats(const ExecutionPlan& plan);

} // namespace tmmu::runtime
