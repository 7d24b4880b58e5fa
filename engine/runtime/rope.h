#pragma once
// RoPE's rotation frequencies: one function for every backend that computes its angles on the
// host (the CPU adapters, the GPU backends' tables), so their angles agree bit for bit.
#include "runtime/execution_plan.h"
#include "runtime/param_block.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::runtime {

// Pair i's (i < head_dim / 2): theta^(-2i/head_dim), as Hugging Face Llama, then as the params'
// RoPE scaling says. Linear divides every frequency by the factor. Llama3 (transformers'
// _compute_llama3_parameters) divides those whose wavelength 2 pi / f is above
// original / low_freq_factor, keeps those below original / high_freq_factor, and blends the two
// linearly in between. Unscaled, position * f[i] is exactly what the backends computed before
// scaling existed, so plans without it keep their logits bit for bit. Allocates nothing: the
// CPU adapters call it in the token loop.
double rope_frequency(const AttentionParams& p, uint32_t i);

// Whether two attention blocks rotate alike: the same theta, head size and scaling.
bool same_rotation(const AttentionParams& a, const AttentionParams& b);

// A RoPE table as a GPU backend keeps it: cos then sin of position * rope_frequency(rotation,
// i), [positions][head_dim / 2] each, computed on the host in double (as the CPU backend
// computes the angle). `address`: where the table starts (a device address, or a byte offset
// into RopeTables::values before the values are uploaded).
struct RopeTable {
    AttentionParams rotation{};
    uint32_t positions = 0;
    uint64_t address = 0;
};
// The table made for this theta and head size (what GpuAdapters passes the kernels), or null.
const RopeTable* find_rope_table(const std::vector<RopeTable>& tables, float theta,
                                 uint32_t head_dim);

// Every table a plan's attention instructions rotate by, for `positions` positions, one per
// theta and head size, laid end to end in `values`. Throws INVALID_EXECUTION_PLAN at the plan
// when two instructions rotate by one theta and head size with different scaling (`backend`
// keeps one table for both).
struct RopeTables {
    std::vector<RopeTable> tables;
    std::vector<float> values;
};
RopeTables plan_rope_tables(const ExecutionPlan& plan, uint32_t positions,
                            const std::string& backend);

} // namespace tmmu::runtime
