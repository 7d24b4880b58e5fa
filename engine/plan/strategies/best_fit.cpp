#include "plan/strategies/best_fit.h"

#include "plan/strategies/placement.h"

namespace tmmu {

BestFitRuns solve_best_fit_runs(const OffsetProblem& p, const Progress& progress) {
    check_offset_problem(p, "strategy best-fit");
    using Order = std::vector<uint32_t> (*)(const OffsetProblem&);
    static constexpr Order kOrders[] = {placement::order_by_size, placement::order_by_length,
                                        placement::order_by_area};
    const placement::Seed seed = placement::seed_solution(p);
    placement::GapPlacer placer(p); // one overlap index for the three runs
    BestFitRuns runs;
    for (size_t k = 0; k < std::size(kOrders); ++k) {
        OffsetSolution s = placement::finish(
            p, placer.place(seed, kOrders[k](p), progress, "strategy best-fit"), "best-fit");
        if (k == 0) {
            runs.spatial = s;
            runs.spatial.producer = "greedy-size";
        }
        if (k == 0 || s.height < runs.best.height) runs.best = std::move(s);
    }
    return runs;
}

OffsetSolution BestFitStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_best_fit_runs(p, progress).best;
}

} // namespace tmmu
