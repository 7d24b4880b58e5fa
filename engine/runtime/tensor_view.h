#pragma once
// What an adapter may know about a register or weight (seed 002, A9.2): the backend's handle
// is opaque, so dtype, shape and layout travel beside it, validated once when a plan loads.
#include "ir/dtype.h"

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tmmu::runtime {

// v1 runtime plans keep views at rank 4 or below (macro-ops never need more); a plan beyond
// it fails to load with UNSUPPORTED_TENSOR_RANK rather than reaching an adapter.
inline constexpr uint8_t kMaxViewRank = 4;

enum class ViewLayout : uint8_t { Contiguous, Strided, BackendNative };

struct TensorViewDesc {
    DType dtype = DType::F32;
    uint8_t rank = 0;
    std::array<uint32_t, kMaxViewRank> shape{};        // dims past rank are 0
    std::array<uint32_t, kMaxViewRank> stride_elems{}; // row-major for Contiguous
    ViewLayout layout = ViewLayout::Contiguous;

    uint64_t elements() const; // product of the shape (1 for rank 0)
    uint64_t bytes() const;    // elements * dtype size
    bool operator==(const TensorViewDesc&) const = default;
};

// A contiguous row-major view. UNSUPPORTED_TENSOR_RANK above kMaxViewRank; INVALID_EXECUTION_PLAN
// for a dimension of 0 or above 2^32-1, naming `where`.
TensorViewDesc contiguous_view(DType dtype, std::span<const uint64_t> shape,
                               std::string_view where);

// The load-time check of a view read from elsewhere (a plan file): rank, dimensions, and for a
// contiguous view its row-major strides. Throws as contiguous_view does.
void check_view(const TensorViewDesc& view, std::string_view where);

std::string_view layout_name(ViewLayout layout); // "contiguous", "strided", "backend_native"

} // namespace tmmu::runtime
