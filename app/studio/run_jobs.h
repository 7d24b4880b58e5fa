#pragma once
// What the studio's Run panel asks the engine, as plain data and plain functions (no Qt): run a
// transformer config on a backend, record the run, list and replay recorded runs. The panel
// submits them to the studio's worker (job_runner.h), off the UI thread.
#include "planning.h"

#include "run_store.h"
#include "runtime/backend_parity.h"
#include "runtime/execution_plan.h"
#include "runtime/run_record.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tmmu::studio {

// A backend the picker lists; one that cannot run here says why.
struct BackendChoice {
    std::string name;  // "cpu", "vulkan", "cuda"
    std::string label; // what the picker shows
    bool available = false;
    std::string unavailable_because;
};
std::vector<BackendChoice> backend_choices();

struct RunJob {
    std::string config_path;
    std::string backend = "cpu";
    runtime::RunRequest request;
    std::string sessions_path; // where to record; empty: not recorded
    std::string title;
    bool compare_cpu = false; // also run the CPU backend and compare every step (GPU backends)
};

// One run as the views show it: the record (ids, timings, counters), the decode program's
// instructions, and its registers packed by the planner, shown like any other plan.
struct RunShown {
    std::shared_ptr<const runtime::RunRecord> record;
    std::shared_ptr<const runtime::CompiledPlan> decode;
    PlanOutcome registers;
    int64_t run_id = 0;                           // its id in the sessions database; 0: none
    std::optional<runtime::RunComparison> replay; // replays: the comparison with the recording
    std::shared_ptr<const runtime::BackendParity> parity; // with compare_cpu: against the CPU
    bool parity_passes = false;                           // issue 13's gate
    double parity_gate = 1e-5; // its NMSE bound: 1e-5 for f32 weights, 1e-3 for f16
};

// Throws Failure: the config's, the backend's (INVALID_ARGUMENT for one that is unavailable),
// CANCELLED between steps.
RunShown execute_run(const RunJob& job, const Progress& progress);
// Loads run `id`, runs it again and compares step by step. A run whose stored record does not
// parse is CORRUPT_CHECKPOINT.
RunShown replay_recorded_run(const std::string& sessions_path, int64_t id,
                             const Progress& progress);
std::vector<sessions::RunSummary> recorded_runs(const std::string& sessions_path);

} // namespace tmmu::studio
