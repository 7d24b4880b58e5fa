#pragma once
// CPU kernels of the lazy engine's pure ops. Deterministic: every sum runs in one fixed order
// (reductions accumulate in double in element order), so eager and lazy runs of a program give
// bit-identical results.
#include "lazy/lazy_graph.h"

#include <span>
#include <vector>

namespace tmmu::lazy {

struct KernelInput {
    std::span<const float> data;
    const Shape* shape;
};

// Writes node's output (out holds the output's element count). out never overlaps an input:
// a pool buffer of its own, or a part of a region arena that the plan keeps apart from every
// value live at this node.
void run_kernel(const Node& node, std::span<const KernelInput> inputs, const Shape& out_shape,
                std::span<float> out);

// One element of an elementwise op (unary ops ignore b): the very arithmetic run_kernel does, so
// a fused kernel built from it gives the unfused bits.
float elementwise(Op op, float a, float b);
// For each element of `out` in order, the element of `in` (which broadcasts to out) it reads.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out);

// Shape of sum/mean over dims (all dims when empty); InvalidArgument for a bad dim.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim);

} // namespace tmmu::lazy
