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
