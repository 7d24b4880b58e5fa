#pragma once
// A SHA-256 digest as a value, and its text form. The hash itself lives in encoding/sha256.h;
// this header is here so that plans and checkpoints can carry digests without the engine's
// lower layers depending on the encoders.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tmmu {

using Digest = std::array<uint8_t, 32>; // SHA-256

// 64 lowercase hex characters.
std::string to_hex(const Digest& d);
// Inverse of to_hex (either case). Throws Failure(InvalidArgument) unless `hex` is exactly 64
// hex characters; `where` names the field or argument it came from.
Digest digest_from_hex(std::string_view hex, std::string_view where);

} // namespace tmmu
