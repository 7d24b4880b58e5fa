#include "backend_registry.h"

#include "core/failure.h"
#include "core/units.h"

#if TMMU_HAVE_VULKAN
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "backends/vulkan/vulkan_rates.h"
#endif
#if TMMU_HAVE_CUDA
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_rates.h"
#endif
#include "backends/cpu/cpu_generate.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace tmmu::app {
namespace {

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                const auto start = line.find_first_not_of(' ', colon + 1);
                if (start != std::string::npos) return line.substr(start);
            }
        }
    return "host CPU";
}

BackendStatus cpu_status() {
    BackendStatus s{"cpu", "CPU (f32 reference)", true, true, true, {}, {}, {}, {}};
    BackendDevice d;
    d.name = cpu_model_name();
    d.type = "cpu";
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) d.memory_bytes = uint64_t(pages) * uint64_t(page);
    d.line = fmt::format("{}, {} hardware threads, {} memory", d.name,
                         std::thread::hardware_concurrency(), format_bytes(d.memory_bytes));
    s.devices.push_back(std::move(d));
    return s;
}

BackendStatus vulkan_status() {
    BackendStatus s{"vulkan", "Vulkan", false, false, false, {}, {}, {}, {}};
#if TMMU_HAVE_VULKAN
    s.built = true;
    const vulkan::VulkanProbe probe = vulkan::probe_vulkan();
    if (!probe.loader_version.empty()) s.version = "Vulkan loader " + probe.loader_version;
    for (const vulkan::VulkanDeviceInfo& v : probe.devices)
        s.devices.push_back(
            {v.name, vulkan::device_type_name(v.type), v.device_local_bytes, vulkan::describe(v)});
    s.available = probe.unavailable_reason.empty();
    s.unavailable_reason = probe.unavailable_reason;
#else
    s.unavailable_reason = "not built: " TMMU_VULKAN_NOT_BUILT;
#endif
    s.runnable = s.available; // its adapters cover every opcode
    s.not_runnable_reason = s.unavailable_reason;
    return s;
}

BackendStatus cuda_status() {
    BackendStatus s{"cuda", "CUDA", false, false, false, {}, {}, {}, {}};
#if TMMU_HAVE_CUDA
    s.built = true;
    const cuda::CudaProbe probe = cuda::probe_cuda();
    if (!probe.runtime_version.empty())
        s.version = fmt::format("CUDA runtime {}, {}", probe.runtime_version,
                                probe.driver_version.empty() ? "no driver"
                                                             : "driver " + probe.driver_version);
    for (const cuda::CudaDeviceInfo& c : probe.devices)
        s.devices.push_back({c.name, "gpu", c.total_memory, cuda::describe(c)});
    s.available = probe.unavailable_reason.empty();
    s.unavailable_reason = probe.unavailable_reason;
#else
    s.unavailable_reason = "not built: " TMMU_CUDA_NOT_BUILT;
#endif
    s.runnable = s.available; // its adapters cover every opcode
    s.not_runnable_reason = s.unavailable_reason;
    return s;
}

} // namespace

std::vector<BackendStatus> probe_backends() {
    return {cpu_status(), vulkan_status(), cuda_status()};
}

const std::vector<BackendStatus>& backend_statuses() {
    static const std::vector<BackendStatus> all = {*backend_status("cpu"),
                                                   *backend_status("vulkan"),
                                                   *backend_status("cuda")}; // thread-safe once
    return all;
}

const BackendStatus* backend_status(const std::string& name) {
    // Each backend is probed the first time someone asks about it, once per process: a CPU run
    // creates no Vulkan instance and loads no CUDA driver.
    static const BackendStatus cpu = cpu_status();
    if (name == "cpu") return &cpu;
    if (name == "vulkan") {
        static const BackendStatus vulkan = vulkan_status();
        return &vulkan;
    }
    if (name == "cuda") {
        static const BackendStatus cuda = cuda_status();
        return &cuda;
    }
    return nullptr;
}

const BackendStatus* find_backend(const std::vector<BackendStatus>& all, const std::string& name) {
    for (const BackendStatus& s : all)
        if (s.name == name) return &s;
    return nullptr;
}

void check_runnable_backend(const std::string& name, const std::string& what) {
    const BackendStatus* s = backend_status(name);
    if (!s)
        fail(FailureCode::InvalidArgument, what,
             fmt::format("unknown backend '{}' (cpu, vulkan, cuda)", name));
    if (!s->runnable)
        fail(FailureCode::InvalidArgument, what,
             fmt::format("'{}' cannot run here: {}", name, s->not_runnable_reason));
}

runtime::ExecutorFactory executor_factory(const std::string& name,
                                          const BackendRunOptions& options) {
#if TMMU_HAVE_CUDA
    if (name == "cuda") return cuda::cuda_executor_factory({options.cuda_graphs});
#else
    (void)options;
#endif
#if TMMU_HAVE_VULKAN
    if (name == "vulkan") return vulkan::make_vulkan_executor;
#endif
    if (name == "cpu") return cpu::make_cpu_executor;
    fail(FailureCode::InvalidArgument, "backend",
         fmt::format("'{}' cannot run plans in this build", name));
}

std::string run_device(const std::string& name) {
    if (name == "cpu") return cpu::kCpuDevice;
    const BackendStatus* s = backend_status(name);
    return s && !s->devices.empty() ? s->devices.front().name : name;
}

namespace {

// Host memcpy of 256 MiB, best of three (the first touches the pages).
double host_copy_bytes_per_second() {
    const size_t bytes = size_t(256) << 20;
    std::vector<char> from(bytes, 1), to(bytes, 0);
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(to.data(), from.data(), bytes);
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return 2.0 * double(bytes) / best;
}

} // namespace

DeviceRates device_rates(const std::string& name, runtime::WeightPrecision precision) {
    check_runnable_backend(name, "backend");
#if TMMU_HAVE_CUDA
    if (name == "cuda") {
        const bool half = precision == runtime::WeightPrecision::F16;
        return {cuda::copy_bytes_per_second(), "1 GiB device-to-device copy, best of 5",
                cuda::linear_flops_per_second(half),
                half ? "f16 tensor-core linear kernel, 512 x 4096 x 4096, best of 5"
                     : "f32 linear kernel, 512 x 4096 x 4096, best of 5"};
    }
#else
    (void)precision;
#endif
#if TMMU_HAVE_VULKAN
    if (name == "vulkan")
        return {vulkan::copy_bytes_per_second(), "256 MiB device-to-device copy, best of 3",
                vulkan::linear_flops_per_second(64, 2048, 2048),
                "f32 linear kernel, 64 x 2048 x 2048, best of 3"};
#endif
    return {host_copy_bytes_per_second(), "256 MiB memcpy, best of 3", 0, "not measured"};
}

} // namespace tmmu::app
