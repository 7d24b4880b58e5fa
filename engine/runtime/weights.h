#pragma once
// A plan's weights in one allocation, each at its own 64-byte aligned offset.
#include "runtime/execution_plan.h"

#include <cstdint>
#include <vector>

namespace tmmu::runtime {

struct WeightStore {
    std::vector<float> data;      // every weight, f32
    std::vector<uint64_t> offset; // per plan weight: its first element in data
    const float* at(WeightRef w) const { return data.data() + offset[w.index]; }
};

// Room for every weight of `plan`, all zero.
WeightStore zeroed_weights(const ExecutionPlan& plan);

// Seeded random weights, the same for the same seed and weight names whatever the plan's order
// or mode: each weight draws from its own stream (seed, name). Matrices are uniform in
// [-0.08, 0.08], biases in [-0.02, 0.02], norm scales in [0.9, 1.1], so activations stay in a
// range where f32 and a double-precision reference agree closely.
WeightStore random_weights(const ExecutionPlan& plan, uint64_t seed);

} // namespace tmmu::runtime
