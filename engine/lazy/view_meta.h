#pragma once
// Shapes and representable strided views (seed 004, sections 2.3 and 4.2). A view never holds
// storage: it is an offset, shape and strides into its BaseId's current value, so every alias
// of a base sees the base's mutations. Offsets and strides count f32 elements (bytes / 4).
#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::lazy {

using Shape = std::vector<int64_t>;

// The most elements one tensor may have (8 GiB of f32): larger shapes are ALLOCATION_OVERFLOW.
inline constexpr int64_t kMaxElements = int64_t(1) << 31;

// Checked: InvalidArgument for a dimension that is not positive, AllocationOverflow past
// kMaxElements.
int64_t element_count(const Shape& shape);
std::vector<int64_t> contiguous_strides(const Shape& shape);
std::string shape_text(const Shape& shape); // "[4, 8]", "[]" for a scalar

struct ViewMeta {
    int64_t offset = 0; // elements into the base
    Shape shape;
    std::vector<int64_t> strides; // elements
    bool is_contiguous() const;
    bool operator==(const ViewMeta&) const = default;
};

// The whole of a base of this shape, as a view.
ViewMeta identity_view(const Shape& base_shape);

// Views of views compose against the base: each takes the parent's meta and returns the
// child's, or throws Failure(InvalidArgument) naming the bad dimension or range.
ViewMeta slice_view(const ViewMeta& v, int64_t dim, int64_t start, int64_t end, int64_t step);
ViewMeta transpose_view(const ViewMeta& v, int64_t dim0, int64_t dim1);
// Only a contiguous view reshapes without a copy; the caller copies otherwise.
ViewMeta reshape_view(const ViewMeta& v, const Shape& shape);

// Numpy-style broadcast of two shapes; InvalidArgument naming both when they do not match.
Shape broadcast_shapes(const Shape& a, const Shape& b);

} // namespace tmmu::lazy
