#include "plan/strategies/multi_order.h"

#include "plan/strategies/parallel_passes.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <future>
#include <mutex>
#include <optional>
#include <utility>

namespace tmmu {

namespace {

using placement::GapRule;

constexpr std::string_view kStage = "strategy multi-order";

// Tried after best-fit's three orders, most useful first (on the published real and synthetic
// instances): when the budget runs short, the later ones are skipped.
struct Candidate {
    OrderFn order;
    GapRule rule;
};
constexpr Candidate kCandidates[] = {
    {placement::order_by_size, GapRule::First},
    {placement::order_by_size_end, GapRule::First},
    {placement::order_by_begin, GapRule::Best},
    {placement::order_by_area, GapRule::First},
    {placement::order_by_size_begin, GapRule::Best},
    {placement::order_by_length, GapRule::First},
    {placement::order_by_begin, GapRule::First},
    {placement::order_by_conflicts, GapRule::Best},
    {placement::order_by_conflicts, GapRule::First},
    {placement::order_by_conflict_bytes, GapRule::Best},
    {placement::order_by_conflict_bytes, GapRule::First},
    {placement::order_by_begin_end, GapRule::Best},
};

// Equal sizes broken by input order rather than lifetime (order_by_size's) or birth
// (order_by_size_begin's, here with first fit too): on graphs with many equal sizes the
// tie-break alone can decide a few percent of the height. Placed after the reordering and the
// big-first stage, whatever the budget (each once; an order already tried is skipped), so they
// only ever lower the plan those reach.
constexpr Candidate kTieBreaks[] = {
    {placement::order_by_size_index, GapRule::First},
    {placement::order_by_size_index, GapRule::Best},
    {placement::order_by_size_begin, GapRule::First},
};

// Squeaky-wheel schedule. Each step picks the buffers whose top reaches a threshold and moves
// them earlier in the order by 1/kStepDivisor of its length (plus one). Thresholds cycle: the peak
// itself, halfway between the lower bound and the peak, the peak, just above the lower bound.
enum class Blame { Peak, Half, AboveBound };
constexpr Blame kSchedule[] = {Blame::Peak, Blame::Half, Blame::Peak, Blame::AboveBound};
constexpr size_t kStepDivisor = 20;
constexpr size_t kMaxSteps = 60; // reorderings at most
constexpr size_t kPatience = 16; // reorderings in a row without a lower plan end the search

// Budget: kBudgetPerBuffer units per buffer, plus a share that grows as n^2 (the scan's cost
// per run) up to kQuadraticBudgetCap, so that small problems get a few dozen runs and large
// ones a run or two beyond best-fit's three. About 1 ns per unit: see GapPlacer::last_work.
constexpr uint64_t kBudgetPerBuffer = 3'500;
constexpr uint64_t kQuadraticBudget = 10;
constexpr uint64_t kQuadraticBudgetCap = 24'000'000;

// Big first, on problems of more than kBigFirstMin buffers: the n / share largest buffers
// searched alone, for each share, as a problem of their own (with the pins): it is small, so its
// own budget buys many runs and squeaky-wheel steps, which a whole problem of that size cannot
// afford. Every other buffer is then placed around that plan, in size order with first fit.
// The largest buffers set most of the height, and on large problems the small ones fill the
// gaps left between them; which share gives the lowest plan varies from problem to problem,
// hence several. Below kBigFirstMin the whole problem gets dozens of runs already. The
// stage's work is deterministic: the shares' searches have budgets (big_first_budget) summing
// to three or four times the whole problem's up to 100,000 buffers (about equal at a million,
// where their cap holds), on runs that read only the largest buffers, and each share adds one
// placement pass at most. Measured: multi-order takes twice as long at 10,000 and 100,000
// buffers, a third longer at a million.
constexpr size_t kBigFirstMin = 2048;
constexpr size_t kBigFirstShares[] = {64, 48, 32, 24, 16, 12, 8, 6};

// Orders that often reach the lower bound where every size order and framework planner misses it:
// the buffers live at a peak of the live bytes first (orders.h). Measured on the random problems
// shaped like real graphs, 40 seeds each: the first reaches the bound on 14 of 40 at 500 buffers
// (the size order with first fit on 11), the three together on 19; at 2,000 buffers 18 and 22
// (size order: 8). Where they miss, they are far worse than the size order, so they only probe.
// A probe that misses gives up once above the bound, which the first does early: 4-6 ms on the
// dense problems of 20,000 and 100,000 buffers, 64 ms at a million; the other two place long
// buffers first and get further (65-85 ms dense, 150-280 ms at a million), so they run only on
// problems of up to kBigFirstMin buffers, where the search's dozens of runs dwarf them.
struct Probe {
    OrderFn order;
    GapRule rule;
    size_t max_buffers;
};
constexpr Probe kProbes[] = {
    {placement::order_peak_first, GapRule::First, SIZE_MAX},
    {placement::order_peak_first_by_length, GapRule::First, kBigFirstMin},
    {placement::order_peak_first_by_length, GapRule::Best, kBigFirstMin},
};

// Each share's search gets three times multi-order's budget for its size, but at most
// kBigFirstExtraCap units more: the extra runs lower the random problems shaped like real
// graphs, at 10,000 to 100,000 buffers, by a further 0.7-1.4% of the bound (to the bound at
// 10,000), and buy nothing at a million, where the cap keeps their cost down (measured).
constexpr uint64_t kBigFirstBudgetScale = 3;
constexpr uint64_t kBigFirstExtraCap = 200'000'000;

// On large problems the shares go first (solve_multi_order_runs): where the budget is below
// kSharesFirstRuns whole passes. Every pass is charged as a whole one, given up or not
// (GapPlacer::last_work), so after best-fit's three runs one candidate at most is placed and
// the reordering, the one stage whose passes start from the plans found before it, never runs.
// multi-order's best plan is then the first lowest of a list of passes that does not depend on
// what they find (best-fit's runs, the probe, a candidate, the shares, the tie-breaks): it is the
// same whatever order they are placed in, and a pass that ends above the lowest share plan
// cannot be it, so each may give up there. Measured at a million buffers (random, shaped like
// real graphs): best-fit's runs then give up after 0.04-0.24 s instead of 1.2-1.3 s each, the
// candidate after 0.08 s instead of 1.1 s.
constexpr uint64_t kSharesFirstRuns = 5;

uint64_t big_first_budget(size_t n) {
    const uint64_t own = multi_order_budget(n);
    return own + std::min((kBigFirstBudgetScale - 1) * own, kBigFirstExtraCap);
}

// One placed order.
struct Plan {
    std::vector<uint32_t> order;
    GapRule rule = GapRule::Best;
    std::vector<uint64_t> offsets;
    uint64_t height = 0;
};

class Search {
  public:
    // budget: placement work units; big_first: whether the big-first stage may run
    // (not within itself).
    Search(const OffsetProblem& p, const Progress& progress, const MultiOrderOptions& options,
           uint64_t budget, bool big_first)
        : p_(p), progress_(progress), placer_(p), seed_(placement::seed_solution(p)),
          bound_(lower_bound_bytes(p)), budget_(budget), stop_at_(options.stop_at),
          top_level_(big_first), big_first_(big_first && p.buffers.size() > kBigFirstMin),
          threads_(top_level_ ? placement::planner_threads_for(p) : 1),
          other_start_(options.other_start),
          shares_first_(big_first_ && !other_start_ &&
                        stop_at_ == std::chrono::steady_clock::time_point::max() &&
                        budget_ / kSharesFirstRuns < placer_.whole_run_work(seed_)),
          orders_(options.orders ? *options.orders : own_orders_.emplace(p)),
          later_orders_(options.later_orders) {}
    ~Search() {
        stop_largest_first_ = true;
        if (largest_first_.valid()) largest_first_.wait();
    }
    Search(const Search&) = delete;
    Search& operator=(const Search&) = delete;

