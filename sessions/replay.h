#pragma once
// Replay: plan a session's stored inputs again with the current engine and compare the result
// with the stored plan. Identical plan hashes mean the engine still reproduces the run.
#include "session_diff.h"
#include "session_iterations.h"
#include "session_source.h"
#include "session_store.h"

namespace tmmu::sessions {

// The stored model as the engine loads it (a graph from IR JSON, a problem from CSV), for views
// that show a session without planning it again. Throws what load_ir_string/parse_dsa_csv throw.
LoadedModel load_input(const SessionInput& input);

// Plans stored inputs (IR JSON via load_ir_string, CSV via parse_dsa_csv) with the stored
// request and options. For a run over iterations: the plan at the stored binding, the one in
// force after the last iteration.
Plan replan(const SessionInput& input, const Progress& progress = Progress{});
// Runs a stored run's iterations again (input.iterations is set): the stored graph bound at
// their start, planned, then each iteration as tmmu plan --iteration runs it. Throws what
// run_shape_schedule throws.
ShapeScheduleRun replay_schedule(const SessionInput& input, const Progress& progress = Progress{});

struct ReplayResult {
    Plan replayed;
    PlanComparison comparison; // stored plan -> replayed plan
    // Whether the model file still is what was recorded. Not a failure either way: the stored
    // graph is what replays, so a changed or missing file only means the plan may no longer be
    // the file's.
    SourceCheck source;
    // A run over iterations: they ran again from their start, and `replayed` is the plan in
    // force after the last; compared decision by decision with the recorded ones.
    std::optional<IterationsReplay> iterations;
    // The plan is identical and so is every iteration's decision.
    bool identical() const { return comparison.identical && (!iterations || iterations->same); }
};

// Throws CorruptCheckpoint when the session is altered: an altered plan proves nothing.
ReplayResult replay_session(const Session& s, const Progress& progress = Progress{});

} // namespace tmmu::sessions
