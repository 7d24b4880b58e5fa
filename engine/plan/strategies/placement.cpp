#include "plan/strategies/placement.h"

#include "core/assert.h"
#include "core/checked.h"
#include "core/failure.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
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

OverlapIndex::OverlapIndex(const OffsetProblem& p) {
    std::vector<uint64_t> times;
    times.reserve(2 * p.buffers.size());
    for (const Buffer& b : p.buffers) {
        times.push_back(b.begin);
        times.push_back(b.end);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    if (times.size() > (size_t(1) << 30))
        fail(FailureCode::InvalidArgument, "offset placement",
             fmt::format("{} distinct lifetime bounds; at most 2^30 are supported", times.size()));
    auto rank = [&times](uint64_t t) {
        return static_cast<uint32_t>(std::lower_bound(times.begin(), times.end(), t) -
                                     times.begin());
    };
    lo_.resize(p.buffers.size());
    hi_.resize(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        lo_[i] = rank(p.buffers[i].begin);
        hi_[i] = rank(p.buffers[i].end);
    }
    const size_t leaves = times.size() > 1 ? times.size() - 1 : 1;
    width_ = std::bit_ceil(leaves);
    // Counting pass: fill_ counts each list's entries, then becomes the write cursor.
    fill_.assign(4 * width_, 0);
    for (uint32_t i = 0; i < p.buffers.size(); ++i)
        if (p.buffers[i].size > 0) for_each_list(i, [this](size_t list) { ++fill_[list]; });
    start_.resize(fill_.size());
    size_t total = 0;
    for (size_t l = 0; l < fill_.size(); ++l) {
        start_[l] = static_cast<uint32_t>(total);
        total += fill_[l];
        fill_[l] = 0;
    }
    if (total > UINT32_MAX)
        fail(FailureCode::InvalidArgument, "offset placement",
             fmt::format("{} overlap-index entries; at most {} are supported", total, UINT32_MAX));
    entries_.reset(new Span[total]);
}

template <typename Visit>
void OverlapIndex::for_each_list(uint32_t buffer, Visit&& visit) const {
    const uint64_t lo = lo_[buffer];
    const uint64_t hi = hi_[buffer];
    if (lo >= hi) return;
    for (uint64_t l = lo + width_, r = hi + width_; l < r; l >>= 1, r >>= 1) {
        if (l & 1) visit(2 * l++);
        if (r & 1) visit(2 * --r);
    }
    for (uint64_t v = lo + width_; v >= 1; v >>= 1)
        visit(2 * v + 1);
}

void OverlapIndex::clear() {
    std::fill(fill_.begin(), fill_.end(), 0);
}

void OverlapIndex::insert(uint32_t buffer, Span bytes) {
    for_each_list(buffer, [&](size_t list) { entries_[start_[list] + fill_[list]++] = bytes; });
}

void OverlapIndex::report(size_t list, std::vector<Span>& out) const {
    const Span* first = entries_.get() + start_[list];
    out.insert(out.end(), first, first + fill_[list]);
}

void OverlapIndex::query(uint32_t buffer, std::vector<Span>& out) const {
    out.clear();
    const uint64_t lo = lo_[buffer];
    const uint64_t hi = hi_[buffer];
    if (lo >= hi) return;
    for (uint64_t v = lo + width_; v >= 1; v >>= 1)
        report(2 * v, out); // cover leaf lo
    for (uint64_t l = lo + 1 + width_, r = hi + width_; l < r; l >>= 1, r >>= 1) {
        if (l & 1) report(2 * l++ + 1, out); // start in (lo, hi)
        if (r & 1) report(2 * --r + 1, out);
    }
}

void sort_by_offset(std::vector<Span>& spans, std::vector<Span>& scratch) {
    const size_t n = spans.size();
    if (n <= 32) { // insertion sort: cheaper than radix passes on a few elements
        for (size_t i = 1; i < n; ++i) {
            Span v = spans[i];
            size_t j = i;
            for (; j > 0 && spans[j - 1].offset > v.offset; --j)
                spans[j] = spans[j - 1];
            spans[j] = v;
        }
        return;
    }
    uint64_t any = 0;
    uint64_t all = ~uint64_t(0);
    for (const Span& s : spans) {
        any |= s.offset;
        all &= s.offset;
    }
    // Bits where all offsets agree need no pass: sort only the window of varying bits.
    const uint64_t varying = any ^ all;
    if (varying == 0) return;
    const int low = std::countr_zero(varying);
    const int high = 63 - std::countl_zero(varying);
    scratch.resize(n);
    for (int shift = low; shift <= high; shift += 8) {
        uint32_t position[256] = {};
        for (const Span& s : spans)
            ++position[(s.offset >> shift) & 0xff];
        uint32_t sum = 0;
        for (uint32_t& c : position)
            sum += std::exchange(c, sum); // counts become positions
        for (const Span& s : spans)
            scratch[position[(s.offset >> shift) & 0xff]++] = s;
        spans.swap(scratch);
    }
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
        TMMU_ASSERT(std::is_sorted(found_.get(), found_.get() + kept,
                                   [](const Span& a, const Span& b) { return a.offset < b.offset; }),
                    "the scan keeps placed buffers in offset order");
        return {found_.get(), kept};
    }
    // Work units of the last query: every placed buffer is read once.
    uint64_t cost(std::span<const Span>) const { return placed_.size() + 16; }

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

// OverlapIndex answers in no particular order; sorting makes it interchangeable with the scan.
struct SortedIndexQuery {
    OverlapIndex& index;
    std::vector<Span> found;
    std::vector<Span> scratch;
    void clear() { index.clear(); }
    void insert(uint32_t buffer, Span bytes) { index.insert(buffer, bytes); }
    void append(uint32_t buffer, Span bytes) { index.insert(buffer, bytes); }
    void end_appends() {}
    std::span<const Span> query_sorted(uint32_t buffer) {
        index.query(buffer, found);
        sort_by_offset(found, scratch);
        return found;
    }
    // Work units of the last query: gathering, radix-sorting and scanning each reported span
    // costs several times a scanned one, and the walk up the tree touches about 2 log T lists.
    uint64_t cost(std::span<const Span> reported) const { return 8 * reported.size() + 600; }
};

// The cheaper search by the work units of GapPlacer::last_work: the scan reads about n^2 / 2
// spans per run; the index reports each overlapping pair once (when the later of the two is
// placed) and pays a fixed cost per query.
bool prefer_scan(const OffsetProblem& p) {
    const uint64_t n = p.buffers.size();
    if (n <= kScanLimit) return true;
    return n * n / 2 <= 8 * overlapping_pairs(p) + 600 * n;
}

} // namespace