    MultiOrderRuns run() {
        MultiOrderRuns runs;
        runs.shares_first = shares_first_;
        if (shares_first_) place_shares_first();
        runs.best_fit = run_best_fit(p_, placer_, seed_, orders_, progress_, threads_, limit());
        // Each run is charged as a whole one, whichever thread placed it; placer_ placed one
        // of them at least (run_passes_in_order), so its last_work() is a whole run's too.
        spent_ = 3 * placer_.whole_run_work(seed_);
        for (std::vector<uint32_t>& order : runs.best_fit.orders)
            tried_.push_back({std::move(order), GapRule::Best});
        runs.best_fit.orders.clear();
        if (runs.best_fit.best)
            best_ = {tried_[runs.best_fit.best_order].order, GapRule::Best,
                     runs.best_fit.best->offsets, runs.best_fit.best->height};
        if (!shares_first_) start_largest_first();
        if (top_level_) probe_peak_first(); // in the big-first stage it lowers nothing measured
        for (const Candidate& c : kCandidates) {
            if (done()) break;
            std::vector<uint32_t> order = orders_(c.order);
            if (tried(order, c.rule)) continue; // same order, same rule: the same plan
            tried_.push_back({order, c.rule});
            place_if_lower(std::move(order), c.rule);
        }
        reorder();
        if (big_first_) runs.without_big_first = big_first();
        place_tie_breaks();
        runs.placed = std::move(tried_);
        runs.best = placement::finish(p_, std::move(best_.offsets), "multi-order");
        return runs;
    }

