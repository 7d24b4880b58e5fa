#include "core/checked.h"

#include "core/failure.h"

#include <fmt/format.h>

namespace tmmu {

uint64_t checked_add(uint64_t a, uint64_t b, std::string_view where) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        fail(FailureCode::AllocationOverflow, std::string(where),
             fmt::format("{} + {} overflows uint64", a, b));
    return r;
}

uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view where) {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        fail(FailureCode::AllocationOverflow, std::string(where),
             fmt::format("{} * {} overflows uint64", a, b));
    return r;
}

uint64_t align_up(uint64_t value, uint64_t alignment, std::string_view where) {
    if (!is_power_of_two(alignment))
        fail(FailureCode::AlignmentViolation, std::string(where),
             fmt::format("alignment {} is not a power of two", alignment));
    return checked_add(value, alignment - 1, where) & ~(alignment - 1);
}

} // namespace tmmu
