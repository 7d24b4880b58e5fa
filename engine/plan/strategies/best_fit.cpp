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
    constexpr std::string_view kStage = "strategy best-fit";
    runs.orders.push_back(orders[0](p));
    runs.best =
        placement::finish(p, placer.place(seed, runs.orders[0], progress, kStage), "best-fit");
    runs.spatial = runs.best;
    runs.spatial.producer = "greedy-size";
    // The later orders count only strictly below: each gives up once it reaches the best.
    for (size_t k = 1; k < orders.size(); ++k) {
        runs.orders.push_back(orders[k](p));
        if (auto offsets = placer.place_below(seed, runs.orders.back(), runs.best.height, progress,
                                              kStage, placement::GapRule::Best)) {
            runs.best = placement::finish(p, std::move(*offsets), "best-fit");
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