  private:
    // No lower plan exists, or the next run would overspend (runs cost about the same, so the
    // last one predicts the next), or the caller's time is up.
    bool done() const {
        return best_.height <= bound_ || spent_ + placer_.last_work() > budget_ || out_of_time();
    }
    // The height a pass must stay below to matter: the best plan's, and one above the lowest
    // share plan when the shares went first (a pass of that height placed earlier wins the tie).
    uint64_t limit() const {
        const uint64_t above_shares = std::max(lowest_share_, lowest_share_ + 1); // saturates
        return std::min(best_.height, above_shares);
    }
    bool out_of_time() const {
        return stop_at_ != std::chrono::steady_clock::time_point::max() &&
               std::chrono::steady_clock::now() >= stop_at_;
    }

    Plan place(std::vector<uint32_t> order, GapRule rule, size_t kept = 0,
               const std::vector<uint64_t>& previous = {}) {
        Plan plan{std::move(order), rule, {}, 0};
        plan.offsets =
            placer_.place_after(seed_, plan.order, kept, previous, progress_, kStage, rule);
        plan.height = solution_height(p_, plan.offsets);
        spent_ += placer_.last_work();
        return plan;
    }

    // A candidate counts only if strictly lower than the best, so it gives up once it reaches
    // the best height (or limit()); it is charged as a whole run either way
    // (GapPlacer::last_work), so the budget buys the same runs as if every candidate ran to its
    // end.
    void place_if_lower(std::vector<uint32_t> order, GapRule rule) {
        auto offsets = placer_.place_below(seed_, order, limit(), progress_, kStage, rule);
        spent_ += placer_.last_work();
        if (offsets) {
            const uint64_t height = solution_height(p_, *offsets);
            consider({std::move(order), rule, std::move(*offsets), height});
        }
    }

    // kTieBreaks, each order not tried before, side by side (parallel_passes.h: the plan is
    // the one placing them one after another, each only if strictly lower, would keep).
    void place_tie_breaks() {
        if (best_.height <= bound_ || out_of_time()) return;
        const size_t first = tried_.size();
        for (const Candidate& c : kTieBreaks) {
            const std::vector<uint32_t>& order = orders_(c.order);
            if (!tried(order, c.rule)) tried_.push_back({order, c.rule});
        }
        std::vector<std::optional<std::vector<uint64_t>>> plans(tried_.size() - first);
        auto pass = [&](size_t k, auto& placer, uint64_t limit) -> std::optional<uint64_t> {
            if (out_of_time()) return std::nullopt;
            const placement::PlacedOrder& run = tried_[first + k];
            plans[k] = placer().place_below(seed_, run.order, limit, progress_, kStage, run.rule);
            if (!plans[k]) return std::nullopt;
            return solution_height(p_, *plans[k]);
        };
        placement::run_passes_in_order(p_, placer_, plans.size(), limit(), bound_, threads_, pass);
        for (size_t k = 0; k < plans.size() && best_.height > bound_; ++k) {
            if (!plans[k]) continue;
            const uint64_t height = solution_height(p_, *plans[k]);
            const placement::PlacedOrder& run = tried_[first + k];
            consider({run.order, run.rule, std::move(*plans[k]), height});
        }
    }

