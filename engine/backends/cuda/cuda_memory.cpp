#include "backends/cuda/cuda_memory.h"

#include "core/failure.h"
#include "core/units.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <utility>

namespace tmmu::cuda {

void check_cuda(int error, std::string_view call) {
    if (error == cudaSuccess) return;
    const auto e = static_cast<cudaError_t>(error);
    fail(FailureCode::DeviceError, std::string(call),
         fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e)));
}

DeviceBuffer::DeviceBuffer(uint64_t bytes, std::string_view what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&data_, bytes);
    if (e != cudaSuccess) {
        data_ = nullptr;
        size_t free = 0, total = 0;
        cudaGetLastError(); // clear the sticky-free error before asking
        cudaMemGetInfo(&free, &total);
        fail(FailureCode::DeviceError, std::string(what),
             fmt::format("cudaMalloc of {} failed ({}; {} of {} free)", format_bytes(bytes),
                         cudaGetErrorName(e), format_bytes(free), format_bytes(total)));
    }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (data_) cudaFree(data_);
}

void upload(const DeviceBuffer& to, const void* from) {
    check_cuda(cudaMemcpy(to.get(), from, to.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
}

void download(void* to, const DeviceBuffer& from) {
    check_cuda(cudaMemcpy(to, from.get(), from.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

PinnedBuffer::PinnedBuffer(uint64_t bytes, std::string_view what) {
    if (bytes == 0) return;
    check_cuda(cudaMallocHost(&data_, bytes), what);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
}

PinnedBuffer::~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
}

} // namespace tmmu::cuda
