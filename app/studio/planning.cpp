#include "planning.h"

#include "core/failure.h"
#include "plan/plan_summary.h"
#include "plan/strategy.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu::studio {

namespace {

// A toolbar field's entries (app::split_list), each parsed as the command line's option would
// be: parse(entry, where).
template <typename List, typename Parse>
List field_list(const std::string& text, Parse parse, std::string_view where) {
    List list;
    for (const std::string& entry : app::split_list(text))
        list.push_back(parse(entry, where));
    return list;
}

template <typename List, typename Format>
std::string field_text(const List& list, Format format) {
    std::string text;
    for (const auto& item : list) {
        if (!text.empty()) text += ", ";
        text += format(item);
    }
    return text;
}

} // namespace

ArenaSettings parse_arena_settings(const std::string& text) {
    return field_list<ArenaSettings>(text, app::parse_arena_setting, "arena settings");
}

std::string format_arena_settings(const ArenaSettings& settings) {
    return field_text(settings, app::format_arena_setting);
}

RouteList parse_routes(const std::string& text) {
    return field_list<RouteList>(text, app::parse_route, "routes");
}

std::string format_routes(const RouteList& routes) {
    return field_text(routes, app::format_route);
}

bool load_depends_on_change(ModelKind kind, const PlanSettings& loaded,
                            const PlanSettings& wanted) {
    if (kind == ModelKind::TransformerConfig)
        return loaded.batch != wanted.batch || loaded.seq != wanted.seq ||
               loaded.mode != wanted.mode;
    // Bindings shape an ONNX model's graph, and an IR graph's with dynamic dimensions.
    return (kind == ModelKind::Onnx || kind == ModelKind::IrJson) &&
           !(loaded.bindings == wanted.bindings);
}

PlanOptions make_options(const PlanSettings& settings, ModelKind kind) {
    app::PlanChoices choices;
    choices.strategy = settings.strategy;
    choices.alignment = settings.alignment;
    choices.arenas = settings.arenas;
    choices.routes = settings.routes;
    choices.memory_budget = settings.memory_budget;
    // Like greyed Routes, the rank and its sharding wait for the next graph: a problem has
    // neither roles nor ranks.
    if (kind != ModelKind::DsaCsv) choices.shard = settings.shard;
    return app::make_plan_options(choices, kind);
}

PlanOutcome run_plan_job(const PlanJob& job, const Progress& progress) {
    PlanOutcome out;
    out.settings = job.settings;
    out.model = job.model;
    if (!out.model) {
        progress.report(0.0, "loading model");
        out.model =
            std::make_shared<const LoadedModel>(load_model(job.path, job.settings.request()));
        progress.check_cancel("loading model");
    }
    PlanOptions options = make_options(job.settings, out.model->kind);
    out.plan =
        std::make_shared<const Plan>(plan_model(*out.model, job.settings.mode, options, progress));
    return out;
}

std::vector<views::StrategyResult> compare_strategies(const LoadedModel& model,
                                                      const PlanSettings& settings,
                                                      const Progress& progress) {
    std::vector<views::StrategyResult> results;
    const auto& strategies = all_strategies();
    for (size_t i = 0; i < strategies.size(); ++i) {
        std::string name(strategies[i]->name());
        progress.check_cancel("comparing strategies");
        const double n = double(strategies.size());
        PlanSettings s = settings;
        s.strategy = name;
        s.memory_budget = 0; // every strategy's height, those over the budget included
        views::StrategyResult r;
        r.strategy = name;
        try {
            Plan plan =
                plan_model(model, s.mode, make_options(s, model.kind),
                           progress.part(double(i) / n, double(i + 1) / n, "comparing " + name));
            const PlanTotals totals = plan_totals(plan);
            r.height = totals.peak_bytes;
            r.lower_bound = totals.lower_bound;
            r.aligned_bound = aligned_bound(plan);
            r.ms = double(plan.total_plan_ns) / 1e6;
        } catch (const Failure& f) {
            if (f.code() == FailureCode::Cancelled) throw;
            r.error = f.what();
        }
        results.push_back(std::move(r));
    }
    progress.report(1.0, "compared");
    return results;
}

PlanOutcome stored_plan_outcome(Plan plan, const std::string& path, std::string description) {
    auto model = std::make_shared<LoadedModel>();
    model->kind = ModelKind::DsaCsv; // no graph: the views show tensors without producers
    model->path = path;
    model->description = std::move(description);
    PlanOutcome outcome;
    outcome.settings.mode = plan.mode.value_or(Mode::Training);
    outcome.settings.strategy = plan.strategy;
    outcome.plan = std::make_shared<const Plan>(std::move(plan));
    outcome.model = std::move(model);
    return outcome;
}

} // namespace tmmu::studio
