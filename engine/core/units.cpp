#include "core/units.h"

#include "core/checked.h"
#include "core/failure.h"

#include <array>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <utility>

namespace tmmu {
namespace {

constexpr std::array<std::pair<std::string_view, uint64_t>, 13> kUnits{{
    {"", 1},
    {"B", 1},
    {"K", 1ull << 10},
    {"KiB", 1ull << 10},
    {"KB", 1000},
    {"M", 1ull << 20},
    {"MiB", 1ull << 20},
    {"MB", 1000000},
    {"G", 1ull << 30},
    {"GiB", 1ull << 30},
    {"GB", 1000000000},
    {"T", 1ull << 40},
    {"TiB", 1ull << 40},
}};

} // namespace

uint64_t parse_byte_size(std::string_view text, std::string_view what) {
    auto bad = [&] {
        fail(FailureCode::InvalidArgument, std::string(what),
             fmt::format("'{}' is not a byte size; expected e.g. 1048576, 64KiB, 1.5GiB, 2GB",
                         text));
    };
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
    if (digits == 0) bad();
    uint64_t whole = 0;
    if (std::from_chars(text.data(), text.data() + digits, whole).ec != std::errc()) bad();
    // Up to 6 fractional digits, kept as an integer numerator so no floating point is involved.
    uint64_t frac = 0, frac_scale = 1;
    size_t pos = digits;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
            if (frac_scale < 1000000)
                frac = frac * 10 + uint64_t(text[pos] - '0'), frac_scale *= 10;
            ++pos;
        }
    }
    std::string_view unit = text.substr(pos);
    for (const auto& [name, scale] : kUnits) {
        if (unit != name) continue;
        uint64_t value = checked_mul(whole, scale, what);
        return checked_add(value, checked_mul(frac, scale, what) / frac_scale, what);
    }
    bad();
    return 0;
}

std::string format_bytes(uint64_t bytes) {
    static constexpr std::array<const char*, 5> kNames{"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) return fmt::format("{} B", bytes);
    double v = double(bytes) / 1024.0;
    size_t i = 0;
    while (v >= 1024.0 && i + 1 < kNames.size())
        v /= 1024.0, ++i;
    return fmt::format("{:.2f} {}", v, kNames[i]);
}

std::string format_byte_delta(int64_t delta) {
    if (delta == 0) return "0";
    // Negating in unsigned arithmetic is defined for INT64_MIN too.
    const uint64_t magnitude = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
    return (delta > 0 ? "+" : "-") + format_bytes(magnitude);
}

std::string count_of(uint64_t n, std::string_view noun) {
    return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

} // namespace tmmu
