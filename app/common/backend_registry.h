#pragma once
// The backends this build knows, what this machine offers each, and whether tmmu can run a
// plan on it: one inventory for `tmmu devices`, `tmmu run --backend` and the studio's backend
// picker, so all three say the same thing. No GPU header here.
#include "runtime/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::app {

struct BackendDevice {
    std::string name;
    std::string type;          // "cpu" (the host), or the Vulkan type: "discrete", "cpu", ...
    uint64_t memory_bytes = 0; // host memory, device-local heaps, or global memory
    std::string line;          // everything known, on one line
};

struct BackendStatus {
    std::string name;       // "cpu", "vulkan", "cuda"
    std::string label;      // "CPU (f32 reference)", "Vulkan", "CUDA"
    bool built = false;     // compiled into this build
    bool available = false; // built, and the machine has a device it can use
    bool runnable = false;  // available, and its adapters exist: `tmmu run` can use it
    std::string version;    // "Vulkan loader 1.3.239", "CUDA runtime 13.0, no driver"; may be empty
    std::vector<BackendDevice> devices;
    // Why not available: "not built: ..." or the probe's answer; empty when available.
    std::string unavailable_reason;
    // Why not runnable (the unavailable reason: every built backend covers every opcode);
    // empty when runnable.
    std::string not_runnable_reason;
};

// Every backend's status, each probed once per process (creating a Vulkan instance, asking the
// CUDA runtime) and the same answer afterwards; safe from any thread. Never throws for a
// missing driver or device.
const std::vector<BackendStatus>& backend_statuses();
// The probe itself, run again (tests, `tmmu devices`).
std::vector<BackendStatus> probe_backends();

// The status of one backend ("cpu", "vulkan", "cuda"), probing only that one, once per process;
// nullptr for a name that is no backend.
const BackendStatus* backend_status(const std::string& name);

// The status of `name`, or nullptr for a name that is no backend.
const BackendStatus* find_backend(const std::vector<BackendStatus>& all, const std::string& name);

// Throws Failure(InvalidArgument) naming `what` unless `name` is a runnable backend: "unknown
// backend 'x' (cpu, vulkan, cuda)" or "'cuda' cannot run here: <not_runnable_reason>".
void check_runnable_backend(const std::string& name, const std::string& what);

struct BackendRunOptions {
    bool cuda_graphs = true; // CUDA: replay decode steps as a graph
};
// The run loop's executor factory for a runnable backend (check_runnable_backend first;
// INVALID_ARGUMENT for one this build cannot run).
runtime::ExecutorFactory executor_factory(const std::string& name,
                                          const BackendRunOptions& options = {});
// The best a backend's device does, measured now (tmmu bench-run's denominators): copy
// bandwidth (bytes read + written per second) and its matrix kernel's FLOP/s (0: not measured).
struct DeviceRates {
    double copy_bytes_per_second = 0;
    std::string copy_how;
    double matmul_flops_per_second = 0;
    std::string matmul_how;
};
// `precision`: the weights the matrix kernel runs on (CUDA's f16 kernel uses tensor cores).
DeviceRates device_rates(const std::string& name, runtime::WeightPrecision precision);

// What a run on `name` records as its device: the CPU backend's kind, a GPU's name.
std::string run_device(const std::string& name);

} // namespace tmmu::app
