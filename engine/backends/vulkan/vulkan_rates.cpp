#include "backends/vulkan/vulkan_rates.h"

#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_kernels.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace tmmu::vulkan {

namespace {

constexpr int kRepeats = 3;
// A measured submission lasts about this long: a submission and its wait cost a fraction of a
// millisecond, several times what a GPU takes to copy 256 MiB.
constexpr double kTargetSeconds = 0.05;
constexpr double kMostTimes = 512;

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

// Seconds per repeat of the work `record` appends, recorded into one command buffer as many
// times (one after the other, each behind a barrier) as make a submission last about
// kTargetSeconds; once on a slow device (lavapipe takes that long for one).
double seconds_per_repeat(VulkanContext& context,
                          const std::function<void(CommandBuffer&)>& record) {
    const auto measure = [&](uint32_t times) {
        CommandBuffer commands(context);
        commands.begin();
        for (uint32_t i = 0; i < times; ++i) {
            if (i != 0) commands.full_barrier();
            record(commands);
        }
        commands.end();
        return best_seconds(context, commands) / times;
    };
    const double once = measure(1);
    const auto times = uint32_t(std::clamp(kTargetSeconds / once, 1.0, kMostTimes));
    return times == 1 ? once : measure(times);
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
    return 2.0 * double(bytes) / seconds_per_repeat(*context, [&](CommandBuffer& commands) {
               commands.copy(from, 0, to, 0, bytes);
           });
}

double linear_flops_per_second(uint32_t rows, uint32_t in, uint32_t cols) {
    const auto context = VulkanContext::open();
    const Pipelines pipelines(*context);
    const Buffer x(*context, uint64_t(rows) * in * sizeof(float), MemoryKind::Device, "input");
    const Buffer w(*context, uint64_t(cols) * in * sizeof(float), MemoryKind::Device, "weights");
    const Buffer out(*context, uint64_t(rows) * cols * sizeof(float), MemoryKind::Device, "output");
    return 2.0 * rows * double(in) * cols /
           seconds_per_repeat(*context, [&](CommandBuffer& commands) {
               Recorder recorder(*context, pipelines, commands.get());
               VulkanKernels::linear(&recorder, device_pointer<const float>(x),
                                     device_pointer<const float>(w), false, nullptr,
                                     device_pointer<float>(out), rows, in, 0, cols);
           });
}

} // namespace tmmu::vulkan
