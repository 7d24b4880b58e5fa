#include "plan/strategies/auto_strategy.h"

#include "plan/strategies/ffd.h"
#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/slots.h"

namespace tmmu {

OffsetSolution AutoStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    check_offset_problem(p, "strategy auto");
    // Candidates in tie-break order: slots, ffd, greedy-size, best-fit, multi-order, then the
    // framework planners, so auto is never above any of them. greedy-size's solution is
    // best-fit's spatial run (same order, same gap rule), and multi-order starts with best-fit's
    // runs, so each order is placed once. A plan at the lower bound ends the search: no later
    // candidate can be strictly lower, so stopping changes no result.
    const uint64_t bound = lower_bound_bytes(p);
    OffsetSolution best;
    auto consider = [&best](OffsetSolution s) {
        if (best.producer.empty() || s.height < best.height) best = std::move(s);
    };
    auto step = [&](double done, std::string_view what) {
        progress.check_cancel("strategy auto");
        if (!best.producer.empty() && best.height <= bound) return true;
        progress.report(done, what);
        return false;
    };
    auto run = [&] {
        if (step(0.0, "auto: slots")) return;
        consider(SlotsStrategy().solve(p, progress));
        if (step(0.1, "auto: ffd")) return;
        consider(FfdStrategy().solve(p, progress));
        if (step(0.2, "auto: greedy-size, best-fit, multi-order")) return;
        MultiOrderRuns runs = solve_multi_order_runs(p, progress);
        consider(std::move(runs.best_fit.spatial));
        consider(std::move(runs.best_fit.best));
        consider(std::move(runs.best));
        if (step(0.8, "auto: framework planners")) return;
        consider(lowest_framework_plan(p, progress, runs.placed));
    };
    run();
    progress.report(1.0, "auto: done");
    return best;
}

} // namespace tmmu
