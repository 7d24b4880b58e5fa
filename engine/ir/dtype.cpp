#include "ir/dtype.h"

#include <array>
#include <utility>

namespace tmmu {
namespace {

struct DTypeInfo {
    DType type;
    std::string_view name;
    uint64_t bytes;
};

constexpr std::array<DTypeInfo, 12> kDTypes{{
    {DType::F64, "f64", 8},
    {DType::F32, "f32", 4},
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::F8E4M3, "f8e4m3", 1},
    {DType::F8E5M2, "f8e5m2", 1},
    {DType::I64, "i64", 8},
    {DType::I32, "i32", 4},
    {DType::I16, "i16", 2},
    {DType::I8, "i8", 1},
    {DType::U8, "u8", 1},
    {DType::Bool, "bool", 1},
}};

} // namespace

uint64_t dtype_bytes(DType t) {
    return kDTypes[static_cast<size_t>(t)].bytes;
}
std::string_view dtype_name(DType t) {
    return kDTypes[static_cast<size_t>(t)].name;
}

std::optional<DType> parse_dtype(std::string_view name) {
    if (name == "f8") return DType::F8E4M3;
    for (const auto& info : kDTypes)
        if (info.name == name) return info.type;
    return std::nullopt;
}

} // namespace tmmu
