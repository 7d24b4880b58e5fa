#include "planning.h"

#include "core/failure.h"
#include "core/units.h"
#include "plan/strategy.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu::studio {

CapacityList parse_capacities(const std::string& text) {
    CapacityList list;
    std::string spec;
    auto flush = [&] {
        if (spec.empty()) return;
        size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            fail(FailureCode::InvalidArgument, "arena capacities",
                 fmt::format("'{}': expected NAME=CAPACITY, e.g. activations=8GiB", spec));
        list.emplace_back(spec.substr(0, eq),
                          parse_byte_size(spec.substr(eq + 1), "arena capacity " + spec));
        spec.clear();
    };
    for (char c : text) {
        if (c == ',' || c == ';' || c == ' ' || c == '\t')
            flush();
        else
            spec += c;
    }
    flush();
    return list;
}

std::string format_capacities(const CapacityList& capacities) {
    std::string text;
    for (const auto& [name, bytes] : capacities) {
        if (!text.empty()) text += ", ";
        text += fmt::format("{}={}", name, bytes);
    }
    return text;
}

PlanOptions make_options(const PlanSettings& settings, ModelKind kind) {
    PlanOptions o;
    o.strategy = settings.strategy;
    const bool csv = kind == ModelKind::DsaCsv;
    // A CSV problem is one arena named "arena"; it exists in the policy only when configured.
    if (csv) o.policy.set_capacity("arena", UINT64_MAX);
    for (const auto& [name, bytes] : settings.capacities) {
        bool routed = csv ? name == "arena" : false;
        for (const std::string& target : o.policy.arena_of_role)
            routed |= !csv && target == name;
        if (!routed)
            fail(FailureCode::InvalidArgument, "arena capacity " + name,
                 csv ? "offset-assignment problems have one arena, named 'arena'"
                     : "no role is routed to this arena; arenas: parameters, activations, "
                       "gradients, optimizer");
        o.policy.set_capacity(name, bytes);
    }
    uint64_t alignment = settings.alignment != 0 ? settings.alignment : (csv ? 1 : 128);
    if ((alignment & (alignment - 1)) != 0)
        fail(FailureCode::AlignmentViolation, "alignment",
             fmt::format("{} is not a power of two", alignment));
    o.policy.set_alignment(alignment);
    return o;
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
        progress.report(double(i) / double(strategies.size()), "comparing: " + name);
        PlanSettings s = settings;
        s.strategy = name;
        views::StrategyResult r;
        r.strategy = name;
        Progress quiet; // per-strategy progress would make the bar jump back and forth
        quiet.cancel_flag = progress.cancel_flag;
        try {
            Plan plan = plan_model(model, s.mode, make_options(s, model.kind), quiet);
            r.height = total_height(plan);
            r.lower_bound = total_lower_bound(plan);
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

uint64_t total_height(const Plan& plan) {
    uint64_t sum = 0;
    for (const ArenaPlan& a : plan.arenas)
        sum += a.metrics.peak_bytes;
    return sum;
}

uint64_t total_lower_bound(const Plan& plan) {
    uint64_t sum = 0;
    for (const ArenaPlan& a : plan.arenas)
        sum += a.metrics.lower_bound;
    return sum;
}

} // namespace tmmu::studio
