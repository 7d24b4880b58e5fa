#include "backends/cuda/cuda_adapters.h"

#include "backends/cuda/cuda_kernels.h"
#include "core/failure.h"
#include "runtime/gpu_adapters.h"

#include <fmt/format.h>

namespace tmmu::cuda {

using namespace tmmu::runtime;

namespace {

const CudaQueue& queue_of(void* queue) {
    return *static_cast<const CudaQueue*>(queue);
}

// A launcher of cuda_kernels.h called with the program's queue in place of its stream.
template <auto Launcher>
struct OnQueue;
template <typename... Args, void (*Launcher)(void*, Args...)>
struct OnQueue<Launcher> {
    static void call(void* queue, Args... args) { Launcher(queue_of(queue).stream, args...); }
};

// The table the program made for this rotation (every attention instruction's).
const RopeTable& table_for(void* queue, float theta, uint32_t head_dim) {
    const RopeTable* t = find_rope_table(queue_of(queue).rope_tables, theta, head_dim);
    if (!t)
        fail(FailureCode::InvalidExecutionPlan, "cuda rope",
             fmt::format("no RoPE table for theta {} and head size {}", theta, head_dim));
    return *t;
}

const float* device_floats(const RopeTable& t) {
    return reinterpret_cast<const float*>(static_cast<uintptr_t>(t.address));
}

// The kernel set GpuAdapters calls: cuda_kernels.h's launchers, on the program's stream, and
// RoPE by the program's tables (runtime/rope.h: the angles the CPU backend computes, scaling
// included).
struct CudaKernels {
    static constexpr auto embedding = &OnQueue<&kernels::embedding>::call;
    static constexpr auto layernorm = &OnQueue<&kernels::layernorm>::call;
    static constexpr auto rmsnorm = &OnQueue<&kernels::rmsnorm>::call;
    static constexpr auto add = &OnQueue<&kernels::add>::call;
    static constexpr auto linear = &OnQueue<&kernels::linear>::call;
    static constexpr auto gelu_tanh = &OnQueue<&kernels::gelu_tanh>::call;
    static constexpr auto silu_mul = &OnQueue<&kernels::silu_mul>::call;
    static constexpr auto store_kv = &OnQueue<&kernels::store_kv>::call;
    static constexpr auto attend = &OnQueue<&kernels::attend>::call;
    // The fused launchers (gpu_adapters.h): fewer launches per decode step.
    using LinearPart = kernels::LinearPart;
    static constexpr auto linears = &OnQueue<&kernels::linears>::call;
    static constexpr auto gated_linear = &OnQueue<&kernels::gated_linear>::call;

    static void rope(void* queue, float* x, const uint32_t* positions, uint32_t rows,
                     uint32_t heads, uint32_t head_dim, float theta) {
        const RopeTable& t = table_for(queue, theta, head_dim);
        kernels::rope(queue_of(queue).stream, x, positions, rows, heads, head_dim, device_floats(t),
                      t.positions);
    }
    static void rope_store_kv(void* queue, float* q, const float* k, const float* v, void* cache,
                              uint64_t stride, const uint32_t* slots, const uint32_t* positions,
                              uint32_t rows, uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                              float theta, uint32_t max_seq) {
        const RopeTable& t = table_for(queue, theta, head_dim);
        kernels::rope_store_kv(queue_of(queue).stream, q, k, v, cache, stride, slots, positions,
                               rows, heads, kv_heads, head_dim, device_floats(t), t.positions,
                               max_seq);
    }
};

} // namespace

const AdapterTable& cuda_adapters() {
    return GpuAdapters<CudaKernels>::table;
}

const AdapterCapabilities& cuda_capabilities() {
    static const AdapterCapabilities caps = uniform_capabilities({true, true, 0});
    return caps;
}

} // namespace tmmu::cuda
