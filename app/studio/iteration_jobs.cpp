#include "iteration_jobs.h"

#include "core/failure.h"

namespace tmmu::studio {
namespace {

// The model the run binds again and its first plan: the graph on screen and its plan, or a
// transformer config or ONNX model loaded again with its dimensions dynamic (batch and seq, the
// dimensions bound by name) and planned at the toolbar's shapes, which then takes one share of
// the bar: the graph on screen has fixed shapes, or an envelope sized for an earlier run.
struct RunStart {
    std::shared_ptr<const LoadedModel> model;
    std::shared_ptr<const Plan> plan;
    Progress progress; // what the iterations report to
};

RunStart run_start(const PlanOutcome& shown, const std::vector<DimBinding>& iterations,
                   const PlanOptions& options, const Progress& progress) {
    if (shown.model->kind != ModelKind::TransformerConfig && shown.model->kind != ModelKind::Onnx)
        return {shown.model, shown.plan, progress};
    const ModelRequest request = request_over_iterations(shown.settings.request(), iterations);
    auto model = std::make_shared<const LoadedModel>(load_model(shown.model->path, request));
    const double first = 1.0 / double(iterations.size() + 1);
    auto plan = std::make_shared<const Plan>(
        plan_model(*model, request.mode, options, progress.part(0, first)));
    return {std::move(model), std::move(plan), progress.part(first, 1)};
}

} // namespace

bool runs_over_iterations(const LoadedModel& model, const PlanSettings& settings) {
    switch (model.kind) {
    case ModelKind::IrJson:
        return model.graph && !model.graph->dims.empty();
    case ModelKind::TransformerConfig:
        return true;
    case ModelKind::Onnx:
        return !settings.bindings.dims.empty();
    default:
        return false;
    }
}

IterationsRun run_iterations_job(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations,
                                 const Progress& progress) {
    const LoadedModel& model = *shown.model;
    if (!runs_over_iterations(model, shown.settings))
        fail(FailureCode::InvalidArgument, "iterations",
             "only an IR graph with a shape_envelope, a transformer config or an ONNX model "
             "with dimensions bound by name runs over iterations");
    const Mode mode = shown.plan->mode.value_or(shown.settings.mode);
    const PlanOptions options = make_options(shown.settings, model.kind);
    IterationsRun out;
    try {
        const RunStart start = run_start(shown, iterations, options, progress);
        const Graph& first = *start.model->graph;
        ShapeScheduleRun run = run_shape_schedule(
            first, *start.plan, mode, options, iterations,
            [&out](const IterationOutcome& i) { out.decided.push_back(i); }, start.progress,
            start.model->build_at);
        auto bound = std::make_shared<LoadedModel>(*start.model);
        Plan last_plan;
        adopt_schedule_run(*bound, last_plan, std::move(run));
        const DimBinding last = binding_of(*bound->graph);
        PlanSettings settings = shown.settings;
        if (model.kind != ModelKind::TransformerConfig) {
            settings.bindings.dims = last;
        } else { // a config's toolbar shapes
            settings.batch = uint64_t(last.at("batch"));
            settings.seq = uint64_t(last.at("seq"));
        }
        out.outcome =
            PlanOutcome{std::move(bound), std::make_shared<const Plan>(std::move(last_plan)),
                        settings, IterationHistory{binding_of(first), out.decided}};
    } catch (const Failure& f) {
        if (f.code() == FailureCode::Cancelled) throw;
        out.failure = f;
    }
    return out;
}

} // namespace tmmu::studio
