#include "plan/strategies/orders.h"

#include "core/radix_sort.h"

#include <algorithm>
#include <array>
#include <bit>

namespace tmmu::placement {

uint64_t length(const Buffer& b) {
    return b.end - b.begin;
}

namespace {

// Keys of one buffer, most significant first, each in ascending order: a key wanted in
// descending order is complemented (~x).
template <size_t K>
using Keys = std::array<uint64_t, K>;

// The buffer indices sorted by keys_of(i), ties by index. Where several keys' ranges fit in 64 bits
// side by side (each less its minimum; sizes, times and counts rarely need more), one stable
// radix sort on the packed key, gathered in index order; else stable radix sorts from the least
// significant key up, on (key, index) pairs gathered in the current order. A comparison sort
// reads two buffers at random per comparison (measured at a million buffers: three to five
// times slower than the passes); packing saves the passes of every key but one and the gathers
// at random that they need (order_by_size at a million buffers: 30-40 % less time, measured
// interleaved with the previous code).
template <size_t K, typename KeysOf>
std::vector<uint32_t> sorted_by_keys(const OffsetProblem& p, KeysOf keys_of) {
    struct Keyed {
        uint64_t key;
        uint32_t index;
    };
    const size_t n = p.buffers.size();
    std::vector<Keyed> keyed(n), scratch;
    for (uint32_t i = 0; i < n; ++i)
        keyed[i].index = i;
    auto sort_by_key = [&](auto key_of) {
        for (Keyed& x : keyed)
            x.key = key_of(x.index);
        radix_sort(keyed, scratch, [](const Keyed& x) { return x.key; });
    };
    auto in_order = [&] {
        std::vector<uint32_t> order(n);
        for (size_t j = 0; j < n; ++j)
            order[j] = keyed[j].index;
        return order;
    };
    if constexpr (K == 1) {
        sort_by_key([&](uint32_t i) { return keys_of(i)[0]; });
        return in_order();
    }
    Keys<K> low, high;
    low.fill(UINT64_MAX);
    high.fill(0);
    for (uint32_t i = 0; i < n; ++i) {
        const Keys<K> keys = keys_of(i);
        for (size_t k = 0; k < K; ++k) {
            low[k] = std::min(low[k], keys[k]);
            high[k] = std::max(high[k], keys[k]);
        }
    }
    std::array<int, K> width;
    int packed_width = 0;
    for (size_t k = 0; k < K; ++k) {
        width[k] = n == 0 ? 0 : std::bit_width(high[k] - low[k]);
        packed_width += width[k];
    }
    if (packed_width <= 64) {
        sort_by_key([&](uint32_t i) {
            const Keys<K> keys = keys_of(i);
            uint64_t packed = 0;
            for (size_t k = 0; k < K; ++k) // a width of 64 is the only key: no shift needed
                packed = (width[k] == 64 ? 0 : packed << width[k]) | (keys[k] - low[k]);
            return packed;
        });
    } else {
        for (size_t k = K; k-- > 0;)
            sort_by_key([&](uint32_t i) { return keys_of(i)[k]; });
    }
    return in_order();
}

__extension__ typedef unsigned __int128 Area; // size * length never overflows 128 bits

// The two halves of a 128-bit value, complemented: sorted ascending, they put the value in
// descending order.
Keys<2> descending_128(Area v) {
    return {~uint64_t(v >> 64), ~uint64_t(v)};
}

} // namespace

std::vector<uint32_t> order_by_size(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{~b[i].size, ~length(b[i])}; });
}

std::vector<uint32_t> order_tflm(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{~b[i].size, ~uint64_t(i)}; });
}

std::vector<uint32_t> order_tflite_arena(const OffsetProblem& p) {
    const auto& b = p.buffers;
    uint64_t first = UINT64_MAX, last = 0;
    for (const Buffer& buffer : b) {
        first = std::min(first, buffer.begin);
        last = std::max(last, buffer.end);
    }
    // Whole-life buffers first, in index order; then the others by size desc, begin asc.
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        if (b[i].begin == first && b[i].end == last) return Keys<3>{0, 0, 0};
        return Keys<3>{1, ~b[i].size, b[i].begin};
    });
}

std::vector<uint32_t> order_tvm_size(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        return Keys<3>{~b[i].size, ~conflicts[i], ~uint64_t(i)};
    });
}

std::vector<uint32_t> order_tvm_conflicts(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        return Keys<3>{~conflicts[i], ~b[i].size, ~uint64_t(i)};
    });
}

std::vector<uint32_t> order_by_size_index(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<1>(p, [&b](uint32_t i) { return Keys<1>{~b[i].size}; });
}

std::vector<uint32_t> order_by_birth(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<1>(p, [&b](uint32_t i) { return Keys<1>{b[i].begin}; });
}

std::vector<uint32_t> order_by_death(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<1>(p, [&b](uint32_t i) { return Keys<1>{b[i].end}; });
}

std::vector<uint32_t> order_by_length(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{~length(b[i]), ~b[i].size}; });
}

std::vector<uint32_t> order_by_area(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(
        p, [&b](uint32_t i) { return descending_128(Area(b[i].size) * length(b[i])); });
}

std::vector<uint32_t> order_by_begin(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{b[i].begin, ~b[i].size}; });
}

std::vector<uint32_t> order_by_size_begin(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{~b[i].size, b[i].begin}; });
}

