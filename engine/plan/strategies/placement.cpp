#include "plan/strategies/placement.h"

#include "core/assert.h"
#include "core/checked.h"
#include "core/failure.h"
#include "core/radix_sort.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <optional>
#include <utility>

namespace tmmu::placement {

uint64_t end_of(uint64_t offset, uint64_t size, size_t i) {
    uint64_t end;
    // Formats the failure's location only on overflow: this runs once per placement.
    if (__builtin_add_overflow(offset, size, &end))
        checked_add(offset, size, fmt::format("buffer {} offset + size", i));
    return end;
}

Seed seed_solution(const OffsetProblem& p) {
    Seed s;
    s.offsets.assign(p.buffers.size(), 0);
    s.placed.assign(p.buffers.size(), false);
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        if (b.pinned) {
            s.offsets[i] = *b.pinned;
            s.placed[i] = true;
            s.pinned_top = std::max(s.pinned_top, end_of(*b.pinned, b.size, i));
        } else if (b.size == 0) {
            s.placed[i] = true; // offset 0: aligned for every alignment, conflicts with nothing
        }
    }
    return s;
}

OffsetSolution finish(const OffsetProblem& p, std::vector<uint64_t> offsets,
                      std::string_view producer) {
    OffsetSolution s;
    s.height = solution_height(p, offsets);
    s.offsets = std::move(offsets);
    s.producer = std::string(producer);
    return s;
}

namespace {

// Bin widths: the narrowest level's bins hold 2^first_level_shift() time ranks, each level's
// 2^kLevelFanoutShift times as many as the level below. Wider first bins mean fewer bins per
// query (fewer sorted runs to merge) and more entries read and dropped. The first width follows
// the buffers' mean length in ranks (half of it, rounded down to a power of two, 16 to 1,024
// ranks): on the random problems shaped like real graphs (mean 17 ranks) 16 is best, and any
// width from 16 to 64 measured within noise at 100k and 1M buffers, while 1,024 was 2.5 times
// slower at 1M; on the dense ones (mean 730 ranks, 1,700 buffers overlapping each) 256 makes a
// best-fit pass 27-29% faster than 16 at 20k and 100k buffers.
constexpr int kMinFirstLevelShift = 4;
constexpr int kMaxFirstLevelShift = 10;
constexpr int kLevelFanoutShift = 3;

int first_level_shift(const std::vector<uint32_t>& lo, const std::vector<uint32_t>& hi) {
    uint64_t total = 0;
    for (size_t i = 0; i < lo.size(); ++i)
        total += hi[i] - lo[i];
    const uint64_t half_mean = lo.empty() ? 0 : total / lo.size() / 2;
    const int shift = half_mean == 0 ? 0 : std::bit_width(half_mean) - 1;
    return std::clamp(shift, kMinFirstLevelShift, kMaxFirstLevelShift);
}

} // namespace

OverlapIndex::OverlapIndex(const OffsetProblem& p) {
    rank_lifetimes(p);
    lay_out_bins(p);
}

void OverlapIndex::rank_lifetimes(const OffsetProblem& p) {
    const size_t n = p.buffers.size();
    if (n > (size_t(1) << 30))
        fail(FailureCode::InvalidArgument, "offset placement",
             fmt::format("{} buffers; at most 2^30 are supported", n));
    // One radix sort of every bound, tagged with its buffer (2 i for a begin, 2 i + 1 for an
    // end), then one walk.
    std::vector<Span> bounds(2 * n);
    for (size_t i = 0; i < n; ++i) {
        bounds[2 * i] = {p.buffers[i].begin, 2 * i};
        bounds[2 * i + 1] = {p.buffers[i].end, 2 * i + 1};
    }
    {
        std::vector<Span> scratch;
        sort_by_offset(bounds, scratch);
    }
    lo_.resize(n);
    hi_.resize(n);
    uint32_t rank = 0;
    for (size_t k = 0; k < bounds.size(); ++k) {
        if (k > 0 && bounds[k].offset != bounds[k - 1].offset) ++rank;
        const uint64_t tag = bounds[k].end;
        (tag & 1 ? hi_ : lo_)[tag >> 1] = rank;
    }
    ranks_ = bounds.empty() ? 0 : rank + 1;
}

