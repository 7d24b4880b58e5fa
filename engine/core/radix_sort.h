#pragma once
// A stable LSD radix sort on a 64-bit key, 8 bits a pass, over only the window of key bits
// that differ between the elements (sizes and time steps rarely use all 64), and only the
// digits that split the elements; insertion sort for a few elements, where radix passes cost
// more.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace tmmu {

// Sorts v by key(element) ascending, equal keys in their present order. scratch is working
// memory, kept across calls by callers that sort often.
template <typename T, typename Key>
void radix_sort(std::vector<T>& v, std::vector<T>& scratch, Key key) {
    const size_t n = v.size();
    if (n <= 32) {
        for (size_t i = 1; i < n; ++i) {
            T x = v[i];
            size_t j = i;
            for (; j > 0 && key(v[j - 1]) > key(x); --j)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    uint64_t any = 0;
    uint64_t all = ~uint64_t(0);
    for (const T& x : v) {
        any |= key(x);
        all &= key(x);
    }
    const uint64_t varying = any ^ all; // bits where all keys agree need no pass
    if (varying == 0) return;
    const int low = std::countr_zero(varying);
    const int digits = (63 - std::countl_zero(varying) - low) / 8 + 1;
    // One read counts every digit (the passes then only scatter); a digit whose values all
    // fall in one bucket leaves the order as it is and is skipped.
    std::vector<std::array<uint32_t, 256>> position(digits);
    for (const T& x : v) {
        const uint64_t k = key(x) >> low;
        for (int d = 0; d < digits; ++d)
            ++position[d][(k >> (8 * d)) & 0xff];
    }
    scratch.resize(n);
    for (int d = 0; d < digits; ++d) {
        std::array<uint32_t, 256>& at = position[d];
        if (std::find(at.begin(), at.end(), uint32_t(n)) != at.end()) continue;
        uint32_t sum = 0;
        for (uint32_t& c : at)
            sum += std::exchange(c, sum); // counts become positions
        const int shift = low + 8 * d;
        for (const T& x : v)
            scratch[at[(key(x) >> shift) & 0xff]++] = x;
        v.swap(scratch);
    }
}

} // namespace tmmu
