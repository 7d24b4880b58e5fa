#pragma once
// Plan > Run iterations: the IR graph, transformer config or ONNX model on screen run over
// iterations of other shapes (seed 000 II.H), as `tmmu plan --iteration` runs it. Plain data and a
// plain function (no Qt), run as a job.
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

// Whether `model`, shown with `settings`, runs over iterations: an IR graph with a shape
// envelope, a transformer config, an ONNX model whose dimensions are bound by name.
bool runs_over_iterations(const LoadedModel& model, const PlanSettings& settings);

// Runs `iterations` from `shown`: an IR graph with a shape envelope from its plan, or a
// transformer config or ONNX model loaded again with its dimensions dynamic
// (request_over_iterations) from a plan at the toolbar's shapes, as tmmu plan --iteration runs
// it. Throws Failure(Cancelled) when cancelled, and InvalidArgument for a model that
// runs_over_iterations refuses.
IterationsRun run_iterations_job(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations,
                                 const Progress& progress);

} // namespace tmmu::studio
