#include "backends/cuda/cuda_rates.h"

#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"
#include "runtime/gpu_adapters.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <functional>
#include <vector>

namespace tmmu::cuda {

namespace {

constexpr int kRepeats = 5;

class Event {
  public:
    Event() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event() { cudaEventDestroy(event_); }
    cudaEvent_t get() const { return event_; }

  private:
    cudaEvent_t event_ = nullptr;
};

// The fastest of kRepeats runs of `work` on the default stream, in seconds (one warm-up first).
double best_seconds(const std::function<void()>& work) {
    work();
    check_cuda(cudaDeviceSynchronize(), "warm-up");
    Event start, stop;
    double best = 1e30;
    for (int i = 0; i < kRepeats; ++i) {
        check_cuda(cudaEventRecord(start.get()), "cudaEventRecord");
        work();
        check_cuda(cudaEventRecord(stop.get()), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
        best = std::min(best, double(ms) / 1e3);
    }
    return best;
}

// A device buffer of `n` seeded values in [-1, 1), f16 when `half`: never zeros, which hide
// unwritten outputs and run faster than real data (../.library/device/METHOD.md).
DeviceBuffer seeded_buffer(uint64_t n, bool half, uint64_t seed, std::string_view what) {
    std::vector<float> values(n);
    uint64_t s = seed;
    for (float& v : values) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = float(s >> 40) / float(1 << 23) - 1.0f;
    }
    DeviceBuffer buffer(n * (half ? 2 : 4), what);
    if (!half) {
        upload(buffer, values.data());
        return buffer;
    }
    std::vector<uint16_t> bits(n);
    for (uint64_t i = 0; i < n; ++i)
        bits[i] = runtime::f16_bits(values[i]);
    upload(buffer, bits.data());
    return buffer;
}

} // namespace

double copy_bytes_per_second(uint64_t bytes) {
    const DeviceBuffer from(bytes, "copy source"), to(bytes, "copy target");
    check_cuda(cudaMemset(from.get(), 1, bytes), "cudaMemset");
    const double s = best_seconds([&] {
        check_cuda(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice),
                   "cudaMemcpyAsync");
    });
    return 2.0 * double(bytes) / s;
}

double linear_flops_per_second(bool half, uint32_t rows, uint32_t in, uint32_t cols) {
    const DeviceBuffer x = seeded_buffer(uint64_t(rows) * in, false, 1, "linear input"),
                       w = seeded_buffer(uint64_t(cols) * in, half, 2, "linear weights"),
                       out(uint64_t(rows) * cols * sizeof(float), "linear output");
    const double s = best_seconds([&] {
        kernels::linear(nullptr, static_cast<const float*>(x.get()), w.get(), half, nullptr,
                        static_cast<float*>(out.get()), rows, in, 0, cols);
        check_cuda(cudaGetLastError(), "linear kernel");
    });
    return 2.0 * rows * double(in) * cols / s;
}

} // namespace tmmu::cuda