void OverlapIndex::lay_out_bins(const OffsetProblem& p) {
    const size_t n = p.buffers.size();
    level_of_.assign(n, 0);
    // Levels by width; each buffer's level is the lowest wide enough for its length.
    std::vector<int> shifts{first_level_shift(lo_, hi_)};
    while ((uint64_t(1) << shifts.back()) < ranks_)
        shifts.push_back(shifts.back() + kLevelFanoutShift);
    std::vector<uint32_t> used(shifts.size(), 0);
    for (size_t i = 0; i < n; ++i) {
        if (p.buffers[i].size == 0) continue; // never inserted
        uint8_t k = 0;
        while ((uint64_t(1) << shifts[k]) < hi_[i] - lo_[i])
            ++k;
        level_of_[i] = k;
        ++used[k];
    }
    // Keep only the levels in use (renumbering level_of_), so queries skip the empty ones.
    std::vector<uint8_t> renumber(shifts.size(), 0);
    uint32_t bins = 0;
    for (size_t k = 0; k < shifts.size(); ++k) {
        if (used[k] == 0) continue;
        renumber[k] = static_cast<uint8_t>(levels_.size());
        const uint32_t count = static_cast<uint32_t>((ranks_ >> shifts[k]) + 1);
        levels_.push_back({shifts[k], bins});
        bins += count;
    }
    for (size_t i = 0; i < n; ++i)
        level_of_[i] = renumber[level_of_[i]];
    // Counting pass: fill counts each bin's entries, then becomes the write cursor.
    bins_.assign(bins, Bin{0, 0});
    for (uint32_t i = 0; i < n; ++i)
        if (p.buffers[i].size > 0) ++bins_[bin_of(i)].fill;
    size_t total = 0;
    for (Bin& b : bins_) {
        b.start = static_cast<uint32_t>(total);
        total += b.fill;
        b.fill = 0;
    }
    entries_.reset(new Entry[total]);
}

uint64_t OverlapIndex::overlapping_pairs(const std::vector<bool>* among) const {
    // Buffer i overlaps (itself and) every j with lo_j < hi_i, except those with hi_j <= lo_i
    // (which also have lo_j < hi_i): O(n + T) with counts per rank.
    const size_t n = lo_.size();
    auto counted = [among](size_t i) { return !among || (*among)[i]; };
    std::vector<uint64_t> starts_before(ranks_ + 1, 0), ends_by(ranks_ + 1, 0);
    uint64_t members = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!counted(i)) continue;
        ++starts_before[lo_[i] + 1];
        ++ends_by[hi_[i]];
        ++members;
    }
    for (uint32_t r = 1; r <= ranks_; ++r) {
        starts_before[r] += starts_before[r - 1];
        ends_by[r] += ends_by[r - 1];
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i)
        if (counted(i)) sum += starts_before[hi_[i]] - ends_by[lo_[i]];
    return (sum - members) / 2;
}

uint32_t OverlapIndex::bin_of(uint32_t buffer) const {
    const Level& level = levels_[level_of_[buffer]];
    return level.first + (lo_[buffer] >> level.shift);
}

void OverlapIndex::clear() {
    for (Bin& b : bins_)
        b.fill = 0;
}

void OverlapIndex::insert(uint32_t buffer, Span bytes) {
    const uint32_t b = bin_of(buffer);
    // Bins stay in offset order: a query's bins are sorted runs, merged rather than sorted.
    Entry* first = entries_.get() + bins_[b].start;
    Entry* last = first + bins_[b].fill++;
    Entry* at = std::upper_bound(first, last, bytes.offset, [](uint64_t offset, const Entry& e) {
        return offset < e.bytes.offset;
    });
    std::copy_backward(at, last, last + 1);
    *at = {bytes, lo_[buffer], hi_[buffer]};
}

size_t OverlapIndex::report(uint32_t bin, uint32_t lo, uint32_t hi, Span* out) const {
    const Entry* e = entries_.get() + bins_[bin].start;
    const Entry* last = e + bins_[bin].fill;
    size_t kept = 0;
    // Branch-free filter: every span is written, the cursor advances only for overlaps.
    for (; e != last; ++e) {
        out[kept] = e->bytes;
        kept += (e->lo < hi) & (lo < e->hi);
    }
    return kept;
}

