#include "plan/strategies/optimal.h"

#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/optimal_improve.h"
#include "plan/strategies/optimal_search.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <chrono>
#include <functional>
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
// Nodes of the improvement search (optimal_improve.h) for those larger components: at most this,
// and at most half of the node budget (every phase counts against it).
constexpr uint64_t kImproveNodes = 100'000;
constexpr uint64_t kMinAttempt = 4096; // nodes: the least a target is given while nodes remain
constexpr uint64_t kBoundShare = 2;    // the first try at the bound gets half of the nodes
constexpr uint64_t kTargetCap = 16;    // any other target: at most 1/16 of the node budget
constexpr uint64_t kStep = 32;         // descending targets: best - best / kStep
constexpr uint64_t kTinyGap = 1024;    // stop when best - lo <= best / kTinyGap
// The bound's attempts also stop after kWorkPerNode work units (NodeBudget::work) per node of
// their share: where nodes are expensive (dense instances: ~24,000 units each, against 400-3,000
// where the bound was reached) the bound is mostly unreachable, and its nodes are better spent
// on the descent. The improvement search stops after as many units per node of its own: its
// nodes cost 600-5,000 units on the random problems shaped like real graphs, and 125,000 on
// dense ones, where an unlimited run took seconds on 5,000 buffers.
constexpr uint64_t kWorkPerNode = 2048;

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
         budget.spent < std::min(attempt_end, total_limit) && budget.work < budget.work_limit;
         slice *= 2)
        for (size_t order = 0; order < c.ranks.size(); ++order) {
            const uint64_t end = std::min(attempt_end, total_limit);
            if (budget.spent >= end || budget.work >= budget.work_limit) break;
            budget.limit = std::min(end, budget.spent + slice);
            outcome = optimal::search_component(c, order, target, budget, offsets);
            budget.limit = total_limit;
            if (budget.stopped || outcome != Outcome::OutOfNodes) break;
        }
    return outcome;
}

// Runs the improvement search on every component too large for the exact one whose top is above
// floor, with `nodes` of the budget, and kWorkPerNode work units per node, shared by them;
// returns the plan's new height.
uint64_t improve_large(const OffsetProblem& p, const std::vector<Component>& comps, uint64_t floor,
                       uint64_t nodes, NodeBudget& budget, std::vector<uint64_t>& offsets) {
    const uint64_t total_limit = budget.limit, total_work_limit = budget.work_limit;
    budget.limit = budget.spent + std::min(nodes, total_limit - budget.spent);
    if (nodes <= (total_work_limit - std::min(total_work_limit, budget.work)) / kWorkPerNode)
        budget.work_limit = budget.work + nodes * kWorkPerNode;
    for (const Component& c : comps) {
        if (budget.stopped) break;
        if (c.items.size() <= kMaxSearchItems || component_height(c, offsets) <= floor) continue;
        std::vector<uint32_t> members;
        for (const optimal::Item& it : c.items)
            members.push_back(it.buffer);
        optimal::improve_group(p, members, floor, budget, offsets);
    }
    budget.limit = total_limit;
    budget.work_limit = total_work_limit;
    return solution_height(p, offsets);
}

} // namespace

