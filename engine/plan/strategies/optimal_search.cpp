#include "plan/strategies/optimal_search.h"

#include "core/assert.h"
#include "core/checked.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace tmmu::optimal {

namespace {

using placement::Bytes;
using placement::Span;

constexpr uint64_t kNone = UINT64_MAX; // "no unplaced item" in a section's lowest min offset

uint64_t align(uint64_t value, uint64_t alignment) {
    return align_up(value, alignment, "strategy optimal offset");
}

// The lowest aligned offset at or above floor where the item misses every pin.
uint64_t lowest_free(const Item& it, uint64_t floor) {
    uint64_t o = align(floor, it.alignment);
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

// Flat adjacency: for each item, the items overlapping it in time; for each section, the items
// alive in it.
void build_adjacency(Component& c) {
    const uint32_t n = uint32_t(c.items.size());
    c.overlap_start.assign(n + 1, 0);
    c.overlaps.clear();
    for (uint32_t i = 0; i < n; ++i) {
        const Item& a = c.items[i];
        for (uint32_t j = 0; j < n; ++j) {
            const Item& b = c.items[j];
            if (j != i && a.first < b.last && b.first < a.last) c.overlaps.push_back(j);
        }
        c.overlap_start[i + 1] = uint32_t(c.overlaps.size());
    }
    c.section_start.assign(c.sections + 1, 0);
    for (const Item& it : c.items)
        for (uint32_t s = it.first; s < it.last; ++s)
            ++c.section_start[s + 1];
    std::partial_sum(c.section_start.begin(), c.section_start.end(), c.section_start.begin());
    c.section_items.resize(c.section_start.back());
    std::vector<uint32_t> fill(c.section_start.begin(), c.section_start.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t s = c.items[i].first; s < c.items[i].last; ++s)
            c.section_items[fill[s]++] = i;
}

// Orders after minimalloc's preorderings, each a sequence of descending keys: W the lifetime
// length, A the area (size x length), T the largest total size of a section the item is alive
// in (of the items still unplaced, when a split search re-ranks a part), Z the size; the item
// index breaks the last tie. Fills order with items sorted so.
void sort_by_keys(const Component& c, const std::array<char, 3>& keys, const std::vector<Bytes>& t,
                  std::vector<uint32_t>& order) {
    auto key = [&](char k, uint32_t i) -> Bytes {
        switch (k) {
        case 'W':
            return c.width[i];
        case 'A':
            return c.area[i];
        case 'T':
            return t[i];
        default:
            return c.items[i].size;
        }
    };
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        for (char k : keys) {
            const Bytes x = key(k, a), y = key(k, b);
            if (x != y) return x > y;
        }
        return false;
    });
}

void build_ranks(const OffsetProblem& p, Component& c) {
    const uint32_t n = uint32_t(c.items.size());
    std::vector<Bytes> section_total(c.sections, 0);
    for (const Item& it : c.items)
        for (uint32_t s = it.first; s < it.last; ++s)
            section_total[s] += it.size;
    std::vector<Bytes> t(n);
    c.width.resize(n);
    c.area.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
        const Item& it = c.items[i];
        const Buffer& b = p.buffers[it.buffer];
        c.width[i] = b.end - b.begin;
        c.area[i] = c.width[i] * it.size;
        t[i] = *std::max_element(section_total.begin() + it.first, section_total.begin() + it.last);
    }
    c.orders = {{'W', 'A', 'T'}, {'T', 'A', 'W'}, {'T', 'W', 'A'}};
    for (const std::array<char, 3>& keys : c.orders) {
        std::vector<uint32_t> order(n), rank(n);
        std::iota(order.begin(), order.end(), 0u);
        sort_by_keys(c, keys, t, order);
        for (uint32_t r = 0; r < n; ++r)
            rank[order[r]] = r;
        c.ranks.push_back(std::move(rank));
    }
}

