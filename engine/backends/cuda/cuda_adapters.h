#pragma once
// The CUDA backend's adapters (seed 002, A3, A5): runtime::GpuAdapters over cuda_kernels.h, with
// every pointer in device memory and ExecutionContext::queue a CudaQueue.
#include "runtime/adapter.h"
#include "runtime/rope.h"

#include <vector>

namespace tmmu::cuda {

// What a program's adapters enqueue on: its stream, and the RoPE tables it uploaded (each
// table's address a device pointer), which rope() finds by theta and head size.
struct CudaQueue {
    void* stream = nullptr; // cudaStream_t
    std::vector<runtime::RopeTable> rope_tables;
};

// The static table: an entry for every opcode of kAllOpcodes, null elsewhere.
const runtime::AdapterTable& cuda_adapters();
const runtime::AdapterCapabilities& cuda_capabilities();

} // namespace tmmu::cuda
