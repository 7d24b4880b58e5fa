#include "backends/cuda/cuda_adapters.h"

#include "backends/cuda/cuda_kernels.h"
#include "runtime/gpu_adapters.h"

namespace tmmu::cuda {

using namespace tmmu::runtime;

namespace {

// The kernel set GpuAdapters calls: cuda_kernels.h's launchers.
struct CudaKernels {
    static constexpr auto embedding = &kernels::embedding;
    static constexpr auto layernorm = &kernels::layernorm;
    static constexpr auto rmsnorm = &kernels::rmsnorm;
    static constexpr auto add = &kernels::add;
    static constexpr auto linear = &kernels::linear;
    static constexpr auto gelu_tanh = &kernels::gelu_tanh;
    static constexpr auto silu_mul = &kernels::silu_mul;
    static constexpr auto rope = &kernels::rope;
    static constexpr auto store_kv = &kernels::store_kv;
    static constexpr auto attend = &kernels::attend;
    // The fused launchers (gpu_adapters.h): fewer launches per decode step.
    using LinearPart = kernels::LinearPart;
    static constexpr auto linears = &kernels::linears;
    static constexpr auto gated_linear = &kernels::gated_linear;
    static constexpr auto rope_store_kv = &kernels::rope_store_kv;
};

} // namespace

const AdapterTable& cuda_adapters() {
    return GpuAdapters<CudaKernels>::table;
}

const AdapterCapabilities& cuda_capabilities() {
    // No RoPE scaling: the kernels compute angles on the device from theta alone, and using
    // rope_frequency's values there wants a GPU to check it on. Plans with scaling are refused
    // when they load (check_backend_supports), never run unscaled.
    static const AdapterCapabilities caps = uniform_capabilities({true, true, 0, false});
    return caps;
}

} // namespace tmmu::cuda
