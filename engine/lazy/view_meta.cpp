#include "lazy/view_meta.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tmmu::lazy {

int64_t element_count(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0)
            fail(FailureCode::InvalidArgument, "shape",
                 fmt::format("shape {} has a dimension that is not positive", shape_text(shape)));
        if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements)
            fail(
                FailureCode::AllocationOverflow, "shape",
                fmt::format("shape {} has more than {} elements", shape_text(shape), kMaxElements));
    }
    return n;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
    std::vector<int64_t> strides(shape.size());
    int64_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    return strides;
}

std::string shape_text(const Shape& shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

bool ViewMeta::is_contiguous() const {
    return strides == contiguous_strides(shape);
}

ViewMeta identity_view(const Shape& base_shape) {
    return {0, base_shape, contiguous_strides(base_shape)};
}

namespace {

int64_t checked_dim(const ViewMeta& v, int64_t dim, const char* what) {
    const auto rank = static_cast<int64_t>(v.shape.size());
    const int64_t given = dim; // named as the program wrote it, not as counted from the end
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank)
        fail(FailureCode::InvalidArgument, what,
             fmt::format("dimension {} out of range for a tensor of shape {}", given,
                         shape_text(v.shape)));
    return dim;
}

} // namespace

ViewMeta slice_view(const ViewMeta& v, int64_t dim, int64_t start, int64_t end, int64_t step) {
    dim = checked_dim(v, dim, "slice");
    const int64_t size = v.shape[static_cast<size_t>(dim)];
    if (start < 0) start += size;
    if (end < 0) end += size;
    end = std::min(end, size);
    if (step <= 0 || start < 0 || start >= end)
        fail(FailureCode::InvalidArgument, "slice",
             fmt::format("empty or invalid range [{}, {}) step {} of dimension {} (size {})", start,
                         end, step, dim, size));
    ViewMeta out = v;
    const auto d = static_cast<size_t>(dim);
    out.offset += start * v.strides[d];
    out.shape[d] = (end - start + step - 1) / step;
    if (__builtin_mul_overflow(out.strides[d], step, &out.strides[d]))
        fail(FailureCode::InvalidArgument, "slice", fmt::format("step {} is too large", step));
    return out;
}

ViewMeta transpose_view(const ViewMeta& v, int64_t dim0, int64_t dim1) {
    const auto a = static_cast<size_t>(checked_dim(v, dim0, "transpose"));
    const auto b = static_cast<size_t>(checked_dim(v, dim1, "transpose"));
    ViewMeta out = v;
    std::swap(out.shape[a], out.shape[b]);
    std::swap(out.strides[a], out.strides[b]);
    return out;
}

ViewMeta reshape_view(const ViewMeta& v, const Shape& shape) {
    if (element_count(shape) != element_count(v.shape) ||
        std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; }))
        fail(FailureCode::InvalidArgument, "reshape",
             fmt::format("cannot reshape {} to {}", shape_text(v.shape), shape_text(shape)));
    return {v.offset, shape, contiguous_strides(shape)};
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
    const size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1)
            fail(FailureCode::InvalidArgument, "broadcast",
                 fmt::format("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
        out[i] = std::max(da, db);
    }
    return out;
}

} // namespace tmmu::lazy
