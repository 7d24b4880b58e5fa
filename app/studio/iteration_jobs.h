#pragma once
// Plan > Run iterations: the IR graph on screen run over iterations of other shapes (seed 000
// II.H), as `tmmu plan --iteration` runs it, from the plan shown. Plain data and a plain
// function (no Qt), run as a job.
#include "core/failure.h"
#include "plan/replan.h"
#include "planning.h"

#include <optional>
#include <vector>

namespace tmmu::studio {

struct IterationsRun {
    std::vector<IterationOutcome> decided; // every iteration decided, also before a failure
    // The plan in force after the last iteration, with its model bound there and settings whose
    // dims give that binding (so Re-plan plans it again); none when an iteration failed.
    std::optional<PlanOutcome> outcome;
    std::optional<Failure> failure; // what stopped the run (never CANCELLED: that throws)
};

// Runs `iterations` from `shown` (an IR graph with a shape envelope and its plan). Throws
// Failure(Cancelled) when cancelled, and InvalidArgument for a model that has no envelope.
IterationsRun run_iterations_job(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations,
                                 const Progress& progress);

} // namespace tmmu::studio
