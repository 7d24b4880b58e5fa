#include "plan/strategies/greedy_size.h"

#include "plan/strategies/placement.h"

namespace tmmu {

OffsetSolution GreedySizeStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    check_offset_problem(p, "strategy greedy-size");
    placement::GapPlacer placer(p);
    std::vector<uint64_t> offsets = placer.place(
        placement::seed_solution(p), placement::order_by_size(p), progress, "strategy greedy-size");
    return placement::finish(p, std::move(offsets), name());
}

} // namespace tmmu
