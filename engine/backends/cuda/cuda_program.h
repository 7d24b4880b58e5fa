#pragma once
// A compiled plan run by the CUDA backend (seed 002 on a GPU; issue 13): the plan's register
// arena is one device allocation with every register at the planner's offset, weights one
// allocation, each state block one allocation for all slots; a step enqueues every adapter on
// one stream and copies the logits back once. Decode steps are captured as a CUDA graph the
// first time and replayed after, so a token costs one launch instead of one per kernel.
// No CUDA header here: the CLI and the studio include it without the toolkit.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/program.h"

#include <memory>
#include <string>

namespace tmmu::cuda {

struct CudaOptions {
    bool graphs = true; // capture and replay decode steps; false: launch every kernel each step
    // Fold residual adds into the matrix kernels before them (runtime/gpu_fusion.h) unless the
    // run checks memory; false: every instruction launches its own kernels (the same bits).
    bool fold = true;
};

// The executor for device 0. DEVICE_ERROR when there is no device or no room for the run.
// With the request's memory checks, every step runs them on the device
// (cuda_memory_check.h): ADDRESS_COLLISION names the first finding.
std::unique_ptr<runtime::Executor> make_cuda_executor(const runtime::ExecutionPlan& decode,
                                                      runtime::WeightStore weights,
                                                      const runtime::RunRequest& request,
                                                      CudaOptions options = {});
runtime::ExecutorFactory cuda_executor_factory(CudaOptions options = {});

// runtime::generate on the CUDA backend.
runtime::RunResult generate(const TransformerConfig& config, const runtime::RunRequest& request,
                            const Progress& progress, CudaOptions options = {});

} // namespace tmmu::cuda
