#pragma once
// The CUDA backend's adapters (seed 002, A3, A5): runtime::GpuAdapters over cuda_kernels.h, with
// every pointer in device memory and ExecutionContext::queue the cudaStream_t.
#include "runtime/adapter.h"

namespace tmmu::cuda {

// The static table: an entry for every opcode of kAllOpcodes, null elsewhere.
const runtime::AdapterTable& cuda_adapters();
const runtime::AdapterCapabilities& cuda_capabilities();

} // namespace tmmu::cuda
