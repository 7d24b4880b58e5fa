#pragma once
// Shared machinery of the offset strategies: the time-overlap index over placed buffers, gap
// search, and the handling of pinned and zero-size buffers. Buffer orders are in orders.h.
#include "core/progress.h"
#include "plan/offset_problem.h"
#include "plan/strategies/orders.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tmmu::placement {

// offset + size, overflow-checked; the failure names buffer i.
uint64_t end_of(uint64_t offset, uint64_t size, size_t i);

// The starting state of every strategy: pinned buffers at their pins, non-pinned zero-size
// buffers at 0 (they never conflict), everything else unplaced.
struct Seed {
    std::vector<uint64_t> offsets;
    std::vector<bool> placed;
    uint64_t pinned_top = 0; // max(pin + size) over pinned buffers, 0 without pins
};
Seed seed_solution(const OffsetProblem& p);

// Finishes a solution: height and producer.
OffsetSolution finish(const OffsetProblem& p, std::vector<uint64_t> offsets,
                      std::string_view producer);

// A height limit for passes that give up once their plan could no longer end below it
// (place_below and its kin); kNoLimit stands for none, so a plan of any height is finished.
inline constexpr uint64_t kNoLimit = UINT64_MAX;
inline bool reaches(uint64_t height, uint64_t limit) {
    return limit != kNoLimit && height >= limit;
}

// Byte range [offset, end) of a placed buffer.
struct Span {
    uint64_t offset;
    uint64_t end;
};

// Placed buffers indexed by lifetime over compressed time (the distinct begin/end values,
// ranked). Each buffer sits in exactly one bin: its level is the lowest whose bin width W is at
// least its length, and its bin at that level is the one holding its first time rank lo_S. Bin
// widths grow by a fixed factor from level to level, so there are O(log T) levels. A buffer S at
// a level of width W overlaps a query Q iff lo_S < hi_Q and lo_Q < hi_S <= lo_S + W, so every
// overlapping S starts in (lo_Q - W, hi_Q): a query reads, at each level, the bins covering
// those start ranks and keeps the entries that overlap exactly. Bins are disjoint, so each
// overlapping buffer is reported exactly once. The entries the bins read but do not keep are
// those of the level's width that ended less than W before Q began: a constant factor of the
// overlaps at each level, since a buffer at a level is longer than W / that factor. Each bin
// keeps its entries in offset order (an insert moves the bin's higher entries up one), so a
// query's answer is a few sorted runs, merged rather than sorted.
// One entry per buffer (the segment tree this replaced kept O(log T) per buffer, and its
// queries missed the cache at every level of a tree of a million leaves). The bins are laid
// out once, contiguously, by a counting pass over every buffer that may be inserted.
class OverlapIndex {
  public:
    // Every buffer of p with size > 0 may be inserted later.
    explicit OverlapIndex(const OffsetProblem& p);
    // Forgets every inserted buffer and keeps the layout, for another run on the same problem.
    void clear();
    void insert(uint32_t buffer, Span bytes);
    // Replaces out with the byte spans of the inserted buffers whose lifetimes overlap buffer's,
    // each once, in no particular order.
    void query(uint32_t buffer, std::vector<Span>& out) const;
    // As above into out, which has room for size() + 1 spans; returns the count. out holds
    // runs sorted by offset (one per bin read), which begin at the positions in runs.
    size_t query(uint32_t buffer, Span* out, std::vector<uint32_t>& runs) const;
    // Asks the cache for what a later query of buffer reads, in three stages a few queries
    // apart: 0 its lifetime, 1 its bins' bounds (reads the lifetime), 2 its bins' first entries
    // (reads the bounds).
    void prefetch(uint32_t buffer, int stage) const;
    // The number of buffers of the problem.
    size_t size() const { return lo_.size(); }
    // The number of unordered pairs of the problem's buffers (those with among[i] set, when
    // given) whose lifetimes overlap, from the ranks in O(n + T).
    uint64_t overlapping_pairs(const std::vector<bool>* among = nullptr) const;

  private:
    struct Entry {
        Span bytes;
        uint32_t lo, hi; // compressed lifetime [lo, hi)
    };
    struct Level {
        int shift;      // bin width = 1 << shift time ranks
        uint32_t first; // index of the level's bin 0 in bins_
    };
    // Sets lo_, hi_ and ranks_.
    void rank_lifetimes(const OffsetProblem& p);
    // Sets levels_, level_of_, bins_ and entries_ (empty bins of the right sizes).
    void lay_out_bins(const OffsetProblem& p);
    // The bin a buffer of size > 0 sits in.
    uint32_t bin_of(uint32_t buffer) const;
    // Visits the bins a query of ranks [lo, hi) reads, level by level.
    template <typename Visit>
    void for_each_bin(uint32_t lo, uint32_t hi, Visit&& visit) const;
    size_t report(uint32_t bin, uint32_t lo, uint32_t hi, Span* out) const;

    std::vector<uint32_t> lo_, hi_; // per buffer: compressed [lo, hi)
    uint32_t ranks_ = 0;            // distinct begin/end values: every lo_ and hi_ is below
    std::vector<Level> levels_;     // levels with at least one buffer, narrowest first
    std::vector<uint8_t> level_of_; // per buffer: its index in levels_
    // Bin b occupies entries_[bins_[b].start, bins_[b].start + bins_[b].fill).
    struct Bin {
        uint32_t start, fill;
    };
    std::vector<Bin> bins_;
    std::unique_ptr<Entry[]> entries_; // left uninitialised: every read entry was stored first
};

