#pragma once
// "optimal": multi-order's plan, then an exact branch-and-bound in the style of minimalloc
// (Moffitt, ASPLOS 2023; our own code) that searches for lower plans. Buffers are placed in
// non-decreasing offset order, each at its canonical offset (the aligned top of the highest
// buffer already placed under its lifetime, or 0), which reaches every plan that cannot be
// lowered buffer by buffer. A node is pruned when a time section cannot hold the sizes still to
// be placed there under the target height. Time-disjoint groups of buffers are searched apart;
// several buffer orderings take turns with growing node slices. The target height is found by
// bisection between the lower bound and the best plan.
//
// The effort is a node budget, never time, so the same problem and budget give the same
// offsets. Never higher than multi-order (hence never higher than auto). The producer says
// "optimal (proven)" when the height is proven minimal (it equals the lower bound, or the search
// exhausted the next lower target without pinned buffers), "optimal (budget)" otherwise.
// Cancellation during the search returns the best plan found so far; cancellation during the
// multi-order phase throws Failure(Cancelled) like every strategy.
#include "plan/strategy.h"

#include <cstdint>

namespace tmmu {

inline constexpr uint64_t kDefaultOptimalBudget = 1'000; // search nodes: a light search

struct OptimalOptions {
    uint64_t node_budget = kDefaultOptimalBudget; // search nodes over all targets; 0: none
};

// What one run did, for benchmarks and tests.
struct OptimalResult {
    OffsetSolution solution; // producer "optimal (proven)" or "optimal (budget)"
    bool proven = false;     // solution.height is the minimum
    uint64_t lower_bound = 0;
    uint64_t heuristic_height = 0; // multi-order's height, where the search started
    uint64_t nodes = 0;            // search nodes spent (<= node_budget)
};
OptimalResult solve_optimal(const OffsetProblem& p, const OptimalOptions& options,
                            const Progress& progress);

class OptimalStrategy final : public OffsetStrategy {
  public:
    explicit OptimalStrategy(OptimalOptions options = {}) : options_(options) {}
    std::string_view name() const override { return "optimal"; }
    std::string_view description() const override {
        return "multi-order, then branch-and-bound over canonical placements (node budget)";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;

  private:
    OptimalOptions options_;
};

} // namespace tmmu
