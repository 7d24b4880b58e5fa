#pragma once
// What the Vulkan device can do at best, measured the way the runs are (for `tmmu bench-run`'s
// ratios): its copy bandwidth, and the rate of the backend's own matrix kernel.
#include <cstdint>

namespace tmmu::vulkan {

// Bytes read plus written per second by device-to-device copies of `bytes` (best of a few
// submissions, timed on the host around each; a fast device gets the copy repeated within a
// submission until it lasts about 50 ms). DEVICE_ERROR without a device or room.
double copy_bytes_per_second(uint64_t bytes = uint64_t(256) << 20);

// FLOP/s of the f32 linear kernel on rows x in x cols (2 FLOPs per multiply-add), best of a
// few submissions, repeated within each as the copy is.
double linear_flops_per_second(uint32_t rows, uint32_t in, uint32_t cols);

} // namespace tmmu::vulkan
