#pragma once
// Plan > Run iterations: the IR graph or transformer config on screen run over iterations of
// other shapes (seed 000 II.H), as `tmmu plan --iteration` runs it. Plain data and a plain
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

// Runs `iterations` from `shown`: an IR graph with a shape envelope from its plan, or a
// transformer config loaded again with batch and seq dynamic (request_over_iterations) from a
// plan at the toolbar's batch and seq, as tmmu plan CONFIG --iteration runs it. Throws
// Failure(Cancelled) when cancelled, and InvalidArgument for a model that has no envelope.
IterationsRun run_iterations_job(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations,
                                 const Progress& progress);

} // namespace tmmu::studio
