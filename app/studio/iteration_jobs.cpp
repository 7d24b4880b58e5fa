#include "iteration_jobs.h"

#include "core/failure.h"

namespace tmmu::studio {

IterationsRun run_iterations_job(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations,
                                 const Progress& progress) {
    const LoadedModel& model = *shown.model;
    if (model.kind != ModelKind::IrJson || !model.graph || model.graph->dims.empty())
        fail(FailureCode::InvalidArgument, "iterations",
             "only an IR graph with a shape_envelope runs over iterations");
    const Mode mode = shown.plan->mode.value_or(shown.settings.mode);
    const PlanOptions options = make_options(shown.settings, model.kind);
    IterationsRun out;
    try {
        ShapeScheduleRun run = run_shape_schedule(
            *model.graph, *shown.plan, mode, options, iterations,
            [&out](const IterationOutcome& i) { out.decided.push_back(i); }, progress);
        auto bound = std::make_shared<LoadedModel>(model);
        bound->graph = std::move(run.graph);
        bound->annotations = dim_annotations(*bound->graph);
        PlanSettings settings = shown.settings;
        settings.bindings.dims = binding_of(*bound->graph);
        out.outcome =
            PlanOutcome{std::move(bound), std::make_shared<const Plan>(std::move(run.plan)),
                        settings, IterationHistory{binding_of(*model.graph), out.decided}};
    } catch (const Failure& f) {
        if (f.code() == FailureCode::Cancelled) throw;
        out.failure = f;
    }
    return out;
}

} // namespace tmmu::studio