    // The peak-first probes (kProbes): passes outside the budget that end the search when one
    // reaches the lower bound and give up as soon as their plan rises above it, so that
    // otherwise the search goes on as it would without them.
    void probe_peak_first() {
        for (const Probe& c : kProbes) {
            if (best_.height <= bound_ || out_of_time()) return;
            if (p_.buffers.size() > c.max_buffers) continue;
            std::vector<uint32_t> order = orders_(c.order);
            auto offsets = placer_.place_below(seed_, order, bound_ + 1, progress_, kStage,
                                               c.rule); // bound_ < best_.height: no overflow
            if (!offsets) continue;
            const uint64_t height = solution_height(p_, *offsets);
            consider({std::move(order), c.rule, std::move(*offsets), height});
        }
    }

    // The big-first stage (kBigFirstShares). Returns the best plan before it when the stage
    // found a lower one. The shares run side by side (share_plans); their plans are then taken
    // in share order, each only if strictly lower than the best so far: what running them one
    // after another, each giving up at the best height so far, would keep.
    OffsetSolution big_first() {
        if (best_.height <= bound_ || out_of_time()) return {};
        const uint64_t before_height = best_.height;
        std::vector<uint64_t> before = other_start_ ? best_.offsets : std::vector<uint64_t>{};
        for (std::optional<std::vector<uint64_t>>& offsets :
             shares_first_ ? std::move(first_shares_) : share_plans(best_.height)) {
            if (best_.height <= bound_) break;
            if (!offsets) continue;
            const uint64_t height = solution_height(p_, *offsets);
            consider({{}, GapRule::First, std::move(*offsets), height});
        }
        if (best_.height == before_height || !other_start_) return {};
        return placement::finish(p_, std::move(before), "multi-order");
    }

    // The shares' plans before any other pass (kSharesFirstRuns), kept for the big-first stage;
    // lowest_share_ becomes the lowest of them.
    void place_shares_first() {
        first_shares_ = share_plans(placement::kNoLimit);
        for (const std::optional<std::vector<uint64_t>>& offsets : first_shares_)
            if (offsets) lowest_share_ = std::min(lowest_share_, solution_height(p_, *offsets));
    }

    // Each share's plan (the share's largest buffers searched alone, the others placed around
    // them in size order with first fit), or nothing where it gives up: the shares run side by
    // side (run_passes_in_order), so what big_first keeps of these does not depend on the
    // number of threads. Each gives up once its plan reaches the lowest so far, or `below`.
    std::vector<std::optional<std::vector<uint64_t>>> share_plans(uint64_t below) {
        std::vector<std::optional<std::vector<uint64_t>>> plans(std::size(kBigFirstShares));
        auto share = [&](size_t k, auto& placer, uint64_t limit) -> std::optional<uint64_t> {
            if (out_of_time()) return std::nullopt;
            const Largest& largest = largest_of_share(k, progress_);
            if (!largest.top || placement::reaches(*largest.top, limit)) return std::nullopt;
            plans[k] = placer().place_below(largest.seed, by_size(), limit, progress_, kStage,
                                            GapRule::First);
            if (!plans[k]) return std::nullopt;
            return solution_height(p_, *plans[k]);
        };
        // With no plan yet to give up at, a share placed beside the first would run to its end
        // (a whole pass: 1.3 s at a million buffers, where giving up takes a tenth of that).
        // So when the shares go first, the first is placed alone, while a helper makes the
        // orders the later passes place (about as long, at a million buffers).
        size_t first = 0; // the shares placed before the others run side by side
        if (shares_first_ && threads_ > 1) {
            std::future<void> made = std::async(std::launch::async, [this] {
                for (placement::OrderFn order : later_orders())
                    if (!progress_.cancelled()) orders_(order); // else this thread throws
            });
            auto mine = [this]() -> placement::GapPlacer& { return placer_; };
            const std::optional<uint64_t> height = share(0, mine, below);
            made.get();
            first = 1;
            if (height) below = *height; // the later shares count only strictly below it
            if (height && *height <= bound_) return plans;
        }
        placement::run_passes_in_order(p_, placer_, plans.size() - first, below, bound_, threads_,
                                       [&](size_t k, auto& placer, uint64_t limit) {
                                           return share(first + k, placer, limit);
                                       });
        return plans;
    }