template <typename Visit>
void OverlapIndex::for_each_bin(uint32_t lo, uint32_t hi, Visit&& visit) const {
    for (const Level& level : levels_) {
        const uint64_t width = uint64_t(1) << level.shift;
        // Starts in (lo - width, hi): bins of ranks max(lo + 1 - width, 0) .. hi - 1.
        const uint32_t first =
            lo + 1 > width ? static_cast<uint32_t>((lo + 1 - width) >> level.shift) : 0;
        const uint32_t last = (hi - 1) >> level.shift;
        for (uint32_t b = first; b <= last; ++b)
            visit(level.first + b);
    }
}

void OverlapIndex::prefetch(uint32_t buffer, int stage) const {
    if (stage == 0) {
        __builtin_prefetch(&lo_[buffer]);
        __builtin_prefetch(&hi_[buffer]);
        return;
    }
    const uint32_t lo = lo_[buffer];
    const uint32_t hi = hi_[buffer];
    if (lo >= hi) return;
    if (stage == 1)
        for_each_bin(lo, hi, [&](uint32_t bin) { __builtin_prefetch(&bins_[bin]); });
    else
        for_each_bin(lo, hi,
                     [&](uint32_t bin) { __builtin_prefetch(entries_.get() + bins_[bin].start); });
}

size_t OverlapIndex::query(uint32_t buffer, Span* out, std::vector<uint32_t>& runs) const {
    runs.clear();
    const uint32_t lo = lo_[buffer];
    const uint32_t hi = hi_[buffer];
    if (lo >= hi) return 0;
    size_t n = 0;
    for_each_bin(lo, hi, [&](uint32_t bin) {
        const size_t kept = report(bin, lo, hi, out + n);
        if (kept > 0) {
            runs.push_back(static_cast<uint32_t>(n));
            n += kept;
        }
    });
    return n;
}

void OverlapIndex::query(uint32_t buffer, std::vector<Span>& out) const {
    std::vector<uint32_t> runs;
    out.resize(lo_.size() + 1);
    out.resize(query(buffer, out.data(), runs));
}

void sort_by_offset(std::vector<Span>& spans, std::vector<Span>& scratch) {
    radix_sort(spans, scratch, [](const Span& s) { return s.offset; });
}

namespace {

// Rounds up to alignment; past UINT64_MAX align_up throws, naming buffer.
uint64_t aligned_top(uint64_t cursor, uint64_t alignment, size_t buffer) {
    uint64_t top = (cursor + alignment - 1) & ~(alignment - 1);
    return top >= cursor ? top
                         : align_up(cursor, alignment, fmt::format("buffer {} offset", buffer));
}

} // namespace

uint64_t best_gap(std::span<const Span> spans, uint64_t size, uint64_t alignment, size_t buffer) {
    return best_gap_in_heap(spans, size, alignment, buffer, 0);
}

uint64_t best_gap_in_heap(std::span<const Span> spans, uint64_t size, uint64_t alignment,
                          size_t buffer, uint64_t heap) {
    // Equal offsets may come in any order: the gaps seen do not depend on it, so the result
    // stays deterministic.
    uint64_t cursor = 0; // top of the spans seen so far
    uint64_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    auto consider = [&](uint64_t gap_end) {
        uint64_t start = (cursor + alignment - 1) & ~(alignment - 1);
        if (start >= cursor && start <= gap_end && gap_end - start >= size &&
            gap_end - cursor < best_gap) {
            best = start;
            best_gap = gap_end - cursor;
        }
    };
    for (const Span& s : spans) {
        if (s.offset > cursor) {
            consider(s.offset);
            if (best_gap == size) return best; // a perfect fit cannot be beaten
        }
        cursor = std::max(cursor, s.end);
    }
    if (heap > cursor) consider(heap);
    return best_gap != UINT64_MAX ? best : aligned_top(cursor, alignment, buffer);
}

uint64_t first_gap(std::span<const Span> spans, uint64_t size, uint64_t alignment, size_t buffer) {
    uint64_t cursor = 0; // top of the spans seen so far
    for (const Span& s : spans) {
        if (s.offset > cursor) {
            uint64_t start = (cursor + alignment - 1) & ~(alignment - 1);
            if (start >= cursor && start <= s.offset && s.offset - start >= size) return start;
        }
        cursor = std::max(cursor, s.end);
    }
    return aligned_top(cursor, alignment, buffer);
}

