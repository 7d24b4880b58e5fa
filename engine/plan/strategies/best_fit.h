#pragma once
// "best-fit": XLA-style global decreasing-size best fit. The gap placement of greedy-size (the
// smallest fitting gap, ties lowest offset) run with three buffer orders: spatial (size desc,
// then lifetime desc), temporal (lifetime desc, then size desc) and area (size * lifetime desc),
// all breaking the last tie by index. Keeps the lowest height; ties go to the earlier order, so
// the later orders give up as soon as they reach the lowest height so far.
#include "plan/strategies/placement.h"
#include "plan/strategy.h"

#include <optional>
#include <span>

namespace tmmu {

class BestFitStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "best-fit"; }
    std::string_view description() const override {
        return "global decreasing best fit (XLA): spatial, temporal and area orders, best kept";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

// Both answers of one best-fit run: the spatial-order solution (the same order and gap rule as
// greedy-size, hence greedy-size's solution) and the best of the three orders. Lets "auto"
// skip running the spatial placement twice. Both are there unless the runs had a limit.
struct BestFitRuns {
    std::optional<OffsetSolution> spatial; // producer "greedy-size"
    std::optional<OffsetSolution> best;    // producer "best-fit"
    size_t best_order = 0;                 // which order gave best: index into best_fit_orders()
    std::vector<std::vector<uint32_t>> orders; // the orders placed, as best_fit_orders() lists
};
BestFitRuns solve_best_fit_runs(const OffsetProblem& p, const Progress& progress);
// The same runs on a caller's placer and seed (seed_solution(p)), so that a caller that goes on
// placing (multi-order) builds the overlap index once, on up to `threads` threads (the same
// answer for any count: parallel_passes.h), with the orders of the caller's cache. Every run
// gives up once its plan reaches limit (placement::reaches): spatial, best or both are then
// empty, and a plan below limit is the one the runs without a limit give. Checks nothing: the
// caller has.
BestFitRuns run_best_fit(const OffsetProblem& p, placement::GapPlacer& placer,
                         const placement::Seed& seed, placement::OrderCache& orders,
                         const Progress& progress, unsigned threads,
                         uint64_t limit = placement::kNoLimit);

// best-fit's orders, in tie-break order: spatial, temporal, area.
using OrderFn = placement::OrderFn;
std::span<const OrderFn> best_fit_orders();

} // namespace tmmu
