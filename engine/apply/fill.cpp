#include "apply/fill.h"

#include "core/failure.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fmt/format.h>

namespace tmmu {

namespace {

// splitmix64's finaliser: a well-mixed 64-bit word per 8-byte word of the arena.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// The byte at arena offset o is byte (o % 8), little-endian on every host, of the word mixed
// from o / 8 and a key mixed from the seed, then the arena (chained mixes, so nearby seeds or
// arenas give unrelated patterns): one mix per 8-byte word.
uint64_t pattern_key(uint64_t seed, uint32_t arena) {
    return mix(mix(seed) ^ arena);
}

uint64_t pattern_word(uint64_t key, uint64_t word_index) {
    return mix(key ^ word_index);
}

std::byte pattern_byte(uint64_t key, uint64_t at) {
    return std::byte((pattern_word(key, at >> 3) >> (8 * (at & 7))) & 0xff);
}

// The word's eight bytes in memory order, so a whole aligned word is one 8-byte copy.
uint64_t in_memory_order(uint64_t word) {
    if constexpr (std::endian::native == std::endian::little) return word;
    uint64_t swapped = 0;
    for (int b = 0; b < 8; ++b)
        swapped = (swapped << 8) | ((word >> (8 * b)) & 0xff);
    return swapped;
}

// Splits `size` bytes from arena offset `offset` into a head up to the next 8-byte boundary,
// whole words, and a tail, and calls on_byte(i) / on_word(i) (i indexes from `offset`) in
// order while they return true. Invariant: on_word is called only where offset + i is a
// multiple of 8 and 8 bytes remain, so patterns are taken word by word.
template <class OnByte, class OnWord>
void each_position(uint64_t offset, uint64_t size, OnByte on_byte, OnWord on_word) {
    uint64_t i = 0;
    for (; i < size && ((offset + i) & 7) != 0; ++i)
        if (!on_byte(i)) return;
    for (; size - i >= 8; i += 8)
        if (!on_word(i)) return;
    for (; i < size; ++i)
        if (!on_byte(i)) return;
}

} // namespace

std::string_view fill_kind_name(FillKind k) {
    return k == FillKind::Zero ? "zero" : "debug";
}

std::string_view data_policy_name(DataPolicy p) {
    switch (p) {
    case DataPolicy::Standard:
        return "standard";
    case DataPolicy::Confidential:
        return "confidential";
    case DataPolicy::Regulated:
        return "regulated";
    }
    return "standard";
}

void check_fill_allowed(const FillSpec& fill, DataPolicy policy) {
    if (fill.kind == FillKind::Debug && policy != DataPolicy::Standard)
        fail(FailureCode::InvalidArgument, "fill",
             fmt::format("a debug fill is forbidden under the {} data policy, where only zeros "
                         "may be written (seed 000 DebugFillTensor_v1); fill with zeros",
                         data_policy_name(policy)));
}

void fill_bytes(const FillSpec& fill, uint32_t arena, uint64_t offset, std::byte* at,
                uint64_t size) {
    if (size == 0) return; // `at` may be null for an empty arena
    if (fill.kind == FillKind::Zero) {
        std::memset(at, 0, size);
        return;
    }
    const uint64_t key = pattern_key(fill.seed, arena);
    each_position(
        offset, size,
        [&](uint64_t i) {
            at[i] = pattern_byte(key, offset + i);
            return true;
        },
        [&](uint64_t i) {
            const uint64_t word = in_memory_order(pattern_word(key, (offset + i) >> 3));
            std::memcpy(at + i, &word, 8);
            return true;
        });
}

uint64_t first_mismatch(const FillSpec& fill, uint32_t arena, uint64_t offset, const std::byte* at,
                        uint64_t size) {
    if (size == 0) return 0;
    if (fill.kind == FillKind::Zero)
        return uint64_t(std::find_if(at, at + size, [](std::byte b) { return b != std::byte{0}; }) -
                        at);
    const uint64_t key = pattern_key(fill.seed, arena);
    uint64_t found = size;
    const auto byte_matches = [&](uint64_t i) {
        if (at[i] == pattern_byte(key, offset + i)) return true;
        found = i;
        return false;
    };
    each_position(offset, size, byte_matches, [&](uint64_t i) {
        const uint64_t word = in_memory_order(pattern_word(key, (offset + i) >> 3));
        if (std::memcmp(at + i, &word, 8) == 0) return true;
        for (uint64_t b = i;; ++b) // the word differs, so one of its bytes does
            if (!byte_matches(b)) return false;
    });
    return found;
}

} // namespace tmmu