GapPlacer::GapPlacer(const OffsetProblem& p, OverlapSearch search) : p_(p) {
    const bool scan =
        search == OverlapSearch::Scan || (search == OverlapSearch::Automatic && prefer_scan(p));
    if (!scan) index_ = std::make_unique<OverlapIndex>(p);
}

std::vector<uint64_t> GapPlacer::place(Seed seed, const std::vector<uint32_t>& order,
                                       const Progress& progress, std::string_view stage,
                                       GapRule rule) {
    return place_after(std::move(seed), order, 0, {}, progress, stage, rule);
}

std::vector<uint64_t> GapPlacer::place_after(Seed seed, const std::vector<uint32_t>& order,
                                             size_t kept, const std::vector<uint64_t>& previous,
                                             const Progress& progress, std::string_view stage,
                                             GapRule rule) {
    if (index_) {
        SortedIndexQuery search{*index_, {}, {}};
        return run(search, std::move(seed), order, kept, &previous, rule, progress, stage);
    }
    OffsetOrderedScan search(p_);
    return run(search, std::move(seed), order, kept, &previous, rule, progress, stage);
}

template <typename Search>
std::vector<uint64_t> GapPlacer::run(Search& search, Seed seed, const std::vector<uint32_t>& order,
                                     size_t kept, const std::vector<uint64_t>* previous,
                                     GapRule rule, const Progress& progress,
                                     std::string_view stage) {
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
    for (size_t k = kept; k < order.size(); ++k) {
        uint32_t i = order[k];
        if ((k & 1023) == 0) progress.check_cancel(stage);
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
    }
    return std::move(seed.offsets);
}

} // namespace tmmu::placement
