#include "plan/strategies/auto_strategy.h"

#include "plan/strategies/ffd.h"
#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/slots.h"

namespace tmmu {

OffsetSolution AutoStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    check_offset_problem(p, "strategy auto");
    // Candidates in tie-break order: slots, ffd, greedy-size, best-fit, multi-order, then the
    // framework planners (tflm-greedy, tflite-arena), so auto is never above any of them.
    // greedy-size's solution is best-fit's spatial run (same order, same gap rule), and
    // multi-order starts with best-fit's runs, so each order is placed once.
    OffsetSolution best;
    auto consider = [&best](OffsetSolution s) {
        if (best.producer.empty() || s.height < best.height) best = std::move(s);
    };
    progress.check_cancel("strategy auto");
    progress.report(0.0, "auto: slots");
    consider(SlotsStrategy().solve(p, progress));
    progress.check_cancel("strategy auto");
    progress.report(0.1, "auto: ffd");
    consider(FfdStrategy().solve(p, progress));
    progress.check_cancel("strategy auto");
    progress.report(0.2, "auto: greedy-size, best-fit, multi-order");
    MultiOrderRuns runs = solve_multi_order_runs(p, progress);
    consider(std::move(runs.best_fit.spatial));
    consider(std::move(runs.best_fit.best));
    consider(std::move(runs.best));
    progress.check_cancel("strategy auto");
    progress.report(0.95, "auto: framework heuristics");
    consider(lowest_framework_plan(p, progress));
    progress.report(1.0, "auto: done");
    return best;
}

} // namespace tmmu
