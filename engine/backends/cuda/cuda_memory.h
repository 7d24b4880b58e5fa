#pragma once
// Device and page-locked host memory owned by RAII handles, and the one place CUDA errors
// become failures. No CUDA header here: errors arrive as the cudaError_t's value.
#include <cstdint>
#include <string_view>

namespace tmmu::cuda {

// DEVICE_ERROR at `call` with the error's name and description, unless `error` is cudaSuccess.
void check_cuda(int error, std::string_view call);

class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    // DEVICE_ERROR naming `what` and the size when the device has no room.
    DeviceBuffer(uint64_t bytes, std::string_view what);
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    ~DeviceBuffer();
    void* get() const { return data_; }
    uint64_t bytes() const { return bytes_; }

  private:
    void* data_ = nullptr;
    uint64_t bytes_ = 0;
};

// Synchronous copies of a whole buffer's bytes to and from host memory (DEVICE_ERROR on
// failure, a kernel's pending one included).
void upload(const DeviceBuffer& to, const void* from);
void download(void* to, const DeviceBuffer& from);

// Page-locked host memory: copies from and to it are truly asynchronous and can be captured
// into a CUDA graph.
class PinnedBuffer {
  public:
    PinnedBuffer() = default;
    PinnedBuffer(uint64_t bytes, std::string_view what);
    PinnedBuffer(PinnedBuffer&& other) noexcept;
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
    ~PinnedBuffer();
    void* get() const { return data_; }

  private:
    void* data_ = nullptr;
};

} // namespace tmmu::cuda
