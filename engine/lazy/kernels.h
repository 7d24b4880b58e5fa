#pragma once
// CPU kernels of the lazy engine's pure ops. Deterministic: every sum runs in one fixed order
// (reductions accumulate in double in element order), so eager and lazy runs of a program give
// bit-identical results.
#include "lazy/lazy_graph.h"

#include <span>
#include <vector>

namespace tmmu::lazy {

struct KernelInput {
    const std::vector<float>* data;
    const Shape* shape;
};

// Writes node's output (already sized to the output's element count).
void run_kernel(const Node& node, std::span<const KernelInput> inputs, const Shape& out_shape,
                std::vector<float>& out);

// Shape of sum/mean over dims (all dims when empty); InvalidArgument for a bad dim.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim);

} // namespace tmmu::lazy