namespace {

// Work units (GapPlacer::last_work) of a query: the scan's fixed part (it adds one per placed
// buffer), the index's fixed part and its part per span reported. Gathering, merging and
// scanning a reported span costs several times a scanned one. (Set for the segment tree the
// binned index replaced; kept, since they decide multi-order's budget and so its plans.)
constexpr uint64_t kScanQueryCost = 16;
constexpr uint64_t kIndexQueryCost = 600;
constexpr uint64_t kIndexSpanCost = 8;

// The placed buffers in offset order; a query scans them all and keeps those overlapping in
// time, which come out already sorted by offset.
class OffsetOrderedScan {
  public:
    explicit OffsetOrderedScan(const OffsetProblem& p)
        : p_(p), found_(new Span[p.buffers.size() + 1]) {
        placed_.reserve(p.buffers.size());
    }
    void clear() { placed_.clear(); }
    void insert(uint32_t buffer, Span bytes) {
        const Buffer& b = p_.buffers[buffer];
        auto at = std::upper_bound(
            placed_.begin(), placed_.end(), bytes.offset,
            [](uint64_t offset, const Placed& x) { return offset < x.bytes.offset; });
        placed_.insert(at, Placed{bytes, b.begin, b.end});
    }
    // Many inserts at once, without a query in between: append, then one sort.
    void append(uint32_t buffer, Span bytes) {
        const Buffer& b = p_.buffers[buffer];
        placed_.push_back(Placed{bytes, b.begin, b.end});
    }
    void end_appends() {
        // Equal offsets may end up in any order: the gap searches do not depend on it.
        std::sort(placed_.begin(), placed_.end(),
                  [](const Placed& x, const Placed& y) { return x.bytes.offset < y.bytes.offset; });
    }
    std::span<const Span> query_sorted(uint32_t buffer) {
        const Buffer& q = p_.buffers[buffer];
        // Branch-free filter: every span is written, the cursor advances only for overlaps.
        size_t kept = 0;
        for (const Placed& x : placed_) {
            found_[kept] = x.bytes;
            kept += (x.begin < q.end) & (q.begin < x.end);
        }
        TMMU_ASSERT(
            std::is_sorted(found_.get(), found_.get() + kept,
                           [](const Span& a, const Span& b) { return a.offset < b.offset; }),
            "the scan keeps placed buffers in offset order");
        return {found_.get(), kept};
    }
    void prefetch(uint32_t, int) const {}
    // Work units of the last query: every placed buffer is read once.
    uint64_t cost(std::span<const Span>) const { return placed_.size() + kScanQueryCost; }

