#pragma once
// Folding a residual add into the matrix kernel before it on a GPU backend (issue 13): an
// instruction writing R (multihead_attention, swiglu, gelu_mlp: each ends in a matrix product),
// then residual_add of R and A into O, the add alone reading R. The instruction writes
// A + its product into O (Operands::output and output_residual) and the add launches nothing.
// Only where O is A itself or apart from it, so each element is read before the same thread
// writes it. The folded add keeps its place in the step (counted as dispatched, timed at about
// zero) and R is never written; the kernel computes what the two did, bit for bit
// (cuda_kernels.h, LinearPart::residual). Norms stay their own launches: folded into the
// matrix kernels after them, every block repeated the row's sum of squares before its first
// product, which cost as much as the launch it saved (measured on an H200, issue 13's note).
//
// A backend folds only where its kernel set takes residuals (GpuAdapters passes them to kernel
// sets with LinearPart), and not while it checks memory around every instruction, which
// expects each to write its own output.
#include "runtime/adapter.h"
#include "runtime/execution_plan.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tmmu::runtime {

// Folds what it can of `bound` (plan's instructions bound at `offsets` in one arena) in place;
// returns how many residual adds it folded.
uint32_t fold_residual_adds(const ExecutionPlan& plan, std::span<const uint64_t> offsets,
                            std::vector<BoundInstruction>& bound);

} // namespace tmmu::runtime