    // The orders the passes after the shares place, in the order they place them, and the
    // caller's (MultiOrderOptions::later_orders).
    std::vector<placement::OrderFn> later_orders() const {
        std::vector<placement::OrderFn> orders(best_fit_orders().begin(), best_fit_orders().end());
        for (const Probe& c : kProbes)
            if (p_.buffers.size() <= c.max_buffers) orders.push_back(c.order);
        orders.push_back(kCandidates[0].order); // the only one the budget affords
        for (const Candidate& c : kTieBreaks)
            orders.push_back(c.order);
        orders.insert(orders.end(), later_orders_.begin(), later_orders_.end());
        return orders;
    }

    // Searches the `count` largest unplaced buffers of by_size as a problem of their own (with
    // every pin) and marks them placed in seed at the offsets found; returns that plan's height,
    // nothing when there are no such buffers.
    std::optional<uint64_t> place_largest(const std::vector<uint32_t>& by_size, size_t count,
                                          placement::Seed& seed, const Progress& progress) const {
        OffsetProblem largest;
        std::vector<uint32_t> chosen;
        for (size_t k = 0; k < by_size.size() && chosen.size() < count; ++k)
            if (!seed.placed[by_size[k]]) chosen.push_back(by_size[k]);
        if (chosen.empty()) return std::nullopt;
        for (uint32_t i : chosen)
            largest.buffers.push_back(p_.buffers[i]);
        for (const Buffer& b : p_.buffers)
            if (b.pinned && b.size > 0) largest.buffers.push_back(b);
        const MultiOrderOptions options{.stop_at = stop_at_};
        const OffsetSolution plan =
            Search(largest, progress, options, big_first_budget(chosen.size()), false).run().best;
        for (size_t k = 0; k < chosen.size(); ++k) {
            seed.offsets[chosen[k]] = plan.offsets[k];
            seed.placed[chosen[k]] = true;
        }
        return plan.height;
    }

    // A share's largest buffers placed alone (place_largest): the seed with them placed, and
    // their plan's height (nothing when there are none).
    struct Largest {
        placement::Seed seed;
        std::optional<uint64_t> top;
    };

    // The big-first stage's searches of each share's largest buffers depend on nothing the rest
    // of the search finds. With more than one thread they start on a helper as soon as
    // best-fit's runs are done, while this thread goes on with the probes, the candidates and
    // the reordering, which run on one thread; the stage then mostly places the other buffers
    // around them. Each is made once, by whichever thread asks first (the others wait), so the
    // plans are the same with or without the helper. The helper polls its own cancel flag,
    // which ~Search raises; a failure on it (the caller's cancellation is not seen there) is
    // left for the thread that asks for that share next, which makes it again.
    void start_largest_first() {
        if (!big_first_ || threads_ < 2 || best_.height <= bound_) return;
        largest_first_ = std::async(std::launch::async, [this] {
            Progress own;
            own.cancel_flag = &stop_largest_first_;
            try {
                for (size_t k = 0; k < std::size(kBigFirstShares) && !stop_largest_first_; ++k)
                    largest_of_share(k, own);
            } catch (...) {
                // left for the stage (see above)
            }
        });
    }

    const std::vector<uint32_t>& by_size() { return orders_(placement::order_by_size); }

    const Largest& largest_of_share(size_t k, const Progress& progress) {
        std::call_once(largest_once_[k], [&] {
            Largest largest{seed_, std::nullopt};
            largest.top = place_largest(by_size(), p_.buffers.size() / kBigFirstShares[k],
                                        largest.seed, progress);
            largest_[k] = std::move(largest);
        });
        return largest_[k];
    }

    // Orders often coincide (sizes all distinct: every size-first order is the same).
    bool tried(const std::vector<uint32_t>& order, GapRule rule) const {
        return placement::already_placed(tried_, order, rule);
    }

    // Keeps plan when strictly lower: ties go to the earlier candidate.
    bool consider(const Plan& plan) {
        if (plan.height >= best_.height) return false;
        best_ = plan;
        return true;
    }

    uint64_t threshold(Blame blame, uint64_t height) const {
        const uint64_t bound = std::min(bound_, height);
        switch (blame) {
        case Blame::Peak:
            return height;
        case Blame::Half:
            return std::min(height, bound + (height - bound) / 2 + 1);
        case Blame::AboveBound:
            return std::min(height, bound + 1);
        }
        return height;
    }

