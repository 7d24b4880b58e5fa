#include "plan/strategies/optimal.h"

#include "core/checked.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/orders.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <numeric>
#include <utility>

namespace tmmu {

namespace {

using placement::Bytes;
using placement::Span;

constexpr std::string_view kStage = "strategy optimal";
constexpr uint64_t kReportEvery = 4096; // nodes between progress reports and cancel polls
constexpr uint64_t kFirstSlice = 256;   // nodes for each ordering in the first round

// One searched buffer of a component: its section range and the pinned buffers it must avoid.
struct Item {
    uint32_t buffer;
    uint32_t first, last; // sections [first, last) of its lifetime
    uint64_t size, alignment;
    std::vector<Span> pins; // byte spans of pinned buffers alive at the same time
};

// A group of buffers that no lifetime links to the others: searched on its own. Sections are
// the elementary intervals between the group's distinct begin and end times.
struct Component {
    std::vector<Item> items;
    uint32_t sections = 0;
};

uint64_t align(uint64_t value, uint64_t alignment) {
    return align_up(value, alignment, "strategy optimal offset");
}

// Splits the searched buffers (not pinned, size > 0) into time-disjoint groups, each with its
// sections; pinned buffers become obstacles of the items they overlap in time.
std::vector<Component> split_components(const OffsetProblem& p) {
    std::vector<uint32_t> order, pinned;
    for (uint32_t i = 0; i < p.buffers.size(); ++i)
        if (p.buffers[i].size > 0) (p.buffers[i].pinned ? pinned : order).push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return p.buffers[a].begin < p.buffers[b].begin;
    });
    std::vector<Component> comps;
    std::vector<std::vector<uint32_t>> groups;
    uint64_t reach = 0;
    for (uint32_t i : order) {
        if (groups.empty() || p.buffers[i].begin >= reach) groups.emplace_back();
        groups.back().push_back(i);
        reach = std::max(reach, p.buffers[i].end);
    }
    for (std::vector<uint32_t>& g : groups) {
        std::sort(g.begin(), g.end()); // index order: the problem's own tie-break key
        std::vector<uint64_t> times;
        for (uint32_t i : g) {
            times.push_back(p.buffers[i].begin);
            times.push_back(p.buffers[i].end);
        }
        std::sort(times.begin(), times.end());
        times.erase(std::unique(times.begin(), times.end()), times.end());
        auto rank = [&times](uint64_t t) {
            return uint32_t(std::lower_bound(times.begin(), times.end(), t) - times.begin());
        };
        Component c;
        c.sections = uint32_t(times.size() - 1);
        for (uint32_t i : g) {
            const Buffer& b = p.buffers[i];
            Item item{i, rank(b.begin), rank(b.end), b.size, b.alignment, {}};
            for (uint32_t j : pinned) {
                const Buffer& q = p.buffers[j];
                if (q.begin < b.end && b.begin < q.end)
                    item.pins.push_back({*q.pinned, placement::end_of(*q.pinned, q.size, j)});
            }
            c.items.push_back(std::move(item));
        }
        comps.push_back(std::move(c));
    }
    return comps;
}

// Orderings that break ties between buffers at the same candidate offset; each is a list of
// item positions, most promising first.
std::vector<std::vector<uint32_t>> orderings(const OffsetProblem& p, const Component& c) {
    auto by = [&](auto better) {
        std::vector<uint32_t> o(c.items.size());
        std::iota(o.begin(), o.end(), 0u);
        std::stable_sort(o.begin(), o.end(), [&](uint32_t a, uint32_t b) {
            return better(p.buffers[c.items[a].buffer], p.buffers[c.items[b].buffer]);
        });
        return o;
    };
    using placement::length;
    return {
        by([](const Buffer& a, const Buffer& b) {
            return a.size != b.size ? a.size > b.size : length(a) > length(b);
        }),
        by([](const Buffer& a, const Buffer& b) {
            return Bytes(a.size) * length(a) > Bytes(b.size) * length(b);
        }),
        by([](const Buffer& a, const Buffer& b) {
            return length(a) != length(b) ? length(a) > length(b) : a.size > b.size;
        }),
        by([](const Buffer& a, const Buffer& b) {
            return a.begin != b.begin ? a.begin < b.begin : a.size > b.size;
        }),
    };
}

