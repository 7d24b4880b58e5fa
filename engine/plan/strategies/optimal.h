#pragma once
// "optimal": multi-order's plan, then an exact decision search in the style of minimalloc
// (Moffitt, ASPLOS 2023; our own code, optimal_search.h: canonical placements, section
// inference, dominance, symmetry, dynamic decomposition with re-ranked parts) run for a
// sequence of target heights: the arena's capacity first when the heuristic misses it, else the
// lower bound (half the budget), then bisection between the highest failed target and the best
// plan (a third of what is left each). Three static buffer orders take turns with node slices
// that double every round. Time-disjoint groups of buffers are searched apart; groups of more
// than 2,000 buffers are too large for it and get a windowed improvement search first instead
// (optimal_improve.h: the peak's buffers re-solved exactly around the others, 100,000 nodes of
// its own, so the default budget also helps them), from multi-order's plan and, where its
// big-first stage gave that plan, also from the plan of its other stages.
//
// The effort is a node budget by default, so the same problem and budget give the same
// offsets; a time budget (time_budget_ms) is offered too and is not reproducible. Never higher
// than multi-order (hence never higher than auto). The producer says "optimal (proven)" when the
// height is proven minimal (it equals the lower bound, or the search exhausted the next lower
// target without pinned buffers), "optimal (budget)" otherwise. Cancellation during the search
// returns the best plan found so far; cancellation during the multi-order phase throws
// Failure(Cancelled) like every strategy. Progress is reported as "optimal: search".
#include "plan/strategy.h"

#include <cstdint>

namespace tmmu {

// Search nodes of "optimal" without --budget (command line and studio alike): enough for the
// minimalloc suite A-K to reach its targets (about 7 s for all eleven on one core), and the
// search stops early wherever it proves a height minimal. Tests that need speed pass their own.
inline constexpr uint64_t kDefaultOptimalBudget = 400'000;
// The budget `tmmu bench` gives optimal on the instances, and the one the suite's heights are
// tested at (tests/engine/test_optimal.cpp): the default.
inline constexpr uint64_t kBenchOptimalBudget = kDefaultOptimalBudget;

// A day: longer time budgets are treated as this one. The cap keeps the deadline (now + budget)
// from overflowing steady_clock into the past, which once stopped the search at once.
inline constexpr uint64_t kMaxTimeBudgetMs = 24ull * 60 * 60 * 1000;

struct OptimalOptions {
    uint64_t node_budget = kDefaultOptimalBudget; // search nodes over all targets; 0: none
    // When > 0: search for this many milliseconds instead (node_budget is then ignored). Not
    // reproducible: how far the search gets depends on the machine and its load.
    uint64_t time_budget_ms = 0; // capped at kMaxTimeBudgetMs
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
