#include "backends/vulkan/vulkan_rates.h"

#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_kernels.h"

#include <algorithm>
#include <chrono>

namespace tmmu::vulkan {

namespace {

constexpr int kRepeats = 3;

// The fastest of kRepeats submissions of `commands` (one warm-up first), in seconds.
double best_seconds(VulkanContext& context, const CommandBuffer& commands) {
    context.submit_and_wait(commands.get(), "warm-up");
    double best = 1e30;
    for (int i = 0; i < kRepeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        context.submit_and_wait(commands.get(), "measurement");
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

template <class T>
T* device_pointer(const Buffer& b) {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(b.address()));
}

} // namespace

double copy_bytes_per_second(uint64_t bytes) {
    const auto context = VulkanContext::open();
    const Buffer from(*context, bytes, MemoryKind::Device, "copy source");
    const Buffer to(*context, bytes, MemoryKind::Device, "copy target");
    CommandBuffer commands(*context);
    commands.begin();
    commands.copy(from, 0, to, 0, bytes);
    commands.end();
    return 2.0 * double(bytes) / best_seconds(*context, commands);
}

double linear_flops_per_second(uint32_t rows, uint32_t in, uint32_t cols) {
    const auto context = VulkanContext::open();
    const Pipelines pipelines(*context);
    const Buffer x(*context, uint64_t(rows) * in * sizeof(float), MemoryKind::Device, "input");
    const Buffer w(*context, uint64_t(cols) * in * sizeof(float), MemoryKind::Device, "weights");
    const Buffer out(*context, uint64_t(rows) * cols * sizeof(float), MemoryKind::Device, "output");
    CommandBuffer commands(*context);
    commands.begin();
    Recorder recorder(*context, pipelines, commands.get());
    VulkanKernels::linear(&recorder, device_pointer<const float>(x), device_pointer<const float>(w),
                          false, nullptr, device_pointer<float>(out), rows, in, 0, cols);
    commands.end();
    return 2.0 * rows * double(in) * cols / best_seconds(*context, commands);
}

} // namespace tmmu::vulkan