enum class Outcome { Found, Exhausted, OutOfNodes };

// Depth-first search for a placement of one component under a target height. Invariants:
// floor s (a leaf of tree_) is the top of the highest item placed in section s (0 when none),
// rem_[s] the total size of the unplaced items alive in s; items are placed in non-decreasing
// (offset, rank) order, so every unplaced item lands at or above last_offset_.
class BranchAndBound {
  public:
    BranchAndBound(const Component& c, const std::vector<uint32_t>& ordering, uint64_t target,
                   uint64_t nodes, uint64_t& spent, const std::function<bool()>& poll)
        : c_(c), target_(target), limit_(spent + nodes), spent_(spent), poll_(poll),
          rank_(c.items.size()), width_(std::bit_ceil(std::max<uint32_t>(c.sections, 1))),
          tree_(2 * width_, 0), rem_(c.sections, 0), low_(c.sections), next_(c.sections + 1),
          offset_(c.items.size(), 0), placed_(c.items.size(), false) {
        for (uint32_t r = 0; r < ordering.size(); ++r)
            rank_[ordering[r]] = r;
        for (const Item& it : c.items)
            for (uint32_t s = it.first; s < it.last; ++s)
                rem_[s] += it.size;
    }

    Outcome run() {
        if (dfs(0)) return Outcome::Found;
        return out_ ? Outcome::OutOfNodes : Outcome::Exhausted;
    }
    // Offsets by item position; valid after Found.
    const std::vector<uint64_t>& offsets() const { return offset_; }

  private:
    struct Candidate {
        uint64_t offset;
        uint32_t rank, item;
    };

    // The lowest aligned offset at or above the item's floor that misses every pin.
    uint64_t canonical(const Item& it) const {
        uint64_t o = align(floor_max(it.first, it.last), it.alignment);
        for (bool moved = true; moved;) {
            moved = false;
            for (const Span& pin : it.pins)
                if (o < pin.end && pin.offset < o + it.size) {
                    o = align(pin.end, it.alignment);
                    moved = true;
                }
        }
        return o;
    }

    bool fits(uint64_t offset, uint64_t size) const {
        return offset <= target_ && size <= target_ - offset;
    }