// Depth-first decision search over one component. State invariants, for the items not yet
// placed on the current path: min_off_[i] is the lowest pin-free aligned offset above every
// placed item meeting i in time; total_[s] the sum of their sizes alive in section s; low_[s]
// the least min_off_ among them alive in s (kNone when none); cut_[b] how many of them span
// the boundary between sections b and b + 1. Every change is logged and undone on return.
class Search {
  public:
    Search(const Component& c, size_t order, uint64_t target, NodeBudget& budget)
        : c_(c), keys_(c.orders[order]), rank_(c.ranks[order]), target_(target), budget_(budget),
          min_off_(c.items.size()), offset_(c.items.size(), 0), placed_(c.items.size(), 0),
          total_(c.sections, 0), low_(c.sections, kNone), cut_(c.sections, 0),
          stamp_(c.sections, 0), pool_(c.items.size() + 1) {}

    Outcome run(std::vector<uint64_t>& offsets) {
        for (uint32_t i = 0; i < c_.items.size(); ++i) {
            const Item& it = c_.items[i];
            min_off_[i] = lowest_free(it, 0);
            if (!fits(min_off_[i], it.size)) return Outcome::Exhausted;
            for (uint32_t s = it.first; s < it.last; ++s)
                total_[s] += it.size;
            for (uint32_t s = it.first; s + 1 < it.last; ++s)
                ++cut_[s];
        }
        for (uint32_t s = 0; s < c_.sections; ++s)
            recompute_low(s);
        low_log_.clear();
        Part root{{}, 0, c_.sections};
        root.items.resize(c_.items.size());
        std::iota(root.items.begin(), root.items.end(), 0u);
        if (!bound_holds(root, 0)) return Outcome::Exhausted;
        const Outcome outcome = node(root, 0, -1, 0);
        if (outcome == Outcome::Found)
            for (uint32_t i = 0; i < c_.items.size(); ++i)
                offsets[c_.items[i].buffer] = offset_[i];
        return outcome;
    }

  private:
    struct Candidate {
        uint64_t offset;
        uint32_t rank, item;
    };
    // Unplaced items of a (sub)problem, all alive within sections [lo, hi).
    struct Part {
        std::vector<uint32_t> items; // may include items placed since the part was made
        uint32_t lo, hi;
    };

    bool fits(uint64_t offset, uint64_t size) const {
        return offset <= target_ && size <= target_ - offset;
    }

    // Section inference: in each section the unplaced items stack above their lowest min
    // offset and above the last placed offset (later items go no lower).
    bool bound_holds(const Part& part, uint64_t last_offset) const {
        for (uint32_t s = part.lo; s < part.hi; ++s)
            if (total_[s] > 0 && Bytes(std::max(last_offset, low_[s])) + total_[s] > target_)
                return false;
        return true;
    }

    bool same_shape(uint32_t a, uint32_t b) const {
        const Item &x = c_.items[a], &y = c_.items[b];
        return x.first == y.first && x.last == y.last && x.size == y.size &&
               x.alignment == y.alignment;
    }

