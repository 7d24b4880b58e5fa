#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tmmu {

enum class DType : uint8_t { F64, F32, F16, BF16, F8E4M3, F8E5M2, I64, I32, I16, I8, U8, Bool };

// Bytes per element. Sub-byte types are not modelled: every dtype here is whole bytes.
uint64_t dtype_bytes(DType t);
std::string_view dtype_name(DType t);
// Accepts the canonical names ("f32", "bf16", "f8e4m3", ...) plus "f8" for f8e4m3.
std::optional<DType> parse_dtype(std::string_view name);

} // namespace tmmu
