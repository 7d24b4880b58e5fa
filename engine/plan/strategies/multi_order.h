#pragma once
// "multi-order": best-fit's three runs; then probes that place the buffers live at the peak of
// the live bytes first and end the search when one reaches the lower bound; then more buffer
// orders (size with first fit, size then end, lifetime begin as an online allocator sees
// buffers, conflict count, ...) under both gap rules, then a squeaky-wheel search from the
// lowest plan found: the buffers that reach the top of the current plan move earlier in its
// order, the new order is placed again, and the lowest plan seen is kept; on problems of more
// than 2,048 buffers, "big first": the largest few percent of the buffers searched alone in the
// same way, the others placed around them; last, size orders whose equal sizes go in input
// order or by birth. Every step is deterministic, and the effort is bounded by budgets of
// placement work (spans read, counted, never timed), so the same problem always gives the same
// offsets. Above 2,048 buffers, passes that compete run side by side (best-fit's runs, the
// big-first shares, the tie-breaks; parallel_passes.h), with the same offsets for any number
// of threads; on large problems the shares go first, with the same offsets again
// (solve_multi_order_runs). Never higher than best-fit, whose runs are its first candidates.
#include "plan/strategies/best_fit.h"
#include "plan/strategy.h"

#include <chrono>
#include <cstdint>
#include <span>

namespace tmmu {

class MultiOrderStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "multi-order"; }
    std::string_view description() const override {
        return "peak-first probes, many buffer orders and both gap rules, peak-driven "
               "reordering, largest buffers first";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

// Every answer of one multi-order run: best-fit's runs (hence greedy-size's), computed on the
// way, and multi-order's own best. Lets "auto" place each order once.
struct MultiOrderRuns {
    // Both of its plans are there unless shares_first: then each is there only where it is at
    // most `best`'s height (a higher one could not be the lowest plan).
    BestFitRuns best_fit;
    OffsetSolution best; // producer "multi-order"
    // Every candidate pass placed, each once (the reordering's passes are not listed): a later
    // pass equal to one of these cannot end below `best`, so callers may skip it.
    std::vector<placement::PlacedOrder> placed;
    // When the big-first stage gave `best` and the caller asked for it: the lowest plan of the
    // other stages, a different start for a search that improves on it (empty offsets
    // otherwise).
    OffsetSolution without_big_first;
    // Whether the big-first stage's shares were placed before everything else, so that the
    // other passes give up early (large problems; see solve_multi_order_runs).
    bool shares_first = false;
};
// How a caller runs multi-order besides the defaults.
struct MultiOrderOptions {
    // No run starts after it (best-fit's are always made): how "optimal" keeps a time budget
    // while seeding its search.
    std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
    // Whether to keep MultiOrderRuns::without_big_first.
    bool other_start = false;
    // The caller's orders of the problem (else multi-order's own), and the orders the caller
    // will ask it for afterwards: when the shares go first, a helper makes them while the first
    // share is placed (see below).
    placement::OrderCache* orders = nullptr;
    std::span<const placement::OrderFn> later_orders = {};
};
// On large problems, where the budget leaves no work for the reordering (it affords at most
// one pass beyond best-fit's three), and with neither a stop_at nor other_start, the big-first
// shares are placed first, and every other pass gives up once above the lowest share plan: the
// same best plan (the first lowest of a list of passes that does not change), at a fraction of
// the work (at a million buffers most passes give up within a tenth of a whole pass). The first
// share is then placed alone, while a helper makes the orders of every later pass: with no
// plan to give up at, any share placed beside it would run to its end.
MultiOrderRuns solve_multi_order_runs(const OffsetProblem& p, const Progress& progress,
                                      const MultiOrderOptions& options = {});

// The placement work multi-order may spend on a problem of n buffers, in GapPlacer::last_work
// units. Grows linearly with n; a run that would exceed it is not started.
uint64_t multi_order_budget(size_t n);

} // namespace tmmu
