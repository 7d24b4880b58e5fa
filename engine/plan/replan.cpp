#include "plan/replan.h"

#include "core/digest.h"
#include "core/failure.h"
#include "core/units.h"
#include "plan/plan_hash.h"
#include "plan/plan_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace tmmu {
namespace {

// bound_at, with every failure placed at the iteration (a tensor it names goes in the message).
Graph bound_at_iteration(const Graph& g, const DimBinding& at, const std::string& where) {
    try {
        return bound_at(g, at, where);
    } catch (const Failure& f) {
        throw Failure(f.code(), where,
                      f.where() == where ? f.message() : f.where() + ": " + f.message());
    }
}

// With a builder, the bindings a run plans and runs at are checked against the model built
// there, each once: a plan's shapes must be the model's, and an iteration's model must fit the
// plan it runs on. A binding whose shapes are the model's needs no fit check: the axes only
// grow with the dimensions, and the plan's binding is no smaller.
class BuildChecks {
  public:
    BuildChecks(const BuildAtBinding& build_at, const DimBinding& start)
        : build_at_(build_at), exact_{start} {} // built there: the first plan

    void plan(const Graph& bound, const std::string& where) {
        if (build_at_ && exact_.insert(binding_of(bound)).second)
            check_built_at(bound, build_at_, where);
    }

    void iteration(const Graph& planned, const DimBinding& at, const std::string& where) {
        if (!build_at_ || exact_.count(at)) return;
        if (fitted_.insert({binding_of(planned), at}).second)
            check_fits_built_at(planned, at, build_at_, where);
    }

  private:
    const BuildAtBinding& build_at_;
    std::set<DimBinding> exact_;
    std::set<std::pair<DimBinding, DimBinding>> fitted_; // (plan's binding, iteration's)
};

// The model at the iteration's shapes (the plan's values for dimensions it leaves out) must
// hold: a view of [a] over [b] fits at the plan's binding but not at every smaller one.
void check_iteration(const Graph& g, const DimBinding& planned, const DimBinding& dims,
                     const std::string& where) {
    DimBinding at = planned;
    for (const auto& [name, value] : dims)
        at[name] = value;
    (void)bound_at_iteration(g, at, where);
}

DimBinding grown(DimBinding planned, const DimBinding& next) {
    for (const auto& [name, value] : next) {
        int64_t& v = planned[name];
        v = std::max(v, value);
    }
    return planned;
}

// The binding an iteration asks for: its values, the plan's for the names it leaves out.
DimBinding asked_by(DimBinding planned, const DimBinding& next) {
    for (const auto& [name, value] : next)
        planned[name] = value;
    return planned;
}

} // namespace

std::string iteration_text(const IterationOutcome& i) {
    const auto short_hash = [](const Digest& d) { return to_hex(d).substr(0, 16); };
    return fmt::format(
        "{:>4}  {:<24} {:<10} {}  {:>12}{}", i.iteration, binding_text(i.dims),
        i.replanned ? "replanned" : "fits", short_hash(i.plan_hash), format_bytes(i.peak_bytes),
        i.replanned ? fmt::format("  (was {}; planned at {})", short_hash(i.old_plan_hash),
                                  binding_text(i.plan_binding))
                    : "");
}

ShapeScheduleRun
run_shape_schedule(Graph g, Plan first, Mode mode, const PlanOptions& options,
                   const std::vector<DimBinding>& iterations,
                   const std::function<void(const IterationOutcome&)>& on_iteration,
                   const Progress& progress, const BuildAtBinding& build_at) {
    ShapeScheduleRun run;
    run.plan = std::move(first);
    DimBinding planned = binding_of(g);
    BuildChecks checks(build_at, planned);
    // A rank's share of a tensor need not shrink with the tensor (shares are cut as
    // ceil(elements / ranks): 9 elements on 4 ranks give the last rank 0, 8 give it 2), so a
    // sharded plan holds its own binding only, and every other one is planned again.
    const bool sharded = !options.shard.roles.empty();
    for (uint32_t i = 0; i < iterations.size(); ++i) {
        progress.check_cancel("iterations");
        const std::string where = fmt::format("--iteration {}", i);
        check_iteration(g, planned, iterations[i], where);
        IterationOutcome out;
        out.iteration = i;
        out.dims = iterations[i];
        const DimBinding asked = asked_by(planned, iterations[i]);
        if (sharded ? asked != planned : !binding_fits(planned, iterations[i])) {
            if (g.replan_policy == ReplanPolicy::Abort)
                fail(FailureCode::ShapeEnvelopeViolation, where,
                     sharded ? fmt::format("{} is not the binding the sharded plan was made at "
                                           "({}): a rank's shares do not follow the shapes, and "
                                           "the model's replan_policy is ABORT",
                                           binding_text(iterations[i]), binding_text(planned))
                             : fmt::format("{} outgrows the plan made at {}, and the model's "
                                           "replan_policy is ABORT (REPLAN_AT_SAFEPOINT would "
                                           "plan again before this iteration; --dim binds a "
                                           "larger first plan)",
                                           binding_text(iterations[i]), binding_text(planned)));
            out.replanned = true;
            out.old_plan_hash = run.plan.plan_hash;
            planned = sharded ? asked : grown(std::move(planned), iterations[i]);
            g = bound_at_iteration(g, planned, where);
            checks.plan(g, where);
            const double n = double(iterations.size());
            progress.report(double(i) / n, "replan");
            run.plan = plan_graph(g, mode, options, progress.part(double(i) / n, (i + 1) / n),
                                  run.plan.source);
        }
        checks.iteration(g, asked, where);
        out.plan_binding = planned;
        out.plan_hash = run.plan.plan_hash;
        out.peak_bytes = plan_totals(run.plan).peak_bytes;
        out.replan_key = replan_key(g, run.plan);
        if (on_iteration) on_iteration(out);
        run.iterations.push_back(std::move(out));
    }
    run.graph = std::move(g);
    return run;
}

} // namespace tmmu