    Outcome node(const Part& part, uint64_t last_offset, int64_t last_rank, size_t depth) {
#ifndef NDEBUG
        // Every node of small components, a sample of larger ones: the check is O(n^2).
        if (c_.items.size() <= 32 || budget_.spent % 256 == 0) check_state();
#endif
        if (budget_.stopped || budget_.spent >= budget_.limit || budget_.work >= budget_.work_limit)
            return Outcome::OutOfNodes;
        if (++budget_.spent % kPollEvery == 0 && budget_.poll && budget_.poll()) {
            budget_.stopped = true;
            return Outcome::OutOfNodes;
        }
        // Dominance: nothing goes at or above the lowest top an unplaced item can reach.
        uint64_t min_top = kNone;
        for (uint32_t i : part.items)
            if (!placed_[i]) min_top = std::min(min_top, min_off_[i] + c_.items[i].size);
        if (min_top == kNone) return Outcome::Found;
        std::vector<Candidate>& cands = pool_[depth];
        cands.clear();
        for (uint32_t i : part.items) {
            const uint64_t o = min_off_[i];
            if (placed_[i] || o >= min_top) continue;
            if (o < last_offset || (o == last_offset && int64_t(rank_[i]) < last_rank)) continue;
            cands.push_back({o, rank_[i], i});
        }
        std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
            return a.offset != b.offset ? a.offset < b.offset : a.rank < b.rank;
        });
        for (size_t k = 0; k < cands.size(); ++k) {
            const Candidate cand = cands[k];
            bool twin = false;
            for (size_t e = k; e-- > 0 && cands[e].offset == cand.offset && !twin;)
                twin = same_shape(cands[e].item, cand.item);
            if (twin || !may_place(part, cand)) continue;
            bool hatless = false;
            const Outcome outcome = place(part, cand, depth, hatless);
            if (outcome != Outcome::Exhausted) return outcome;
            // An item that meets no unplaced item in time sits at its min offset in every
            // plan below this node that minimises the offset sum, so it comes before every
            // later sibling: they cannot succeed where it failed.
            if (hatless) break;
        }
        return Outcome::Exhausted;
    }

    // Marks the sections of [first, last) whose lowest min offset may have been `was`: those
    // must be recomputed after `was` rose or left (low_ only ever rises).
    void touch(uint32_t first, uint32_t last, uint64_t was) {
        for (uint32_t s = first; s < last; ++s)
            if (low_[s] == was && stamp_[s] != epoch_) {
                stamp_[s] = epoch_;
                touched_.push_back(s);
            }
    }

#ifndef NDEBUG
    // The state invariants stated above the class, recomputed from scratch. Not inlined: node()
    // recurses once per placed item, and its frame must stay small.
    [[gnu::noinline]] void check_state() const {
        const uint32_t n = uint32_t(c_.items.size());
        std::vector<Bytes> total(c_.sections, 0);
        std::vector<uint64_t> low(c_.sections, kNone);
        std::vector<uint32_t> cut(c_.sections, 0);
        for (uint32_t i = 0; i < n; ++i) {
            if (placed_[i]) continue;
            const Item& it = c_.items[i];
            uint64_t floor = 0;
            for (uint32_t e = c_.overlap_start[i]; e < c_.overlap_start[i + 1]; ++e) {
                const uint32_t j = c_.overlaps[e];
                if (placed_[j]) floor = std::max(floor, offset_[j] + c_.items[j].size);
            }
            TMMU_ASSERT(min_off_[i] == lowest_free(it, floor),
                        "optimal search: min_off_ is the lowest free offset above placed items");
            for (uint32_t s = it.first; s < it.last; ++s) {
                total[s] += it.size;
                low[s] = std::min(low[s], min_off_[i]);
            }
            for (uint32_t s = it.first; s + 1 < it.last; ++s)
                ++cut[s];
        }
        TMMU_ASSERT(total == total_, "optimal search: total_ sums the unplaced items per section");
        TMMU_ASSERT(low == low_, "optimal search: low_ is the least unplaced min offset");
        TMMU_ASSERT(cut == cut_, "optimal search: cut_ counts unplaced items spanning a boundary");
    }
