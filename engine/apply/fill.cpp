#include "apply/fill.h"

#include "core/failure.h"

#include <algorithm>
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

// Calls on(byte index, pattern byte) for each of `size` bytes from arena offset `offset`, while
// on returns true. The byte at arena offset o is byte (o % 8), little-endian on every host, of
// the word mixed from o / 8 and a key mixed from the seed, then the arena (chained mixes, so
// nearby seeds or arenas give unrelated patterns): one mix per 8-byte word.
template <class On>
void each_pattern_byte(uint64_t seed, uint32_t arena, uint64_t offset, uint64_t size, On on) {
    const uint64_t key = mix(mix(seed) ^ arena);
    uint64_t i = 0;
    while (i < size) {
        const uint64_t at = offset + i;
        const uint64_t word = mix(key ^ (at >> 3));
        for (uint64_t b = at & 7; b < 8 && i < size; ++b, ++i)
            if (!on(i, std::byte((word >> (8 * b)) & 0xff))) return;
    }
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
    each_pattern_byte(fill.seed, arena, offset, size, [at](uint64_t i, std::byte b) {
        at[i] = b;
        return true;
    });
}

uint64_t first_mismatch(const FillSpec& fill, uint32_t arena, uint64_t offset, const std::byte* at,
                        uint64_t size) {
    if (size == 0) return 0;
    if (fill.kind == FillKind::Zero)
        return uint64_t(std::find_if(at, at + size, [](std::byte b) { return b != std::byte{0}; }) -
                        at);
    uint64_t found = size;
    each_pattern_byte(fill.seed, arena, offset, size, [&](uint64_t i, std::byte b) {
        if (at[i] == b) return true;
        found = i;
        return false;
    });
    return found;
}

} // namespace tmmu