    // The squeaky-wheel search from the best plan. Always continues from the last plan, so
    // that a step that does not lower the peak still changes the next step's blame.
    void reorder() {
        Plan current = best_;
        size_t since_lower = 0;
        for (size_t step = 0; step < kMaxSteps && since_lower < kPatience && !done(); ++step) {
            size_t kept = 0;
            std::vector<uint32_t> order = blamed_first(
                current, threshold(kSchedule[step % std::size(kSchedule)], current.height), kept);
            if (kept == order.size()) return; // nothing to move: the next steps would repeat
            current = place(std::move(order), current.rule, kept, current.offsets);
            since_lower = consider(current) ? 0 : since_lower + 1;
        }
    }

    // current's order with every buffer whose top reaches limit moved earlier by a fixed
    // distance (stable among the moved and the others); kept receives the length of the
    // prefix that did not change.
    std::vector<uint32_t> blamed_first(const Plan& current, uint64_t limit, size_t& kept) const {
        const std::vector<uint32_t>& order = current.order;
        const size_t distance = order.size() / kStepDivisor + 1;
        // Merge two lists sorted by target position: blamed buffers at max(k - distance, 0),
        // the others where they were; a blamed buffer goes before an unblamed one at the same
        // position.
        std::vector<uint32_t> moved, rest;
        std::vector<size_t> moved_to, rest_at;
        for (size_t k = 0; k < order.size(); ++k) {
            const uint32_t i = order[k];
            if (!seed_.placed[i] && current.offsets[i] + p_.buffers[i].size >= limit) {
                moved.push_back(i);
                moved_to.push_back(k > distance ? k - distance : 0);
            } else {
                rest.push_back(i);
                rest_at.push_back(k);
            }
        }
        std::vector<uint32_t> result;
        result.reserve(order.size());
        size_t m = 0;
        for (size_t r = 0; r < rest.size(); ++r) {
            while (m < moved.size() && moved_to[m] <= rest_at[r])
                result.push_back(moved[m++]);
            result.push_back(rest[r]);
        }
        result.insert(result.end(), moved.begin() + m, moved.end());
        kept = 0;
        while (kept < order.size() && order[kept] == result[kept])
            ++kept;
        return result;
    }

    const OffsetProblem& p_;
    const Progress& progress_;
    placement::GapPlacer placer_;
    const placement::Seed seed_;
    const uint64_t bound_;
    const uint64_t budget_;
    const std::chrono::steady_clock::time_point stop_at_;
    const bool top_level_; // not a search of the big-first stage
    const bool big_first_;
    const unsigned threads_; // for the big-first stage's shares
    const bool other_start_;
    const bool shares_first_;                         // kSharesFirstRuns
    std::optional<placement::OrderCache> own_orders_; // where the caller passes none
    placement::OrderCache& orders_;
    const std::span<const placement::OrderFn> later_orders_;
    uint64_t spent_ = 0;
    std::vector<placement::PlacedOrder> tried_;                // candidates placed so far
    Plan best_ = {{}, GapRule::Best, {}, placement::kNoLimit}; // none yet: above every plan
    // place_shares_first's plans, and the lowest of their heights.
    std::vector<std::optional<std::vector<uint64_t>>> first_shares_;
    uint64_t lowest_share_ = placement::kNoLimit;
    // start_largest_first's shared state.
    std::array<std::once_flag, std::size(kBigFirstShares)> largest_once_;
    std::array<Largest, std::size(kBigFirstShares)> largest_;
    std::atomic<bool> stop_largest_first_{false};
    std::future<void> largest_first_; // declared last: joined before the state it reads goes
};

} // namespace

uint64_t multi_order_budget(size_t n) {
    const uint64_t m = n;
    const uint64_t quadratic = m < (uint64_t(1) << 16)
                                   ? std::min(kQuadraticBudget * m * m, kQuadraticBudgetCap)
                                   : kQuadraticBudgetCap; // m * m could overflow
    return kBudgetPerBuffer * m + quadratic;
}

MultiOrderRuns solve_multi_order_runs(const OffsetProblem& p, const Progress& progress,
                                      const MultiOrderOptions& options) {
    check_offset_problem(p, "strategy multi-order");
    return Search(p, progress, options, multi_order_budget(p.buffers.size()), true).run();
}

OffsetSolution MultiOrderStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_multi_order_runs(p, progress).best;
}

} // namespace tmmu
