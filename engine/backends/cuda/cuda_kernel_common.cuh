#pragma once
// What the CUDA kernel files share (cuda_kernels.cu: norms, attention, element-wise and the
// rest; cuda_matrix_kernels.cu: the matrix kernels behind linear, linears and gated_linear):
// the launch counter, streams and grids, the warp butterfly and weight loads. Internal to the
// backend's .cu files.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace tmmu::cuda::kernels {

// Kernels this thread has launched (kernel_launches): one counter for both files, defined in
// cuda_kernels.cu; every launcher adds one per kernel it enqueues.
extern thread_local uint64_t launches;

inline cudaStream_t as_stream(void* stream) {
    return static_cast<cudaStream_t>(stream);
}

inline unsigned blocks_for(uint64_t n, unsigned threads) {
    return unsigned((n + threads - 1) / threads);
}

// Overlapped launches (programmatic dependent launch, compute capability 9.0 and later): a
// kernel may start while the one before it on the stream finishes, so the gap between two
// kernels (launch latency, the last blocks draining) is hidden. The contract, kept by every
// kernel of the backend: it calls wait_for_inputs() before it reads anything but weights and
// before it writes anything, since until then the kernel before may still be running; then
// allow_next_launch() lets the kernel after it start. Only weights, which no kernel writes, may
// be touched before the wait (the matrix kernels prefetch theirs). Without the feature both
// calls compile to nothing and launches run one after another, as before.
inline __device__ void wait_for_inputs() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
inline __device__ void allow_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The start of a kernel that prefetches nothing: wait, then let the next kernel start.
inline __device__ void start_after_inputs() {
    wait_for_inputs();
    allow_next_launch();
}

// Whether launches may overlap on the current device (compute capability 9.0 or later), asked
// once: the backend runs on device 0 only.
bool overlapped_launches();

// Enqueues kernel<<<grid, block, shared, stream>>>(args...), overlapped where the device allows
// it, and counts the launch.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
            Args... args) {
    ++launches;
    cudaLaunchAttribute overlap[1];
    overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    config.attrs = overlap;
    config.numAttrs = overlapped_launches() ? 1 : 0;
    // A failed launch is reported by cudaGetLastError, which the adapters' callers check.
    (void)cudaLaunchKernelEx(&config, kernel, Params(args)...);
}

// Whether p may be read and written 16 bytes at a time (float4, uint4).
inline bool aligned16(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

constexpr unsigned kFullWarp = 0xffffffffu;

// A warp's butterfly: every lane ends with the same bits, since each step adds the same two
// values on both lanes it pairs (a + b == b + a).
template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullWarp, v, offset);
    return v;
}

// A weight element as f32, from f32 or f16 storage (f16 runs: RunRequest::weight_precision).
inline __device__ float load_weight(const float* p) {
    return __ldg(p);
}
inline __device__ float load_weight(const __half* p) {
    return __half2float(__ldg(p));
}

} // namespace tmmu::cuda::kernels
