#pragma once
// What device 0 can do at best, measured the way the runs are (for `tmmu bench-run`'s ratios):
// its copy bandwidth, and the rate of the backend's own matrix kernel on a large product.
#include <cstdint>

namespace tmmu::cuda {

// Bytes read plus written per second by device-to-device copies of `bytes` (best of a few
// repeats, timed with events). DEVICE_ERROR without a device or room.
double copy_bytes_per_second(uint64_t bytes = uint64_t(1) << 30);

// FLOP/s of the linear kernel (kernels::linear) with f32 or, when `half`, f16 weights (the
// tensor-core kernel at 512 rows) on rows x in x cols of seeded values (2 FLOPs per
// multiply-add), best of a few repeats.
double linear_flops_per_second(bool half, uint32_t rows = 512, uint32_t in = 4096,
                               uint32_t cols = 4096);

} // namespace tmmu::cuda
