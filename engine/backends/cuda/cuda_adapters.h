#pragma once
// The CUDA backend's adapters (seed 002, A3, A5): f32, each call enqueuing its opcode's kernels
// for all rows of the step on ExecutionContext::queue, with every pointer in device memory.
// Weights the CPU reads as [in, out] (GPT-2's Conv1D) are uploaded transposed to [out, in]
// (conv1d_weights says which), so one matrix kernel serves every layout.
#include "runtime/adapter.h"

#include <vector>

namespace tmmu::cuda {

// The static table: an entry for every opcode of kAllOpcodes, null elsewhere.
const runtime::AdapterTable& cuda_adapters();
const runtime::AdapterCapabilities& cuda_capabilities();

// Per plan weight: whether it is an [in, out] matrix the upload transposes.
std::vector<bool> conv1d_weights(const runtime::ExecutionPlan& plan);

} // namespace tmmu::cuda