OptimalResult solve_optimal(const OffsetProblem& p, const OptimalOptions& options,
                            const Progress& progress) {
    check_offset_problem(p, kStage);
    using Clock = std::chrono::steady_clock;
    const Clock::time_point started = Clock::now();
    OptimalResult r;
    const bool timed = options.time_budget_ms > 0;
    const auto deadline =
        started + std::chrono::milliseconds(std::min(options.time_budget_ms, kMaxTimeBudgetMs));
    placement::OrderCache orders(p);
    const Clock::time_point stop_at = timed ? deadline : Clock::time_point::max();
    MultiOrderRuns runs = solve_multi_order_runs(
        p, progress, {.stop_at = stop_at, .other_start = true, .orders = &orders});
    OffsetSolution start = std::move(runs.best);
    // From the framework planners' plan where it is lower: never above `auto`.
    if (auto framework =
            lowest_framework_plan(p, progress, runs.placed, start.height, stop_at, &orders))
        start = std::move(*framework);
    const placement::Seed seed = placement::seed_solution(p);
    std::vector<uint64_t> offsets = std::move(start.offsets);
    uint64_t best = start.height;
    r.heuristic_height = best;
    r.lower_bound = lower_bound_bytes(p);
    const bool pinned = seed.pinned_top > 0;
    // Every plan is at least the bound and at least the pins' top; lo stays a proven bound
    // while proof is true. The aligned bound (offsets are multiples of the smallest alignment,
    // so all but the topmost of the buffers live together pay their padding) is tighter: a plan
    // there is proven and ends the search (a parameter arena of odd sizes, which ran out the
    // budget before). The targets stay between lo and the best plan: from the aligned bound
    // they differ, and the search found higher plans on some problems.
    uint64_t lo = std::max(r.lower_bound, seed.pinned_top);
    const uint64_t least = std::max(aligned_lower_bound_bytes(p), lo);
    bool proof = true;
    std::vector<Component> comps =
        best > least ? optimal::split_components(p) : std::vector<Component>{};
    auto attempt_deadline = deadline; // timed: the current target's share of the time
    NodeBudget budget;
    budget.limit = timed ? UINT64_MAX : options.node_budget;
    budget.poll = [&] {
        const double done =
            timed ? std::chrono::duration<double, std::milli>(Clock::now() - started).count() /
                        double(options.time_budget_ms)
                  // the whole budget: improve_large lowers budget.limit for a while
                  : double(budget.spent) / double(std::max<uint64_t>(options.node_budget, 1));
        progress.report(std::min(done, 1.0), "optimal: search");
        return progress.cancelled() || (timed && Clock::now() >= attempt_deadline);
    };
    // Components too large for the exact search are improved first, with up to half of the
    // nodes (a time budget: half of the time); the targets below then lower the others down
    // to them.
    if (options.node_budget > 0 || timed) {
        if (timed) attempt_deadline = started + (deadline - started) / 2;
        const uint64_t nodes = timed ? kImproveNodes : std::min(kImproveNodes, budget.limit / 2);
        best = std::max(seed.pinned_top, improve_large(p, comps, lo, nodes, budget, offsets));
        // Where multi-order's big-first stage gave the start, the improvement also runs from
        // the plan of its other stages: it lowers one start further than the other, and which
        // one varies (on the random problems: big-first's at 10,000 buffers, the other at
        // 100,000, where it reaches the bound).
        if (!runs.without_big_first.offsets.empty() && !budget.stopped) {
            std::vector<uint64_t> other = std::move(runs.without_big_first.offsets);
            const uint64_t more = std::min(nodes, (budget.limit - budget.spent) / 2);
            const uint64_t height =
                std::max(seed.pinned_top, improve_large(p, comps, lo, more, budget, other));
            if (height < best) {
                best = height;
                offsets = std::move(other);
            }
        }
        if (timed && !progress.cancelled() && Clock::now() < deadline) budget.stopped = false;
    }
    // Schedule (deterministic for a node budget): the arena's capacity first when the heuristic
    // misses it (the decision the caller needs), else the bound with half of the nodes (a
    // reachable bound is usually found well within them, and it prunes hardest). Then targets
    // descend kStep below the best plan (found ones are cheap) until one fails, then bisection
    // in [lo, best); each gets at most 1/kTargetCap of a node budget, since a target below the
    // optimum is rarely refuted. The bound is retried when the descent reaches it. Once a
    // target was given up unproven, the search stops when the gap is below best / kTinyGap.
    bool first = true, descending = true, bound_failed = false;
    const uint64_t bound = lo;
    const auto out_of_time = [&] { return timed && Clock::now() >= deadline; };
    while (best > lo && best > least && budget.spent < budget.limit && !budget.stopped &&
           !out_of_time()) {
        const bool capacity_first = first && p.capacity < best && p.capacity >= lo;
        if (!proof && best - lo <= best / kTinyGap) break;
        const uint64_t target = capacity_first ? p.capacity
                                : first        ? lo
                                : descending
                                    ? std::max(lo, best - std::max<uint64_t>(1, best / kStep))
                                    : lo + (best - 1 - lo) / 2;
        const bool first_target = std::exchange(first, false);
        const uint64_t left = budget.limit - budget.spent;
        const uint64_t share_div = capacity_first    ? 2
                                   : first_target    ? kBoundShare
                                   : target == bound ? 2
                                                     : 3;
        uint64_t share = left / share_div;
        if (!timed && target != bound) share = std::min(share, options.node_budget / kTargetCap);
        const uint64_t attempt_end = budget.spent + std::max(share, std::min(left, kMinAttempt));
        const uint64_t nodes = attempt_end - budget.spent;
        budget.work_limit =
            timed || target != bound || nodes > (UINT64_MAX - budget.work) / kWorkPerNode
                ? UINT64_MAX
                : budget.work + nodes * kWorkPerNode;
        if (timed) { // signed: time may pass the deadline just before this
            const auto now = Clock::now();
            attempt_deadline = now + (deadline - now) / static_cast<int64_t>(share_div);
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
        budget.work_limit = UINT64_MAX;
        // Timed: a target whose share of the time ran out stops the search only at the end.
        if (timed && budget.stopped && !progress.cancelled() && Clock::now() < deadline)
            budget.stopped = false;
        if (outcome == Outcome::Found) {
            best = std::max(seed.pinned_top, solution_height(p, offsets));
        } else {
            // Exhausted: no canonical plan fits under target, which proves it without pins
            // (pins make the search incomplete); out of nodes: give this target up unproven.
            if (target == bound && outcome == Outcome::OutOfNodes && !bound_failed) {
                bound_failed = true; // retried when the descent reaches it
            } else {
                proof = proof && outcome == Outcome::Exhausted && !pinned;
                lo = target + 1;
            }
            if (target != bound || lo > bound) descending = false;
        }
    }
    r.nodes = budget.spent;
    r.proven = best == least || (proof && best <= lo);
    r.solution = placement::finish(p, std::move(offsets),
                                   r.proven ? "optimal (proven)" : "optimal (budget)");
    return r;
}

OffsetSolution OptimalStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_optimal(p, options_, progress).solution;
}

} // namespace tmmu
