#pragma once
// Strict UTF-8 validation: no overlong forms, no surrogates, nothing above U+10FFFF.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tmmu {

bool is_valid_utf8(const uint8_t* s, size_t n);
bool is_valid_utf8(std::string_view s);
// `s` with every byte that starts no valid sequence replaced by U+FFFD: text for what only
// names a thing (a file path in a checkpoint), never for ids that must stay distinct.
std::string valid_utf8(std::string_view s);

} // namespace tmmu
