#include "plan/strategies/auto_strategy.h"

#include "plan/strategies/ffd.h"
#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/parallel_passes.h"
#include "plan/strategies/slots.h"

#include <algorithm>
#include <exception>
#include <future>
#include <optional>

namespace tmmu {

using Clock = std::chrono::steady_clock;

namespace {

bool all_live_at_once(const OffsetProblem& p) {
    uint64_t last_begin = 0;
    uint64_t first_end = UINT64_MAX;
    for (const Buffer& b : p.buffers) {
        last_begin = std::max(last_begin, b.begin);
        first_end = std::min(first_end, b.end);
    }
    return last_begin < first_end;
}

} // namespace

OffsetSolution AutoStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    check_offset_problem(p, "strategy auto");
    // Candidates in tie-break order: slots, ffd, greedy-size, best-fit, multi-order, then the
    // framework planners, so auto is never above any of them. greedy-size's solution is
    // best-fit's spatial run (same order, same gap rule), and multi-order starts with best-fit's
    // runs, so each order is placed once. ffd and the framework planners run last, each only
    // as far as it could still win: a plan at or above the height to beat gives up once it gets
    // there (ffd's regions and every framework plan only grow as they are built). ffd comes
    // before greedy-size in the tie-break order, so it wins a tie with them: it must end below
    // slots and at most at their height. A plan at the lower bound ends the search: no later
    // candidate can be strictly lower, so stopping changes no result (but ffd, which wins ties
    // with the plans placed before it runs, still runs after them).
    // The tighter bound only ends the search sooner: a plan there is still one no other can beat.
    const uint64_t bound = aligned_lower_bound_bytes(p);
    placement::OrderCache orders(p); // the candidates' orders, each made once
    OffsetSolution best;
    auto consider = [&best](OffsetSolution s) {
        if (best.producer.empty() || s.height < best.height) best = std::move(s);
    };
    auto step = [&](double done, std::string_view what) {
        progress.check_cancel("strategy auto");
        if (!best.producer.empty() && best.height <= bound) return true;
        progress.report(done, what);
        return false;
    };
    auto run = [&] {
        if (step(0.0, "auto: slots")) return;
        // Above placement::kParallelMinBuffers, with more than one thread, slots (a scan on one
        // thread: 0.3 s at a million buffers) runs on a helper beside multi-order. Its plan
        // still comes first, and so does its failure when both fail: the result is the one of
        // running slots first (multi-order's work is wasted only where slots is at the bound).
        // Where every buffer is live at once (parameters are), slots places them end to end,
        // usually at the aligned bound: it runs first, alone, so that nothing else is placed.
        const bool aside = placement::planner_threads_for(p) > 1 && !all_live_at_once(p);
        std::future<OffsetSolution> slots_plan =
            std::async(aside ? std::launch::async : std::launch::deferred,
                       [&] { return SlotsStrategy().solve(p, progress); });
        std::optional<MultiOrderRuns> beside;
        std::exception_ptr failure;
        const MultiOrderOptions options{.orders = &orders, .later_orders = framework_orders()};
        if (aside) {
            progress.report(0.1, "auto: slots, greedy-size, best-fit, multi-order");
            try {
                beside = solve_multi_order_runs(p, progress, options);
            } catch (...) {
                failure = std::current_exception();
            }
        }
        consider(slots_plan.get());
        const uint64_t slots = best.height;
        if (step(0.1, "auto: greedy-size, best-fit, multi-order")) return;
        if (failure) std::rethrow_exception(failure);
        MultiOrderRuns runs =
            beside ? std::move(*beside) : solve_multi_order_runs(p, progress, options);
        // The first lowest of greedy-size, best-fit and multi-order (the first two are missing
        // only where above multi-order's plan).
        std::optional<OffsetSolution> multi_order = std::move(runs.best);
        OffsetSolution placed;
        for (std::optional<OffsetSolution>* s :
             {&runs.best_fit.spatial, &runs.best_fit.best, &multi_order})
            if (*s && (placed.producer.empty() || (*s)->height < placed.height))
                placed = std::move(**s);
        // No early stop here: ffd wins a tie, even at the bound.
        progress.report(0.7, "auto: ffd");
        const uint64_t tie = std::max(placed.height, placed.height + 1); // saturates
        if (auto ffd = FfdStrategy().solve_below(p, std::min(slots, tie), progress))
            consider(std::move(*ffd)); // below slots, at most `placed`: it wins
        consider(std::move(placed));
        if (step(0.8, "auto: framework planners")) return;
        // Only a framework plan strictly below the best so far could win.
        if (auto framework = lowest_framework_plan(p, progress, runs.placed, best.height,
                                                   Clock::time_point::max(), &orders))
            consider(std::move(*framework));
    };
    run();
    progress.report(1.0, "auto: done");
    return best;
}

} // namespace tmmu
