#pragma once
// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface; OpenSSL stays out of the headers.
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

Digest sha256(const uint8_t* data, size_t size);
Digest sha256(const std::vector<uint8_t>& data);
Digest sha256(std::string_view text);

// 64 lowercase hex characters.
std::string to_hex(const Digest& d);
// Inverse of to_hex (either case). Throws Failure(InvalidArgument) unless `hex` is exactly 64
// hex characters; `where` names the field or argument it came from.
Digest digest_from_hex(std::string_view hex, std::string_view where);

} // namespace tmmu