  private:
    struct Placed {
        Span bytes;
        uint64_t begin;
        uint64_t end;
    };
    const OffsetProblem& p_;
    std::vector<Placed> placed_;
    std::unique_ptr<Span[]> found_; // room for every buffer plus the one overwritten last
};

// Merges two runs sorted by offset into out without branching on the comparison (which a
// branch predictor could not guess).
void merge_two(const Span* a, const Span* a_end, const Span* b, const Span* b_end, Span* out) {
    while (a != a_end && b != b_end) {
        const bool take_b = b->offset < a->offset;
        *out++ = take_b ? *b : *a;
        b += take_b;
        a += !take_b;
    }
    out = std::copy(a, a_end, out);
    std::copy(b, b_end, out);
}

// Merges the sorted runs of spans[0, n) that begin at runs (ascending, the first at 0),
// pairwise, bottom up, between spans and scratch; returns the one holding the sorted spans.
Span* merge_runs(Span* spans, Span* scratch, size_t n, std::vector<uint32_t>& runs) {
    while (runs.size() > 1) {
        size_t kept = 0;
        for (size_t r = 0; r < runs.size(); r += 2) {
            const size_t begin = runs[r];
            const size_t middle = r + 1 < runs.size() ? runs[r + 1] : n;
            const size_t end = r + 2 < runs.size() ? runs[r + 2] : n;
            merge_two(spans + begin, spans + middle, spans + middle, spans + end, scratch + begin);
            runs[kept++] = static_cast<uint32_t>(begin);
        }
        runs.resize(kept);
        std::swap(spans, scratch);
    }
    return spans;
}

// OverlapIndex answers in no particular order; sorting makes it interchangeable with the scan.
struct SortedIndexQuery {
    OverlapIndex& index;
    std::vector<Span> found = {};
    std::vector<Span> scratch = {};
    void clear() { index.clear(); }
    void insert(uint32_t buffer, Span bytes) { index.insert(buffer, bytes); }
    void append(uint32_t buffer, Span bytes) { index.insert(buffer, bytes); }
    void end_appends() {}
    void prefetch(uint32_t buffer, int stage) const { index.prefetch(buffer, stage); }
    std::vector<uint32_t> runs = {};
    std::span<const Span> query_sorted(uint32_t buffer) {
        if (found.empty()) {
            found.resize(index.size() + 1);
            scratch.resize(index.size() + 1);
        }
        const size_t n = index.query(buffer, found.data(), runs);
        return {merge_runs(found.data(), scratch.data(), n, runs), n};
    }
    // Work units of the last query.
    uint64_t cost(std::span<const Span> reported) const {
        return kIndexSpanCost * reported.size() + kIndexQueryCost;
    }
};

// The cheaper search by the work units of GapPlacer::last_work: the scan reads about n^2 / 2
// spans per run; the index reports each overlapping pair once (when the later of the two is
// placed) and pays a fixed cost per query.
bool prefer_scan(const OverlapIndex& index) {
    const uint64_t n = index.size();
    return n * n / 2 <= kIndexSpanCost * index.overlapping_pairs() + kIndexQueryCost * n;
}

// Queries read memory that depends only on the buffer, not on where earlier buffers went: at a
// million buffers most of it is out of cache, so the pass asks for it a few buffers ahead (the
// search's own data in stages, then the buffer and its offset).
// Measured: a quarter less time per pass on the random problem of 1M buffers.
constexpr size_t kPrefetchDistance = 4;

template <typename Search>
void prefetch(const Search& search, const OffsetProblem& p, const std::vector<uint64_t>& offsets,
              const std::vector<uint32_t>& order, size_t k) {
    for (int stage = 0; stage < 3; ++stage) {
        const size_t ahead = k + (3 - stage) * kPrefetchDistance;
        if (ahead < order.size()) search.prefetch(order[ahead], stage);
    }
    if (k + kPrefetchDistance < order.size()) {
        const uint32_t next = order[k + kPrefetchDistance];
        __builtin_prefetch(&p.buffers[next]);
        __builtin_prefetch(&offsets[next]);
    }
}

} // namespace

GapPlacer::GapPlacer(const OffsetProblem& p, OverlapSearch search) : p_(p) {
    if (search == OverlapSearch::Scan ||
        (search == OverlapSearch::Automatic && p.buffers.size() <= kScanLimit))
        return;
    index_ = std::make_unique<OverlapIndex>(p);
    if (search == OverlapSearch::Automatic && prefer_scan(*index_)) index_.reset();
}

std::vector<uint64_t> GapPlacer::place(Seed seed, const std::vector<uint32_t>& order,
                                       const Progress& progress, std::string_view stage,
                                       GapRule rule) {
    return place_after(std::move(seed), order, 0, {}, progress, stage, rule);
}

std::optional<std::vector<uint64_t>>
GapPlacer::place_below(Seed seed, const std::vector<uint32_t>& order, uint64_t limit,
                       const Progress& progress, std::string_view stage, GapRule rule) {
    if (index_) {
        SortedIndexQuery search{*index_};
        return run(search, std::move(seed), order, 0, nullptr, rule, progress, stage, limit);
    }
    OffsetOrderedScan search(p_);
    return run(search, std::move(seed), order, 0, nullptr, rule, progress, stage, limit);
}

