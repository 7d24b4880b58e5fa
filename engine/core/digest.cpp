#include "core/digest.h"

#include "core/failure.h"

namespace tmmu {

std::string to_hex(const Digest& d) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    s.reserve(d.size() * 2);
    for (uint8_t b : d) {
        s.push_back(kHex[b >> 4]);
        s.push_back(kHex[b & 15]);
    }
    return s;
}

namespace {
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
} // namespace

Digest digest_from_hex(std::string_view hex, std::string_view where) {
    Digest d{};
    if (hex.size() != d.size() * 2)
        fail(FailureCode::InvalidArgument, std::string(where),
             "expected 64 hex characters, got " + std::to_string(hex.size()));
    for (size_t i = 0; i < d.size(); ++i) {
        const int hi = hex_value(hex[2 * i]);
        const int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            fail(FailureCode::InvalidArgument, std::string(where),
                 "non-hex character at position " + std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
        d[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return d;
}

} // namespace tmmu
