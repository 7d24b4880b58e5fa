#include "plan/strategies/orders.h"

#include <algorithm>
#include <numeric>

namespace tmmu::placement {

uint64_t length(const Buffer& b) {
    return b.end - b.begin;
}

namespace {

template <typename Before>
std::vector<uint32_t> sorted_indices(const OffsetProblem& p, Before before) {
    std::vector<uint32_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        int c = before(a, b);
        return c != 0 ? c < 0 : a < b;
    });
    return order;
}

// -1 when x goes first because its key is larger, +1 when y does, 0 on a tie.
template <typename T>
int descending(const T& x, const T& y) {
    return x > y ? -1 : (x < y ? 1 : 0);
}

template <typename T>
int ascending(const T& x, const T& y) {
    return descending(y, x);
}

__extension__ typedef unsigned __int128 Area; // size * length never overflows 128 bits

} // namespace

std::vector<uint32_t> order_by_size(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = descending(b[x].size, b[y].size);
        return c != 0 ? c : descending(length(b[x]), length(b[y]));
    });
}

std::vector<uint32_t> order_tflm(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = descending(b[x].size, b[y].size);
        return c != 0 ? c : descending(x, y);
    });
}

std::vector<uint32_t> order_tflite_arena(const OffsetProblem& p) {
    const auto& b = p.buffers;
    uint64_t first = UINT64_MAX, last = 0;
    for (const Buffer& buffer : b) {
        first = std::min(first, buffer.begin);
        last = std::max(last, buffer.end);
    }
    const auto whole = [&](uint32_t i) { return b[i].begin == first && b[i].end == last; };
    return sorted_indices(p, [&](uint32_t x, uint32_t y) {
        if (whole(x) || whole(y)) return whole(x) == whole(y) ? 0 : (whole(x) ? -1 : 1);
        int c = descending(b[x].size, b[y].size);
        return c != 0 ? c : ascending(b[x].begin, b[y].begin);
    });
}

std::vector<uint32_t> order_tvm_size(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_indices(p, [&](uint32_t x, uint32_t y) {
        int c = descending(b[x].size, b[y].size);
        c = c != 0 ? c : descending(conflicts[x], conflicts[y]);
        return c != 0 ? c : descending(x, y);
    });
}

std::vector<uint32_t> order_tvm_conflicts(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_indices(p, [&](uint32_t x, uint32_t y) {
        int c = descending(conflicts[x], conflicts[y]);
        c = c != 0 ? c : descending(b[x].size, b[y].size);
        return c != 0 ? c : descending(x, y);
    });
}

std::vector<uint32_t> order_by_size_index(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(
        p, [&b](uint32_t x, uint32_t y) { return descending(b[x].size, b[y].size); });
}

std::vector<uint32_t> order_by_birth(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(
        p, [&b](uint32_t x, uint32_t y) { return ascending(b[x].begin, b[y].begin); });
}

std::vector<uint32_t> order_by_length(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = descending(length(b[x]), length(b[y]));
        return c != 0 ? c : descending(b[x].size, b[y].size);
    });
}

std::vector<uint32_t> order_by_area(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        return descending(Area(b[x].size) * length(b[x]), Area(b[y].size) * length(b[y]));
    });
}

std::vector<uint32_t> order_by_begin(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = ascending(b[x].begin, b[y].begin);
        return c != 0 ? c : descending(b[x].size, b[y].size);
    });
}

std::vector<uint32_t> order_by_size_begin(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = descending(b[x].size, b[y].size);
        return c != 0 ? c : ascending(b[x].begin, b[y].begin);
    });
}

std::vector<uint32_t> order_by_size_end(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = descending(b[x].size, b[y].size);
        return c != 0 ? c : descending(b[x].end, b[y].end);
    });
}

std::vector<uint32_t> order_by_begin_end(const OffsetProblem& p) {
    const auto& b = p.buffers;
    return sorted_indices(p, [&b](uint32_t x, uint32_t y) {
        int c = ascending(b[x].begin, b[y].begin);
        return c != 0 ? c : ascending(b[x].end, b[y].end);
    });
}

std::vector<uint32_t> order_by_conflicts(const OffsetProblem& p) {
    const std::vector<uint64_t> conflicts = conflict_counts(p);
    const auto& b = p.buffers;
    return sorted_indices(p, [&](uint32_t x, uint32_t y) {
        int c = descending(conflicts[x], conflicts[y]);
        return c != 0 ? c : descending(b[x].size, b[y].size);
    });
}

std::vector<uint32_t> order_by_conflict_bytes(const OffsetProblem& p) {
    const std::vector<Bytes> bytes = conflict_bytes(p);
    const auto& b = p.buffers;
    return sorted_indices(p, [&](uint32_t x, uint32_t y) {
        int c = descending(bytes[x], bytes[y]);
        return c != 0 ? c : descending(b[x].size, b[y].size);
    });
}

namespace {

// Sums over every buffer i of weight(j) over the buffers j that overlap i in time, i included.
// j overlaps i iff begin_j < end_i and not end_j <= begin_i; the second set lies inside the
// first (end_j <= begin_i < end_i implies begin_j < end_i), and i is in the first set only.
// Prefix sums over buffers sorted by begin and by end answer each in O(log n).
template <typename T, typename Weight>
std::vector<T> overlap_sums(const OffsetProblem& p, Weight weight) {
    const size_t n = p.buffers.size();
    std::vector<std::pair<uint64_t, T>> begins, ends;
    begins.reserve(n);
    ends.reserve(n);
    for (const Buffer& b : p.buffers) {
        begins.emplace_back(b.begin, weight(b));
        ends.emplace_back(b.end, weight(b));
    }
    auto prefix = [](std::vector<std::pair<uint64_t, T>>& v) {
        std::sort(v.begin(), v.end(),
                  [](const auto& x, const auto& y) { return x.first < y.first; });
        T sum = 0;
        for (auto& e : v)
            sum = e.second += sum; // e.second becomes the sum up to and including e
    };
    prefix(begins);
    prefix(ends);
    // The sum over the first k entries of v.
    auto sum_before = [](const std::vector<std::pair<uint64_t, T>>& v, size_t k) {
        return k == 0 ? T(0) : v[k - 1].second;
    };
    std::vector<T> sums(n);
    for (size_t i = 0; i < n; ++i) {
        const Buffer& b = p.buffers[i];
        size_t started = std::lower_bound(begins.begin(), begins.end(), b.end,
                                          [](const auto& e, uint64_t t) { return e.first < t; }) -
                         begins.begin();
        size_t ended = std::upper_bound(ends.begin(), ends.end(), b.begin,
                                        [](uint64_t t, const auto& e) { return t < e.first; }) -
                       ends.begin();
        sums[i] = sum_before(begins, started) - sum_before(ends, ended);
    }
    return sums;
}

} // namespace

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

} // namespace tmmu::placement