uint64_t GapPlacer::whole_run_work(const Seed& seed) const {
    const OffsetProblem& p = p_;
    const size_t n = p.buffers.size();
    // Queried: the unplaced buffers. Inserted before the queries: the placed ones of size > 0.
    uint64_t queries = 0;
    uint64_t inserted = 0;
    std::vector<bool> seeded(n), indexed(n); // inserted before the queries; inserted at all
    for (size_t i = 0; i < n; ++i) {
        seeded[i] = seed.placed[i] && p.buffers[i].size > 0;
        indexed[i] = seeded[i] || !seed.placed[i];
        queries += !seed.placed[i];
        inserted += seeded[i];
    }
    if (!index_) // query k reads the inserted buffers and the k queried before it
        return n + queries * (inserted + kScanQueryCost) + queries * (queries - 1) / 2;
    // Each overlapping pair with a queried buffer is reported once, by the later query. Passes
    // that give up mostly share one seed: its count is kept (O(n + T) to count again).
    if (seed.placed != reported_for_) {
        reported_for_ = seed.placed;
        reported_ = index_->overlapping_pairs(&indexed) - index_->overlapping_pairs(&seeded);
    }
    return n + queries * kIndexQueryCost + reported_ * kIndexSpanCost;
}

std::vector<uint64_t> GapPlacer::place_after(Seed seed, const std::vector<uint32_t>& order,
                                             size_t kept, const std::vector<uint64_t>& previous,
                                             const Progress& progress, std::string_view stage,
                                             GapRule rule) {
    if (index_) {
        SortedIndexQuery search{*index_};
        return *run(search, std::move(seed), order, kept, &previous, rule, progress, stage,
                    kNoLimit);
    }
    OffsetOrderedScan search(p_);
    return *run(search, std::move(seed), order, kept, &previous, rule, progress, stage, kNoLimit);
}

template <typename Search>
std::optional<std::vector<uint64_t>>
GapPlacer::run(Search& search, Seed seed, const std::vector<uint32_t>& order, size_t kept,
               const std::vector<uint64_t>* previous, GapRule rule, const Progress& progress,
               std::string_view stage, uint64_t limit) {
    const OffsetProblem& p = p_;
    progress.check_cancel(stage);
    search.clear();
    work_ = 0;
    uint64_t heap = 0; // the height of everything placed so far (GapRule::BestHeap)
    auto append = [&](uint32_t i) {
        const Span bytes{seed.offsets[i], end_of(seed.offsets[i], p.buffers[i].size, i)};
        search.append(i, bytes);
        heap = std::max(heap, bytes.end);
    };
    for (uint32_t i = 0; i < p.buffers.size(); ++i)
        if (seed.placed[i] && p.buffers[i].size > 0) append(i);
    kept = std::min(kept, order.size());
    for (size_t k = 0; k < kept; ++k) {
        uint32_t i = order[k];
        if (seed.placed[i]) continue;
        seed.offsets[i] = (*previous)[i];
        append(i);
    }
    search.end_appends();
    work_ += p.buffers.size();
    // The plan's height (pins of size 0 count: solution_height); it only grows as buffers are
    // placed, so once it reaches limit, so would the plan.
    uint64_t height = std::max(heap, seed.pinned_top);
    // A run that gives up is charged as a whole one: budgets then spend alike, and choose
    // alike, whether or not a pass gave up.
    auto give_up = [&] {
        work_ = whole_run_work(seed);
        return std::nullopt;
    };
    if (reaches(height, limit)) return give_up();
    for (size_t k = kept; k < order.size(); ++k) {
        uint32_t i = order[k];
        if ((k & 1023) == 0) progress.check_cancel(stage);
        prefetch(search, p, seed.offsets, order, k);
        if (seed.placed[i]) continue;
        const Buffer& b = p.buffers[i];
        std::span<const Span> spans = search.query_sorted(i);
        work_ += search.cost(spans);
        uint64_t offset = 0;
        switch (rule) {
        case GapRule::Best:
            offset = best_gap(spans, b.size, b.alignment, i);
            break;
        case GapRule::First:
            offset = first_gap(spans, b.size, b.alignment, i);
            break;
        case GapRule::BestHeap:
            offset = best_gap_in_heap(spans, b.size, b.alignment, i, heap);
            break;
        }
        seed.offsets[i] = offset;
        const uint64_t end = end_of(offset, b.size, i);
        search.insert(i, {offset, end});
        heap = std::max(heap, end);
        height = std::max(height, end);
        if (reaches(height, limit)) return give_up();
    }
    return std::move(seed.offsets);
}

} // namespace tmmu::placement
