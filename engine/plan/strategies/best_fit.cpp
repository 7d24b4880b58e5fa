#include "plan/strategies/best_fit.h"

namespace tmmu {

std::span<const OrderFn> best_fit_orders() {
    static constexpr OrderFn kOrders[] = {placement::order_by_size, placement::order_by_length,
                                          placement::order_by_area};
    return kOrders;
}

BestFitRuns run_best_fit(const OffsetProblem& p, placement::GapPlacer& placer,
                         const placement::Seed& seed, const Progress& progress) {
    BestFitRuns runs;
    const auto orders = best_fit_orders();
    for (size_t k = 0; k < orders.size(); ++k) {
        runs.orders.push_back(orders[k](p));
        OffsetSolution s = placement::finish(
            p, placer.place(seed, runs.orders.back(), progress, "strategy best-fit"), "best-fit");
        if (k == 0) {
            runs.spatial = s;
            runs.spatial.producer = "greedy-size";
        }
        if (k == 0 || s.height < runs.best.height) {
            runs.best = std::move(s);
            runs.best_order = k;
        }
    }
    return runs;
}

BestFitRuns solve_best_fit_runs(const OffsetProblem& p, const Progress& progress) {
    check_offset_problem(p, "strategy best-fit");
    placement::GapPlacer placer(p); // one overlap index for the three runs
    return run_best_fit(p, placer, placement::seed_solution(p), progress);
}

OffsetSolution BestFitStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_best_fit_runs(p, progress).best;
}

} // namespace tmmu