    // Fills cands with the items that may go next; false when the node cannot lead to a
    // placement under the target.
    // Bound: floors only rise and every unplaced item lands at or above last_offset_, so item
    // i ends at or above low = max(canonical, last_offset_), and in each section the unplaced
    // items stack above the lowest of their lows.
    bool expand(std::vector<Candidate>& cands) {
        lows_.clear();
        for (uint32_t i = 0; i < c_.items.size(); ++i) {
            if (placed_[i]) continue;
            const Item& it = c_.items[i];
            const uint64_t o = canonical(it);
            const uint64_t low = std::max(o, last_offset_);
            if (!fits(low, it.size)) return false;
            lows_.push_back({low, i});
            if (o > last_offset_ || (o == last_offset_ && int64_t(rank_[i]) > last_rank_))
                cands.push_back({o, rank_[i], i});
        }
        paint_lows();
        for (uint32_t s = 0; s < c_.sections; ++s)
            if (rem_[s] > 0 && Bytes(low_[s]) + rem_[s] > target_) return false;
        std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
            return a.offset != b.offset ? a.offset < b.offset : a.rank < b.rank;
        });
        return true;
    }

    // low_[s] = the lowest low of the unplaced items alive in s (sections without one are left
    // as they were: their rem_ is 0). Items in ascending low paint the sections no lower item
    // painted; next_ skips painted sections (union-find), so each section is painted once.
    void paint_lows() {
        std::sort(lows_.begin(), lows_.end());
        std::iota(next_.begin(), next_.end(), 0u);
        auto find = [this](uint32_t s) {
            uint32_t root = s;
            while (next_[root] != root)
                root = next_[root];
            while (next_[s] != root)
                s = std::exchange(next_[s], root);
            return root;
        };
        for (const auto& [low, i] : lows_) {
            const Item& it = c_.items[i];
            for (uint32_t s = find(it.first); s < it.last; s = find(s + 1)) {
                low_[s] = low;
                next_[s] = s + 1;
            }
        }
    }

    // Max of floors [first, last) over the segment tree whose leaves are the floors.
    uint64_t floor_max(uint32_t first, uint32_t last) const {
        uint64_t m = 0;
        for (uint64_t l = width_ + first, r = width_ + last; l < r; l >>= 1, r >>= 1) {
            if (l & 1) m = std::max(m, tree_[l++]);
            if (r & 1) m = std::max(m, tree_[--r]);
        }
        return m;
    }

    // Recomputes the inner nodes above leaves [first, last) after they changed.
    void refresh(uint32_t first, uint32_t last) {
        for (uint64_t l = (width_ + first) >> 1, r = (width_ + last - 1) >> 1; l >= 1;
             l >>= 1, r >>= 1)
            for (uint64_t k = l; k <= r; ++k)
                tree_[k] = std::max(tree_[2 * k], tree_[2 * k + 1]);
    }

    // Two siblings leave the same state when they put items of the same size and section
    // range (hence the same pins) and alignment at the same offset: only the first is explored.
    bool same_state(const Candidate& a, const Candidate& b) const {
        const Item &x = c_.items[a.item], &y = c_.items[b.item];
        return a.offset == b.offset && x.first == y.first && x.last == y.last && x.size == y.size &&
               x.alignment == y.alignment;
    }

    bool dfs(size_t depth) {
        if (spent_ >= limit_) {
            out_ = true;
            return false;
        }
        if (++spent_ % kReportEvery == 0 && poll_()) {
            limit_ = spent_; // cancelled: end the search as if out of nodes
            out_ = true;
            return false;
        }
        if (depth == c_.items.size()) return true;
        std::vector<Candidate> cands;
        if (!expand(cands)) return false;
        std::vector<uint64_t> saved;
        const uint64_t last_offset = last_offset_;
        const int64_t last_rank = last_rank_;
        for (size_t k = 0; k < cands.size(); ++k) {
            if (k > 0 && same_state(cands[k - 1], cands[k])) continue;
            const Candidate& cand = cands[k];
            const Item& it = c_.items[cand.item];
            uint64_t* floors = tree_.data() + width_;
            saved.assign(floors + it.first, floors + it.last);
            for (uint32_t s = it.first; s < it.last; ++s) {
                floors[s] = cand.offset + it.size;
                rem_[s] -= it.size;
            }
            refresh(it.first, it.last);
            placed_[cand.item] = true;
            offset_[cand.item] = cand.offset;
            last_offset_ = cand.offset;
            last_rank_ = cand.rank;
            if (dfs(depth + 1)) return true;
            placed_[cand.item] = false;
            std::copy(saved.begin(), saved.end(), floors + it.first);
            refresh(it.first, it.last);
            for (uint32_t s = it.first; s < it.last; ++s)
                rem_[s] += it.size;
            last_offset_ = last_offset;
            last_rank_ = last_rank;
            if (out_) return false;
        }
        return false;
    }

    const Component& c_;
    const uint64_t target_;
    uint64_t limit_;
    uint64_t& spent_;
    const std::function<bool()>& poll_;
    std::vector<uint32_t> rank_;
    const uint64_t width_;       // leaves of tree_: sections rounded up to a power of two
    std::vector<uint64_t> tree_; // max segment tree; leaf width_ + s holds floor of section s
    std::vector<Bytes> rem_;
    std::vector<uint64_t> low_;  // expand's scratch: per section, the lowest low
    std::vector<uint32_t> next_; // paint_lows' scratch: next unpainted section
    std::vector<std::pair<uint64_t, uint32_t>> lows_; // expand's scratch: (low, item)
    std::vector<uint64_t> offset_;
    std::vector<bool> placed_;
    uint64_t last_offset_ = 0;
    int64_t last_rank_ = -1; // -1: nothing placed yet, any rank may go first
    bool out_ = false;
};

