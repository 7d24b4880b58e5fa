#pragma once
// The CPU backend behind the backend-neutral run loop (runtime/generate.h): its executor keeps
// the weights and slot states in host memory and loads CpuPrograms over them.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/program.h"
#include "runtime/run_record.h"

namespace tmmu::cpu {

// What the CPU backend reports as its device.
inline constexpr const char* kCpuDevice = "f32 reference, one thread";

// Programs run with the request's register layout, under MemoryCheck when it asks.
std::unique_ptr<runtime::Executor> make_cpu_executor(const runtime::ExecutionPlan& decode,
                                                     runtime::WeightStore weights,
                                                     const runtime::RunRequest& request);

// runtime::generate on the CPU backend.
runtime::RunResult generate(const TransformerConfig& config, const runtime::RunRequest& request,
                            const Progress& progress);

// Runs a recorded run's config and request again on the CPU backend (the recording must be a
// CPU run: INVALID_ARGUMENT otherwise).
runtime::RunResult replay(const runtime::RunRecord& record, const Progress& progress);

} // namespace tmmu::cpu
