#pragma once
// Strict UTF-8 validation: no overlong forms, no surrogates, nothing above U+10FFFF.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tmmu {

bool is_valid_utf8(const uint8_t* s, size_t n);
bool is_valid_utf8(std::string_view s);

} // namespace tmmu
