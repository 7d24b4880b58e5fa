#pragma once
// Overflow-checked uint64 arithmetic for sizes and offsets (seed 0.C: abort on overflow,
// never clamp). Each helper takes "where" so the failure names the tensor or field involved.
#include <cstdint>
#include <string_view>

namespace tmmu {

uint64_t checked_add(uint64_t a, uint64_t b, std::string_view where);
uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view where);
// Rounds value up to a multiple of alignment (a power of two, >= 1).
uint64_t align_up(uint64_t value, uint64_t alignment, std::string_view where);

constexpr bool is_power_of_two(uint64_t v) {
    return v != 0 && (v & (v - 1)) == 0;
}

} // namespace tmmu
