#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tmmu {

// "1048576", "64KiB", "1.5GiB", "2GB", "512M": binary (KiB, MiB, GiB, TiB, and K/M/G/T) and
// decimal (KB, MB, GB, TB) units. Throws Failure(InvalidArgument) naming `what` otherwise.
uint64_t parse_byte_size(std::string_view text, std::string_view what);
// "474.70 MiB"; exact bytes below 1 KiB ("96 B").
std::string format_bytes(uint64_t bytes);
// A count with its noun, singular for 1: "1 buffer", "0 buffers", "154 buffers" (English nouns
// whose plural adds "s": buffer, tensor, arena, session, ...).
std::string count_of(uint64_t n, std::string_view noun);
// A change in bytes, signed: "+1.50 GiB", "-96 B", "0" (every int64_t, INT64_MIN included).
std::string format_byte_delta(int64_t delta);

} // namespace tmmu