#endif

    // A cheap necessary condition for place()'s bound: in cand's own sections every unplaced
    // item lands above cand, so cand's offset plus the section's total must fit; elsewhere the
    // lowest min offsets can only rise, so the current ones still bound them.
    bool may_place(const Part& part, const Candidate& cand) const {
        const Item& it = c_.items[cand.item];
        for (uint32_t s = part.lo; s < part.hi; ++s) {
            const bool own = s >= it.first && s < it.last;
            const Bytes need =
                own ? Bytes(cand.offset) + total_[s]
                    : (total_[s] > 0 ? Bytes(std::max(cand.offset, low_[s])) + total_[s] : 0);
            if (need > target_) return false;
        }
        return true;
    }

    // low_[s] from the unplaced items alive in s (logged for undo).
    void recompute_low(uint32_t s) {
        budget_.work += c_.section_start[s + 1] - c_.section_start[s];
        uint64_t low = kNone;
        for (uint32_t e = c_.section_start[s]; e < c_.section_start[s + 1]; ++e) {
            const uint32_t j = c_.section_items[e];
            if (!placed_[j]) low = std::min(low, min_off_[j]);
        }
        if (low != low_[s]) {
            low_log_.push_back({s, low_[s]});
            low_[s] = low;
        }
    }

    // Places cand, updates the state, searches below it, and undoes everything.
    // hatless: set when no unplaced item meets cand's item in time.
    [[gnu::noinline]] Outcome place(const Part& part, const Candidate& cand, size_t depth,
                                    bool& hatless) {
        const uint32_t i = cand.item;
        const Item& it = c_.items[i];
        const uint64_t top = cand.offset + it.size;
        const size_t min_mark = min_log_.size(), low_mark = low_log_.size();
        placed_[i] = 1;
        offset_[i] = cand.offset;
        ++epoch_;
        touched_.clear();
        touch(it.first, it.last, cand.offset);
        bool ok = true;
        hatless = true;
        for (uint32_t e = c_.overlap_start[i]; e < c_.overlap_start[i + 1] && ok; ++e) {
            const uint32_t j = c_.overlaps[e];
            if (placed_[j]) continue;
            hatless = false;
            if (min_off_[j] >= top) continue;
            const uint64_t was = min_off_[j];
            min_log_.push_back({j, was});
            min_off_[j] = lowest_free(c_.items[j], top);
            ok = fits(min_off_[j], c_.items[j].size);
            touch(c_.items[j].first, c_.items[j].last, was);
        }
        for (uint32_t s = it.first; s < it.last; ++s)
            total_[s] -= it.size;
        if (ok) {
            for (uint32_t s : touched_)
                recompute_low(s);
            ok = bound_holds(part, cand.offset);
        }
        const Outcome outcome = ok ? descend(part, cand, depth) : Outcome::Exhausted;
        for (uint32_t s = it.first; s < it.last; ++s)
            total_[s] += it.size;
        for (size_t k = low_log_.size(); k-- > low_mark;)
            low_[low_log_[k].first] = low_log_[k].second;
        low_log_.resize(low_mark);
        for (size_t k = min_log_.size(); k-- > min_mark;)
            min_off_[min_log_[k].first] = min_log_[k].second;
        min_log_.resize(min_mark);
        placed_[i] = 0;
        return outcome;
    }

    // Searches below a placed candidate. When its placement leaves some boundary that no
    // unplaced item spans, the sides are independent: each is searched alone (from the same
    // canonical position: every later item still goes at or above this offset).
    //
    // The search recurses once per placed item (node, place, descend), so these frames stay
    // small: the rarer split path has a function of its own.
    [[gnu::noinline]] Outcome descend(const Part& part, const Candidate& cand, size_t depth) {
        const Item& it = c_.items[cand.item];
        bool split = false;
        for (uint32_t b = it.first; b + 1 < it.last; ++b)
            split |= --cut_[b] == 0;
        const Outcome outcome = split ? search_split(part, it, depth + 1)
                                      : node(part, cand.offset, cand.rank, depth + 1);
        for (uint32_t b = it.first; b + 1 < it.last; ++b)
            ++cut_[b];
        return outcome;
    }

    // Searches the independent sides of the boundaries inside the placed item that no unplaced
    // item spans any more, one after the other.
    [[gnu::noinline]] Outcome search_split(const Part& part, const Item& placed, size_t depth) {
        std::vector<uint32_t> bounds{part.lo};
        for (uint32_t b = placed.first; b + 1 < placed.last; ++b)
            if (cut_[b] == 0) bounds.push_back(b + 1);
        bounds.push_back(part.hi);
        std::vector<Part> subs;
        for (size_t k = 0; k + 1 < bounds.size(); ++k)
            subs.push_back({{}, bounds[k], bounds[k + 1]});
        for (uint32_t j : part.items)
            if (!placed_[j]) {
                const size_t k = std::upper_bound(bounds.begin(), bounds.end(), c_.items[j].first) -
                                 bounds.begin() - 1;
                subs[k].items.push_back(j);
            }
        std::erase_if(subs, [](const Part& s) { return s.items.empty(); });
        for (const Part& sub : subs) {
            const Outcome outcome = search_part(sub, depth);
            if (outcome != Outcome::Found) return outcome;
        }
        return Outcome::Found;
    }

    // Searches an independent part afresh, as minimalloc does: its items re-ranked by the
    // order's keys over what is left (T then weighs the sections still to fill), the canonical
    // order restarted. Ranks are restored after.
    [[gnu::noinline]] Outcome search_part(const Part& sub, size_t depth) {
        std::vector<uint32_t> order = sub.items, saved(sub.items.size());
        std::vector<Bytes> t(c_.items.size());
        for (size_t k = 0; k < sub.items.size(); ++k) {
            const uint32_t j = sub.items[k];
            const Item& it = c_.items[j];
            saved[k] = rank_[j];
            t[j] = *std::max_element(total_.begin() + it.first, total_.begin() + it.last);
        }
        sort_by_keys(c_, keys_, t, order);
        for (uint32_t r = 0; r < order.size(); ++r)
            rank_[order[r]] = r;
        const Outcome outcome = node(sub, 0, -1, depth);
        for (size_t k = 0; k < sub.items.size(); ++k)
            rank_[sub.items[k]] = saved[k];
        return outcome;
    }

    const Component& c_;
    const std::array<char, 3>& keys_;
    std::vector<uint32_t> rank_; // re-ranked per part while a split search runs
    const uint64_t target_;
    NodeBudget& budget_;
    std::vector<uint64_t> min_off_, offset_;
    std::vector<uint8_t> placed_;
    std::vector<Bytes> total_;
    std::vector<uint64_t> low_;
    std::vector<uint32_t> cut_;
    std::vector<uint32_t> stamp_; // touch(): section s is in touched_ iff stamp_[s] == epoch_
    uint32_t epoch_ = 0;
    std::vector<uint32_t> touched_; // sections whose low_ must be recomputed
    // (index, previous value) of min_off_ and low_ changes, undone in reverse.
    std::vector<std::pair<uint32_t, uint64_t>> min_log_, low_log_;
    // Candidates per depth (each node places one item, so depth <= items), sized up front:
    // a node keeps a reference to its own list while deeper nodes run.
    std::vector<std::vector<Candidate>> pool_;
};

} // namespace

std::vector<Component> split_components(const OffsetProblem& p) {
    std::vector<uint32_t> order, pinned;
    for (uint32_t i = 0; i < p.buffers.size(); ++i)
        if (p.buffers[i].size > 0) (p.buffers[i].pinned ? pinned : order).push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return p.buffers[a].begin < p.buffers[b].begin;
    });
    std::vector<std::vector<uint32_t>> groups;
    uint64_t reach = 0;
    for (uint32_t i : order) {
        if (groups.empty() || p.buffers[i].begin >= reach) groups.emplace_back();
        groups.back().push_back(i);
        reach = std::max(reach, p.buffers[i].end);
    }
    std::vector<Component> comps;
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

void prepare_component(const OffsetProblem& p, Component& c) {
    if (!c.ranks.empty()) return;
    build_adjacency(c);
    build_ranks(p, c);
}

Outcome search_component(const Component& c, size_t order, uint64_t target, NodeBudget& budget,
                         std::vector<uint64_t>& offsets) {
    Search search(c, order, target, budget);
    return search.run(offsets);
}

} // namespace tmmu::optimal