// Tries to place one component under target within nodes; the orderings take turns with
// slices that double every round. Writes the component's offsets into offsets on success.
Outcome search_component(const OffsetProblem& p, const Component& c, uint64_t target,
                         uint64_t nodes, uint64_t& spent, const std::function<bool()>& poll,
                         std::vector<uint64_t>& offsets) {
    const std::vector<std::vector<uint32_t>> orders = orderings(p, c);
    const uint64_t end = spent + nodes;
    for (uint64_t slice = kFirstSlice; spent < end; slice *= 2) {
        for (const std::vector<uint32_t>& order : orders) {
            if (spent >= end || poll()) return Outcome::OutOfNodes;
            BranchAndBound bb(c, order, target, std::min(slice, end - spent), spent, poll);
            const Outcome outcome = bb.run();
            if (outcome == Outcome::OutOfNodes) continue;
            if (outcome == Outcome::Found)
                for (size_t i = 0; i < c.items.size(); ++i)
                    offsets[c.items[i].buffer] = bb.offsets()[i];
            return outcome;
        }
    }
    return Outcome::OutOfNodes;
}

uint64_t component_height(const Component& c, const std::vector<uint64_t>& offsets) {
    uint64_t h = 0;
    for (const Item& it : c.items)
        h = std::max(h, offsets[it.buffer] + it.size);
    return h;
}

} // namespace

OptimalResult solve_optimal(const OffsetProblem& p, const OptimalOptions& options,
                            const Progress& progress) {
    check_offset_problem(p, kStage);
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
    const std::vector<Component> comps = best > lo ? split_components(p) : std::vector<Component>{};
    bool cancelled = false;
    bool first = true;
    const std::function<bool()> poll = [&] {
        progress.report(options.node_budget ? double(r.nodes) / double(options.node_budget) : 1.0,
                        "optimal: search");
        cancelled = cancelled || progress.cancelled();
        return cancelled;
    };
    while (best > lo && r.nodes < options.node_budget && !cancelled) {
        // The bound first (synthetic and many real problems pack perfectly, and the tight
        // target prunes hardest), then bisection: target in [lo, best).
        const uint64_t target = first ? lo : lo + (best - 1 - lo) / 2;
        first = false;
        const uint64_t attempt =
            std::max<uint64_t>((options.node_budget - r.nodes) / 3,
                               std::min(options.node_budget - r.nodes, kFirstSlice * 16));
        const uint64_t attempt_end = r.nodes + attempt; // shared by the components
        Outcome outcome = Outcome::Found;
        for (const Component& c : comps) {
            if (component_height(c, offsets) <= target) continue;
            outcome = r.nodes < attempt_end ? search_component(p, c, target, attempt_end - r.nodes,
                                                               r.nodes, poll, offsets)
                                            : Outcome::OutOfNodes;
            if (outcome != Outcome::Found) break;
        }
        if (outcome == Outcome::Found) {
            best = std::max(seed.pinned_top, solution_height(p, offsets));
        } else {
            // Exhausted: no canonical plan fits under target, which proves it without pins
            // (pins make the search incomplete); out of nodes: give this target up unproven.
            proof = proof && outcome == Outcome::Exhausted && !pinned;
            lo = target + 1;
        }
    }
    r.proven = best == std::max(r.lower_bound, seed.pinned_top) || (proof && best <= lo);
    r.solution = placement::finish(p, std::move(offsets),
                                   r.proven ? "optimal (proven)" : "optimal (budget)");
    return r;
}

OffsetSolution OptimalStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return solve_optimal(p, options_, progress).solution;
}

} // namespace tmmu
