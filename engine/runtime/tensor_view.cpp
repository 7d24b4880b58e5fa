#include "runtime/tensor_view.h"

#include "core/checked.h"
#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu::runtime {

uint64_t TensorViewDesc::elements() const {
    uint64_t n = 1;
    for (uint8_t d = 0; d < rank && d < kMaxViewRank; ++d)
        n *= shape[d]; // at most four factors below 2^32: checked by check_view's caller
    return n;
}

uint64_t TensorViewDesc::bytes() const {
    return elements() * dtype_bytes(dtype);
}

namespace {

[[noreturn]] void rank_too_high(size_t rank, std::string_view where) {
    fail(FailureCode::UnsupportedTensorRank, std::string(where),
         fmt::format("rank {} is above the runtime's {} (v1 plans keep views at rank <= {})", rank,
                     kMaxViewRank, kMaxViewRank));
}

void check_dims(const TensorViewDesc& v, std::string_view where) {
    for (uint8_t d = 0; d < kMaxViewRank; ++d) {
        if (d >= v.rank && v.shape[d] != 0)
            fail(FailureCode::InvalidExecutionPlan, std::string(where),
                 fmt::format("dimension {} is set past rank {}", d, v.rank));
        if (d < v.rank && v.shape[d] == 0)
            fail(FailureCode::InvalidExecutionPlan, std::string(where),
                 fmt::format("dimension {} is 0", d));
    }
    // Four dims below 2^32 can overflow uint64 together: bound the product before bytes().
    uint64_t n = dtype_bytes(v.dtype);
    for (uint8_t d = 0; d < v.rank; ++d)
        n = checked_mul(n, v.shape[d], where);
}

void row_major_strides(TensorViewDesc& v) {
    uint64_t stride = 1;
    for (int d = int(v.rank) - 1; d >= 0; --d) {
        v.stride_elems[size_t(d)] = uint32_t(std::min<uint64_t>(stride, UINT32_MAX));
        stride *= v.shape[size_t(d)];
    }
}

} // namespace

TensorViewDesc contiguous_view(DType dtype, std::span<const uint64_t> shape,
                               std::string_view where) {
    if (shape.size() > kMaxViewRank) rank_too_high(shape.size(), where);
    TensorViewDesc v;
    v.dtype = dtype;
    v.rank = uint8_t(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0 || shape[d] > UINT32_MAX)
            fail(FailureCode::InvalidExecutionPlan, std::string(where),
                 fmt::format("dimension {} is {}: expected 1 to 2^32-1", d, shape[d]));
        v.shape[d] = uint32_t(shape[d]);
    }
    check_dims(v, where);
    row_major_strides(v);
    return v;
}

void check_view(const TensorViewDesc& view, std::string_view where) {
    if (view.rank > kMaxViewRank) rank_too_high(view.rank, where);
    check_dims(view, where);
    if (view.layout != ViewLayout::Contiguous) return;
    TensorViewDesc expected = view;
    expected.stride_elems = {};
    row_major_strides(expected);
    if (expected.stride_elems != view.stride_elems)
        fail(FailureCode::InvalidExecutionPlan, std::string(where),
             "a contiguous view's strides are not row-major");
}

std::string_view layout_name(ViewLayout layout) {
    switch (layout) {
    case ViewLayout::Contiguous:
        return "contiguous";
    case ViewLayout::Strided:
        return "strided";
    case ViewLayout::BackendNative:
        return "backend_native";
    }
    return "unknown";
}

} // namespace tmmu::runtime
