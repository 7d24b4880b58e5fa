#pragma once
// One run of a transformer config on a backend, as `tmmu run` and the studio's Run panel record
// it, and a recorded run run again on the backend it names: the two front ends share these so
// a run means the same thing in both.
#include "backend_registry.h"

#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/backend_parity.h"
#include "runtime/run_record.h"

#include <string>
#include <string_view>

namespace tmmu::app {

// "f32" or "f16"; INVALID_ARGUMENT naming `where` otherwise.
runtime::WeightPrecision parse_weight_precision(std::string_view text, std::string_view where);

// INVALID_ARGUMENT naming `what` unless the backend is runnable here (check_runnable_backend),
// and for f16 weights on the CPU backend (the f32 reference).
runtime::RunRecord run_model(const std::string& backend, const BackendRunOptions& options,
                             const std::string& config_path, const std::string& config_text,
                             const runtime::RunRequest& request, const Progress& progress,
                             const std::string& what = "backend");

// `backend` against the CPU backend on the same request, teacher-forced step by step
// (runtime::compare_backends; counters off; the CPU keeps f32 weights), and issue 13's gate over
// it: NMSE at every step at most cpu_gate_nmse (1e-5 for f32 weights, 1e-3 for f16), at most one
// argmax miss in 64 rows.
runtime::BackendParity compare_with_cpu(const std::string& backend,
                                        const BackendRunOptions& options,
                                        const TransformerConfig& config,
                                        const runtime::RunRequest& request,
                                        const Progress& progress);
double cpu_gate_nmse(runtime::WeightPrecision precision);
bool passes_cpu_gate(const runtime::BackendParity& parity, runtime::WeightPrecision precision);
// "vulkan vs cpu: worst NMSE 2.3e-13 at step 58 (decode), argmax 64/64 rows -> passes (...)"
std::string cpu_gate_line(const std::string& backend, const runtime::BackendParity& parity,
                          runtime::WeightPrecision precision);

// The record's config and request again on its backend.
runtime::RunResult rerun(const runtime::RunRecord& record, const Progress& progress);

} // namespace tmmu::app
