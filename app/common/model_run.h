#pragma once
// One run of a transformer config on a backend, as `tmmu run` and the studio's Run panel record
// it, and a recorded run run again on the backend it names: the two front ends share these so
// a run means the same thing in both.
#include "backend_registry.h"

#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/run_record.h"

#include <string>

namespace tmmu::app {

// INVALID_ARGUMENT naming `what` unless the backend is runnable here (check_runnable_backend).
runtime::RunRecord run_model(const std::string& backend, const BackendRunOptions& options,
                             const std::string& config_path, const std::string& config_text,
                             const runtime::RunRequest& request, const Progress& progress,
                             const std::string& what = "backend");

// The record's config and request again on its backend.
runtime::RunResult rerun(const runtime::RunRecord& record, const Progress& progress);

} // namespace tmmu::app
