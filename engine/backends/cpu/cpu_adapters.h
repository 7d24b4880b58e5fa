#pragma once
// The CPU reference backend's adapters (seed 002, A3, A5): f32, synchronous, deterministic
// (every reduction runs in one fixed order, so the same inputs give the same bits), each call
// covering all rows of the step.
#include "runtime/adapter.h"
#include "runtime/param_block.h"

namespace tmmu::cpu {

// The static table: an entry for every opcode of kAllOpcodes, null elsewhere.
const runtime::AdapterTable& cpu_adapters();
const runtime::AdapterCapabilities& cpu_capabilities();

// A slot's KV-cache block holds K then V, each [positions][kv heads * head dim] f32: the
// positions a block of `bytes` holds.
uint64_t kv_cache_positions(const runtime::AttentionParams& p, uint64_t bytes);

// Floats of ExecutionContext::workspace an instruction needs at `rows` rows.
uint64_t workspace_floats(const runtime::ExecutionPlan& plan, const runtime::Instruction& insn,
                          uint64_t rows);

} // namespace tmmu::cpu
