#include "backends/cuda/cuda_rates.h"

#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <functional>

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

double linear_flops_per_second(uint32_t rows, uint32_t in, uint32_t cols) {
    const DeviceBuffer x(uint64_t(rows) * in * sizeof(float), "linear input"),
        w(uint64_t(cols) * in * sizeof(float), "linear weights"),
        out(uint64_t(rows) * cols * sizeof(float), "linear output");
    check_cuda(cudaMemset(x.get(), 0, x.bytes()), "cudaMemset");
    check_cuda(cudaMemset(w.get(), 0, w.bytes()), "cudaMemset");
    const double s = best_seconds([&] {
        kernels::linear(nullptr, static_cast<const float*>(x.get()), w.get(), false, nullptr,
                        static_cast<float*>(out.get()), rows, in, 0, cols);
        check_cuda(cudaGetLastError(), "linear kernel");
    });
    return 2.0 * rows * double(in) * cols / s;
}

} // namespace tmmu::cuda