// Sorts spans by offset, stably (core/radix_sort.h). scratch is working memory kept across
// calls.
void sort_by_offset(std::vector<Span>& spans, std::vector<Span>& scratch);

// The lowest-offset smallest gap between spans sorted by offset (from 0) that holds size bytes
// at an aligned offset; the aligned top of the spans when no gap fits. Repeated spans change
// nothing. buffer names the failure on overflow.
uint64_t best_gap(std::span<const Span> sorted, uint64_t size, uint64_t alignment, size_t buffer);
// The lowest aligned offset, in a gap between spans sorted by offset or on top of them, that
// holds size bytes (first fit).
uint64_t first_gap(std::span<const Span> sorted, uint64_t size, uint64_t alignment, size_t buffer);

// The smallest gap as best_gap chooses it, but the free space between the top of the spans and
// heap (the height of everything placed so far, in any time) counts as one more gap, tried
// last: a buffer goes on top of the spans, below the current height, when that space is the
// tightest fit. Only when nothing fits does it raise the height (XLA's heap simulator and ONNX
// Runtime's pattern planner both grow their heap only then).
uint64_t best_gap_in_heap(std::span<const Span> sorted, uint64_t size, uint64_t alignment,
                          size_t buffer, uint64_t heap);

// How a buffer chooses among the gaps that hold it.
enum class GapRule : uint8_t {
    Best,     // best_gap: the smallest gap (TFLite arena)
    First,    // first_gap: the lowest offset (TFLite Micro, TVM)
    BestHeap, // best_gap_in_heap: the smallest gap, up to the height so far (XLA, ONNX Runtime)
};

// One placement pass: a buffer order under a gap rule. On one problem and seed, the same pass
// always gives the same plan.
struct PlacedOrder {
    std::vector<uint32_t> order;
    GapRule rule;
};
// Whether order under rule is a pass in placed (and so would repeat its plan).
inline bool already_placed(std::span<const PlacedOrder> placed, const std::vector<uint32_t>& order,
                           GapRule rule) {
    for (const PlacedOrder& done : placed)
        if (done.rule == rule && done.order == order) return true;
    return false;
}

// How GapPlacer finds the placed buffers that overlap a buffer in time: the OverlapIndex, or
// a scan of all placed buffers kept in offset order (no sort per query). Both hand the gap
// search the same spans in offset order, so they place identically. The scan reads every placed
// buffer per query, so it is chosen automatically only where it costs less: up to kScanLimit
// buffers, and for dense problems where so many pairs overlap in time that the index would
// report (and merge) a large share of the placed buffers anyway. (Measured on the random
// problems with the binned index: the scan is faster at 200 buffers, 120 against 180 ns per
// buffer and pass, even at 500, and slower at 1,000, 625 against 463. The limit stays: it
// decides multi-order's work units, and so its plans, for problems up to it.)
enum class OverlapSearch { Automatic, Index, Scan };
inline constexpr size_t kScanLimit = 1024;

// Places the unplaced buffers of a seed in a given order, each in the gap the rule picks among
// the already placed buffers that overlap it in time. One placer serves several runs (orders,
// rules) on the same problem.
class GapPlacer {
  public:
    explicit GapPlacer(const OffsetProblem& p, OverlapSearch search = OverlapSearch::Automatic);
    // Polls cancellation under stage.
    std::vector<uint64_t> place(Seed seed, const std::vector<uint32_t>& order,
                                const Progress& progress, std::string_view stage,
                                GapRule rule = GapRule::Best);
    // As place, but the first `kept` buffers of order take their offsets from `previous`
    // without a search. Gives place's answer when previous came from this placer with the same
    // seed and rule and an order with the same first `kept` buffers: a buffer's placement
    // depends only on the buffers placed before it.
    std::vector<uint64_t> place_after(Seed seed, const std::vector<uint32_t>& order, size_t kept,
                                      const std::vector<uint64_t>& previous,
                                      const Progress& progress, std::string_view stage,
                                      GapRule rule);
    // As place, but gives up (nullopt) as soon as the buffers placed reach height limit (see
    // reaches()): the plan would end at or above it. What a caller holding a plan of that height
    // needs, at a fraction of the cost when the pass is worse.
    std::optional<std::vector<uint64_t>> place_below(Seed seed, const std::vector<uint32_t>& order,
                                                     uint64_t limit, const Progress& progress,
                                                     std::string_view stage, GapRule rule);
    // Cost of the last run in abstract units (about a nanosecond each on a current core): a
    // deterministic count of the spans it read, for budgets that must not depend on timing. A
    // place_below that gave up counts as the whole run (whole_run_work).
    uint64_t last_work() const { return work_; }
    // What a whole run of place() from seed costs in those units, in any order: the scan's
    // query k reads every buffer placed before it, and the index reports each pair of
    // overlapping buffers once, to the later of the two.
    uint64_t whole_run_work(const Seed& seed) const;
    bool scans() const { return !index_; }

  private:
    template <typename Search>
    std::optional<std::vector<uint64_t>>
    run(Search& search, Seed seed, const std::vector<uint32_t>& order, size_t kept,
        const std::vector<uint64_t>* previous, GapRule rule, const Progress& progress,
        std::string_view stage, uint64_t limit);

    const OffsetProblem& p_;
    std::unique_ptr<OverlapIndex> index_; // null when scanning
    uint64_t work_ = 0;
    // whole_run_work's pairs reported with the index, for the seed whose placed flags these are.
    mutable std::vector<bool> reported_for_;
    mutable uint64_t reported_ = 0;
};

} // namespace tmmu::placement
