// Host code over the CUDA runtime API only (linked statically), compiled as C++20 by the host
// compiler: no kernels yet.
#include "backends/cuda/cuda_device.h"

#include "core/units.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace tmmu::cuda {
namespace {

std::string version_text(int v) {
    return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string error_words(cudaError_t e) {
    const std::string detail = fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
    switch (e) {
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
        return fmt::format("no CUDA driver ({})", detail);
    case cudaErrorNoDevice:
        return fmt::format("no CUDA device ({})", detail);
    default:
        return fmt::format("CUDA unavailable ({})", detail);
    }
}

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        cudaGetLastError(); // clear it: an attribute the driver lacks is no failure
        return 0;
    }
    return value;
}

} // namespace

CudaProbe probe_cuda() {
    CudaProbe probe;
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        probe.runtime_version = version_text(runtime);
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
        probe.driver_version = version_text(driver);
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        cudaGetLastError();
        probe.unavailable_reason = error_words(e);
        return probe;
    }
    if (count <= 0) {
        probe.unavailable_reason = "no CUDA device";
        return probe;
    }
    for (int i = 0; i < count; ++i) {
        CudaDeviceInfo d;
        d.ordinal = i;
        cudaDeviceProp props{};
        if (const cudaError_t e = cudaGetDeviceProperties(&props, i); e != cudaSuccess) {
            cudaGetLastError();
            d.name = fmt::format("device {} ({})", i, cudaGetErrorName(e));
        } else {
            d.name = props.name;
            d.total_memory = props.totalGlobalMem;
        }
        d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, i);
        d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, i);
        d.sm_count = attribute(cudaDevAttrMultiProcessorCount, i);
        d.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, i);
        d.memory_bus_width = attribute(cudaDevAttrGlobalMemoryBusWidth, i);
        probe.devices.push_back(std::move(d));
    }
    return probe;
}

std::vector<CudaDeviceInfo> cuda_devices() {
    return probe_cuda().devices;
}

std::string cuda_unavailable_reason() {
    return probe_cuda().unavailable_reason;
}

std::string describe(const CudaDeviceInfo& d) {
    std::string line = fmt::format("{}, compute {}.{}, {}, {} SMs", d.name, d.cc_major, d.cc_minor,
                                   format_bytes(d.total_memory), d.sm_count);
    if (d.memory_clock_khz > 0 && d.memory_bus_width > 0)
        line +=
            fmt::format(", {} MHz x {}-bit memory", d.memory_clock_khz / 1000, d.memory_bus_width);
    return line;
}

} // namespace tmmu::cuda
