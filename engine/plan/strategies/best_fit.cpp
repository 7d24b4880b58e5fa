#include "plan/strategies/best_fit.h"

#include "plan/strategies/parallel_passes.h"

namespace tmmu {

std::span<const OrderFn> best_fit_orders() {
    static constexpr OrderFn kOrders[] = {placement::order_by_size, placement::order_by_length,
                                          placement::order_by_area};
    return kOrders;
}

BestFitRuns run_best_fit(const OffsetProblem& p, placement::GapPlacer& placer,
                         const placement::Seed& seed, const Progress& progress, unsigned threads) {
    const auto orders = best_fit_orders();
    constexpr std::string_view kStage = "strategy best-fit";
    BestFitRuns runs;
    runs.orders.resize(orders.size());
    std::vector<std::optional<std::vector<uint64_t>>> plans(orders.size());
    // The spatial run is always whole (it is greedy-size's answer); the later orders count only
    // strictly below the best of the earlier: each gives up once it reaches it.
    auto run = [&](size_t k, auto& placer_of, uint64_t limit) -> std::optional<uint64_t> {
        runs.orders[k] = orders[k](p);
        plans[k] =
            placer_of().place_below(seed, runs.orders[k], k == 0 ? placement::kNoLimit : limit,
                                    progress, kStage, placement::GapRule::Best);
        if (!plans[k]) return std::nullopt;
        return solution_height(p, *plans[k]);
    };
    placement::run_passes_in_order(p, placer, orders.size(), placement::kNoLimit, 0, threads, run);
    runs.best = placement::finish(p, std::move(*plans[0]), "best-fit");
    runs.spatial = runs.best;
    runs.spatial.producer = "greedy-size";
    for (size_t k = 1; k < orders.size(); ++k) {
        if (!plans[k] || solution_height(p, *plans[k]) >= runs.best.height) continue;
        runs.best = placement::finish(p, std::move(*plans[k]), "best-fit");
        runs.best_order = k;
    }
    return runs;
}

BestFitRuns solve_best_fit_runs(const OffsetProblem& p, const Progress& progress) {
    check_offset_problem(p, "strategy best-fit");
    placement::GapPlacer placer(p); // one overlap index for the three runs
    return run_best_fit(p, placer, placement::seed_solution(p), progress,
                        placement::planner_threads_for(p));
}

OffsetSolution BestFitStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_best_fit_runs(p, progress).best;
}

} // namespace tmmu
