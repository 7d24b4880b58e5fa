#include "plan/strategies/best_fit.h"

#include "plan/strategies/parallel_passes.h"

namespace tmmu {

std::span<const OrderFn> best_fit_orders() {
    static constexpr OrderFn kOrders[] = {placement::order_by_size, placement::order_by_length,
                                          placement::order_by_area};
    return kOrders;
}

BestFitRuns run_best_fit(const OffsetProblem& p, placement::GapPlacer& placer,
                         const placement::Seed& seed, placement::OrderCache& cache,
                         const Progress& progress, unsigned threads, uint64_t limit) {
    const auto orders = best_fit_orders();
    constexpr std::string_view kStage = "strategy best-fit";
    BestFitRuns runs;
    runs.orders.resize(orders.size());
    std::vector<std::optional<std::vector<uint64_t>>> plans(orders.size());
    // The spatial run goes on up to limit, whatever the others find (it is greedy-size's
    // answer); the later orders count only strictly below the best of the earlier: each gives
    // up once it reaches it.
    auto run = [&](size_t k, auto& placer_of, uint64_t below) -> std::optional<uint64_t> {
        runs.orders[k] = cache(orders[k]);
        plans[k] = placer_of().place_below(seed, runs.orders[k], k == 0 ? limit : below, progress,
                                           kStage, placement::GapRule::Best);
        if (!plans[k]) return std::nullopt;
        return solution_height(p, *plans[k]);
    };
    placement::run_passes_in_order(p, placer, orders.size(), limit, 0, threads, run);
    for (size_t k = 0; k < orders.size(); ++k) {
        if (!plans[k] || (runs.best && solution_height(p, *plans[k]) >= runs.best->height))
            continue;
        runs.best = placement::finish(p, std::move(*plans[k]), "best-fit");
        runs.best_order = k;
        if (k == 0) {
            runs.spatial = runs.best;
            runs.spatial->producer = "greedy-size";
        }
    }
    return runs;
}

BestFitRuns solve_best_fit_runs(const OffsetProblem& p, const Progress& progress) {
    check_offset_problem(p, "strategy best-fit");
    placement::GapPlacer placer(p); // one overlap index for the three runs
    placement::OrderCache orders(p);
    return run_best_fit(p, placer, placement::seed_solution(p), orders, progress,
                        placement::planner_threads_for(p));
}

OffsetSolution BestFitStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return *solve_best_fit_runs(p, progress).best; // no limit: always there
}

} // namespace tmmu