std::vector<uint32_t> order_by_size_end(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{~b[i].size, ~b[i].end}; });
}

std::vector<uint32_t> order_by_begin_end(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&b](uint32_t i) { return Keys<2>{b[i].begin, b[i].end}; });
}

std::vector<uint32_t> order_peak_first(const OffsetProblem& p) {
    const std::vector<bool> peak = live_at_peak(p);
    const auto& b = p.buffers;
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        return Keys<3>{peak[i] ? 0u : 1u, ~b[i].size, ~length(b[i])};
    });
}

std::vector<uint32_t> order_peak_first_by_length(const OffsetProblem& p) {
    const std::vector<bool> peak = live_at_peak(p);
    const auto& b = p.buffers;
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        return Keys<3>{peak[i] ? 0u : 1u, ~length(b[i]), ~b[i].size};
    });
}

std::vector<uint32_t> order_by_conflicts(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_by_keys<2>(p, [&](uint32_t i) { return Keys<2>{~conflicts[i], ~b[i].size}; });
}

std::vector<uint32_t> order_by_conflict_bytes(const OffsetProblem& p) {
    const std::vector<Bytes> bytes = conflict_bytes(p);
    const auto& b = p.buffers;
    return sorted_by_keys<3>(p, [&](uint32_t i) {
        const Keys<2> high = descending_128(bytes[i]);
        return Keys<3>{high[0], high[1], ~b[i].size};
    });
}

namespace {

// Sums over every buffer i of weight(j) over the buffers j that overlap i in time, i included.
// j overlaps i iff begin_j < end_i and not end_j <= begin_i; the second set lies inside the
// first (end_j <= begin_i < end_i implies begin_j < end_i), and i is in the first set only.
// Two merge walks: the buffers in end order against the begins in order, then the buffers in
// begin order against the ends in order, each adding up the weights it passes.
template <typename T, typename Weight>
std::vector<T> overlap_sums(const OffsetProblem& p, Weight weight) {
    const auto& b = p.buffers;
    const size_t n = b.size();
    const std::vector<uint32_t> by_begin = order_by_birth(p);
    const std::vector<uint32_t> by_end = order_by_death(p);
    std::vector<T> sums(n);
    T passed = 0;
    size_t k = 0;
    for (uint32_t i : by_end) {
        for (; k < n && b[by_begin[k]].begin < b[i].end; ++k)
            passed += weight(b[by_begin[k]]);
        sums[i] = passed; // begin_j < end_i
    }
    passed = 0;
    k = 0;
    for (uint32_t i : by_begin) {
        for (; k < n && b[by_end[k]].end <= b[i].begin; ++k)
            passed += weight(b[by_end[k]]);
        sums[i] -= passed; // end_j <= begin_i
    }
    return sums;
}

} // namespace

std::vector<bool> live_at_peak(const OffsetProblem& p) {
    const auto& b = p.buffers;
    const size_t n = b.size();
    const std::vector<uint32_t> by_begin = order_by_birth(p);
    const std::vector<uint32_t> by_end = order_by_death(p);
    // The live bytes only rise at a begin; ends at the same time come first (half-open
    // lifetimes). One walk records the live bytes after each time's begins, a second keeps
    // the times where they are at their maximum.
    std::vector<std::pair<uint64_t, Bytes>> after_begins;
    Bytes live = 0;
    size_t e = 0;
    for (size_t k = 0; k < n; ++k) {
        const uint64_t t = b[by_begin[k]].begin;
        for (; e < n && b[by_end[e]].end <= t; ++e)
            live -= b[by_end[e]].size;
        live += b[by_begin[k]].size;
        if (k + 1 == n || b[by_begin[k + 1]].begin != t) after_begins.emplace_back(t, live);
    }
    Bytes top = 0;
    for (const auto& [t, bytes] : after_begins)
        top = std::max(top, bytes);
    std::vector<uint64_t> peaks; // ascending
    for (const auto& [t, bytes] : after_begins)
        if (bytes == top) peaks.push_back(t);
    std::vector<bool> peak(n);
    for (size_t i = 0; i < n; ++i) {
        const auto at = std::lower_bound(peaks.begin(), peaks.end(), b[i].begin);
        peak[i] = at != peaks.end() && *at < b[i].end;
    }
    return peak;
}

std::vector<uint64_t> conflict_counts(const OffsetProblem& p) {
    std::vector<uint64_t> counts = overlap_sums<uint64_t>(p, [](const Buffer&) { return 1; });
    for (uint64_t& c : counts)
        --c; // not the buffer itself
    return counts;
}

std::vector<Bytes> conflict_bytes(const OffsetProblem& p) {
    std::vector<Bytes> bytes =
        overlap_sums<Bytes>(p, [](const Buffer& b) { return Bytes(b.size); });
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] -= p.buffers[i].size;
    return bytes;
}

const std::vector<uint32_t>& OrderCache::operator()(OrderFn order) {
    Entry* entry = nullptr;
    {
        std::lock_guard lock(mutex_);
        for (Entry& e : entries_)
            if (e.fn == order) entry = &e;
        if (!entry) entry = &entries_.emplace_back(order);
    }
    std::call_once(entry->made, [&] { entry->order = order(p_); });
    return entry->order;
}

void OrderCache::make(std::span<const OrderFn> orders) {
    for (OrderFn order : orders)
        (*this)(order);
}

} // namespace tmmu::placement
