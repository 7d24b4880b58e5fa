#pragma once
// CUDA device discovery (GPU backends, first slice: detect devices, no kernels yet). Plain
// C++20: no CUDA header here, so the CLI and the studio include it without the toolkit.
#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::cuda {

struct CudaDeviceInfo {
    int ordinal = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0; // compute capability
    uint64_t total_memory = 0;      // bytes
    int sm_count = 0;
    int memory_clock_khz = 0; // 0 when the driver does not say
    int memory_bus_width = 0; // bits; 0 when the driver does not say
};

// One look at the machine: the runtime's and driver's versions, every device, and why there is
// none (empty when there is one). Never throws for a missing driver or device.
struct CudaProbe {
    std::string runtime_version; // "13.0", the CUDA runtime tmmu was built with
    std::string driver_version;  // "13.0"; empty without a driver
    std::vector<CudaDeviceInfo> devices;
    std::string unavailable_reason;
};
CudaProbe probe_cuda();

std::vector<CudaDeviceInfo> cuda_devices();
// Empty when a device exists; otherwise cudaGetDeviceCount's answer in words: "no CUDA driver
// (cudaErrorInsufficientDriver: ...)", "no CUDA driver (cudaErrorStubLibrary: ...)", "no CUDA
// device (cudaErrorNoDevice: ...)", "no CUDA device".
std::string cuda_unavailable_reason();

// One line: "NVIDIA H100 80GB HBM3, compute 9.0, 79.19 GiB, 132 SMs, 2619 MHz x 5120-bit".
std::string describe(const CudaDeviceInfo& device);

} // namespace tmmu::cuda
