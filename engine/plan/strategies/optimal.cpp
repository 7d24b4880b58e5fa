#include "plan/strategies/optimal.h"

#include "plan/strategies/multi_order.h"
#include "plan/strategies/optimal_search.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace tmmu {

namespace {

using optimal::Component;
using optimal::NodeBudget;
using optimal::Outcome;

constexpr std::string_view kStage = "strategy optimal";
// Components with more items than this are left as multi-order placed them: the search's
// per-node cost and its overlap lists grow with the items.
constexpr size_t kMaxSearchItems = 2000;
constexpr uint64_t kMinAttempt = 4096; // nodes: the least a target is given while nodes remain

uint64_t component_height(const Component& c, const std::vector<uint64_t>& offsets) {
    uint64_t h = 0;
    for (const optimal::Item& it : c.items)
        h = std::max(h, offsets[it.buffer] + it.size);
    return h;
}

// One target for one component: the static orders take turns (minimalloc's round robin), each
// run starting afresh with a node slice that doubles every round, until one run decides the
// target or the attempt's nodes (up to attempt_end) are spent.
Outcome round_robin(const Component& c, uint64_t target, NodeBudget& budget, uint64_t attempt_end,
                    std::vector<uint64_t>& offsets) {
    const uint64_t total_limit = budget.limit;
    Outcome outcome = Outcome::OutOfNodes;
    for (uint64_t slice = std::max<uint64_t>(64, 2 * c.items.size());
         outcome == Outcome::OutOfNodes && !budget.stopped &&
         budget.spent < std::min(attempt_end, total_limit);
         slice *= 2)
        for (size_t order = 0; order < c.ranks.size(); ++order) {
            const uint64_t end = std::min(attempt_end, total_limit);
            if (budget.spent >= end) break;
            budget.limit = std::min(end, budget.spent + slice);
            outcome = optimal::search_component(c, order, target, budget, offsets);
            budget.limit = total_limit;
            if (budget.stopped || outcome != Outcome::OutOfNodes) break;
        }
    return outcome;
}

} // namespace

OptimalResult solve_optimal(const OffsetProblem& p, const OptimalOptions& options,
                            const Progress& progress) {
    check_offset_problem(p, kStage);
    using Clock = std::chrono::steady_clock;
    const Clock::time_point started = Clock::now();
    OptimalResult r;
    OffsetSolution start = solve_multi_order_runs(p, progress).best;
    const placement::Seed seed = placement::seed_solution(p);
    std::vector<uint64_t> offsets = std::move(start.offsets);
    uint64_t best = start.height;
    r.heuristic_height = best;
    r.lower_bound = lower_bound_bytes(p);
    const bool pinned = seed.pinned_top > 0;
    // Every plan is at least the bound and at least the pins' top; lo stays a proven bound
    // while proof is true.
    uint64_t lo = std::max(r.lower_bound, seed.pinned_top);
    bool proof = true;
    std::vector<Component> comps =
        best > lo ? optimal::split_components(p) : std::vector<Component>{};
    const bool timed = options.time_budget_ms > 0;
    const auto deadline = started + std::chrono::milliseconds(options.time_budget_ms);
    auto attempt_deadline = deadline; // timed: the current target's share of the time
    NodeBudget budget;
    budget.limit = timed ? UINT64_MAX : options.node_budget;
    budget.poll = [&] {
        const double done =
            timed ? std::chrono::duration<double, std::milli>(Clock::now() - started).count() /
                        double(options.time_budget_ms)
                  : double(budget.spent) / double(std::max<uint64_t>(budget.limit, 1));
        progress.report(std::min(done, 1.0), "optimal: search");
        return progress.cancelled() || (timed && Clock::now() >= attempt_deadline);
    };
    // The arena's capacity first when the heuristic misses it (the decision the caller
    // needs), else the bound (which many problems reach, and which prunes hardest); then
    // bisection: target in [lo, best).
    bool first = true;
    while (best > lo && budget.spent < budget.limit && !budget.stopped) {
        const uint64_t target = first && p.capacity < best && p.capacity >= lo ? p.capacity
                                : first                                        ? lo
                                        : lo + (best - 1 - lo) / 2;
        const bool first_target = std::exchange(first, false);
        const uint64_t left = budget.limit - budget.spent;
        // The first target gets half the nodes (when the bound is reachable it is usually
        // found well within them), each later one a third of what is left.
        const uint64_t attempt_end = budget.spent + std::max(first_target ? left / 2 : left / 3,
                                                             std::min(left, kMinAttempt));
        if (timed) {
            const auto now = Clock::now();
            attempt_deadline = now + (deadline - now) / (first_target ? 2 : 3);
        }
        Outcome outcome = Outcome::Found;
        for (Component& c : comps) {
            if (component_height(c, offsets) <= target) continue;
            if (c.items.size() > kMaxSearchItems) {
                outcome = Outcome::OutOfNodes;
                break;
            }
            optimal::prepare_component(p, c);
            outcome = round_robin(c, target, budget, attempt_end, offsets);
            if (outcome != Outcome::Found) break;
        }
        // Timed: a target whose share of the time ran out stops the search only at the end.
        if (timed && budget.stopped && !progress.cancelled() && Clock::now() < deadline)
            budget.stopped = false;
        if (outcome == Outcome::Found) {
            best = std::max(seed.pinned_top, solution_height(p, offsets));
        } else {
            // Exhausted: no canonical plan fits under target, which proves it without pins
            // (pins make the search incomplete); out of nodes: give this target up unproven.
            proof = proof && outcome == Outcome::Exhausted && !pinned;
            lo = target + 1;
        }
    }
    r.nodes = budget.spent;
    r.proven = best == std::max(r.lower_bound, seed.pinned_top) || (proof && best <= lo);
    r.solution = placement::finish(p, std::move(offsets),
                                   r.proven ? "optimal (proven)" : "optimal (budget)");
    return r;
}

OffsetSolution OptimalStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_optimal(p, options_, progress).solution;
}

} // namespace tmmu
