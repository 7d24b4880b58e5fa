#pragma once
// Shared machinery of the offset strategies: the time-overlap index over placed buffers, gap
// search, and the handling of pinned and zero-size buffers. Buffer orders are in orders.h.
#include "core/progress.h"
#include "plan/offset_problem.h"
#include "plan/strategies/orders.h"

#include <cstdint>
#include <memory>
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

// Byte range [offset, end) of a placed buffer.
struct Span {
    uint64_t offset;
    uint64_t end;
};

// Placed buffers indexed by lifetime over compressed time: a segment tree whose leaves are the
// elementary intervals between consecutive distinct begin/end values. Two lifetimes S and Q
// (as leaf ranges) overlap iff exactly one of these holds:
//   lo_S <= lo_Q < hi_S   S covers Q's first leaf: a stabbing query. S sits in the "cover"
//                         list of the O(log T) canonical nodes of its range, and exactly one
//                         of them lies on the path from leaf lo_Q to the root.
//   lo_Q < lo_S < hi_Q    S starts inside Q: a range query on start leaves. S sits in the
//                         "start" list of every node on the path from leaf lo_S to the root,
//                         and exactly one canonical node of [lo_Q + 1, hi_Q) holds that leaf.
// So each overlapping buffer is reported exactly once, and nothing else is read. The lists are
// laid out once, contiguously, by a counting pass over every buffer that may be inserted.
// Per buffer O(log T) entries; per query O(log T + overlaps).
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

  private:
    // Visits the lists buffer is stored in (the cover lists of its canonical nodes and the
    // start lists on its start leaf's path), in a fixed order.
    template <typename Visit>
    void for_each_list(uint32_t buffer, Visit&& visit) const;
    void report(size_t list, std::vector<Span>& out) const;

    std::vector<uint32_t> lo_, hi_; // per buffer: compressed [lo, hi) leaf range
    uint64_t width_ = 1; // leaves rounded up to a power of two; leaf i is node width_ + i
    // List 2 * node is the node's cover list, 2 * node + 1 its start list; list l occupies
    // entries_[start_[l], start_[l] + fill_[l]).
    std::vector<uint32_t> start_, fill_;
    std::unique_ptr<Span[]> entries_; // left uninitialised: every read entry was stored first
};

// Sorts spans by offset: an LSD radix sort, 8 bits a pass, over only the window of offset bits
// that differ between spans (stable); insertion sort for a few spans. scratch is working memory
// kept across calls.
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
// buffers, where it is several times faster than building and querying the index, and for
// dense problems where so many pairs overlap in time that the index would report (and sort) a
// large share of the placed buffers anyway.
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
    // Cost of the last run in abstract units (about a nanosecond each on a current core): a
    // deterministic count of the spans it read, for budgets that must not depend on timing.
    uint64_t last_work() const { return work_; }
    bool scans() const { return !index_; }

  private:
    template <typename Search>
    std::vector<uint64_t> run(Search& search, Seed seed, const std::vector<uint32_t>& order,
                              size_t kept, const std::vector<uint64_t>* previous, GapRule rule,
                              const Progress& progress, std::string_view stage);

    const OffsetProblem& p_;
    std::unique_ptr<OverlapIndex> index_; // null when scanning
    uint64_t work_ = 0;
};

} // namespace tmmu::placement
