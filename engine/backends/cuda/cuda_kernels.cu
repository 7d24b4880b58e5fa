#include "backends/cuda/cuda_kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>

namespace tmmu::cuda::kernels {

namespace {

thread_local uint64_t launches = 0;

cudaStream_t as_stream(void* stream) {
    return static_cast<cudaStream_t>(stream);
}

unsigned blocks_for(uint64_t n, unsigned threads) {
    return unsigned((n + threads - 1) / threads);
}

// Block shapes are constants: the reductions' order depends on them, so they never vary.
constexpr unsigned kNormThreads = 256;
constexpr unsigned kAttendThreads = 128;
constexpr unsigned kElementThreads = 256;
constexpr unsigned kLinearWarps = 8; // output columns per block, a warp each
constexpr unsigned kLinearRows = 8;  // rows per block: each weight row read once per 8 rows

// Sum of every thread's v in a fixed tree; `shared` holds blockDim.x doubles (a power of two).
__device__ double block_sum(double v, double* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    const double sum = shared[0];
    __syncthreads();
    return sum;
}

__device__ float block_max(float v, float* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    const float top = shared[0];
    __syncthreads();
    return top;
}

// A weight element as f32, from f32 or f16 storage (f16 runs: RunRequest::weight_precision).
__device__ float load_weight(const float* p) {
    return __ldg(p);
}
__device__ float load_weight(const __half* p) {
    return __half2float(__ldg(p));
}
// Four consecutive elements (16-byte aligned for f32, 8-byte for f16).
__device__ float4 load_weight4(const float* p) {
    return __ldg(reinterpret_cast<const float4*>(p));
}
__device__ float4 load_weight4(const __half* p) {
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(p));
    const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&u.x));
    const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&u.y));
    return make_float4(a.x, a.y, b.x, b.y);
}

template <typename W>
__global__ void embedding_kernel(const int32_t* tokens, const uint32_t* positions, const W* table,
                                 const W* positions_table, float* out, uint32_t width) {
    const uint32_t r = blockIdx.x;
    const W* tok = table + uint64_t(tokens[r]) * width;
    const W* pos = positions_table ? positions_table + uint64_t(positions[r]) * width : nullptr;
    float* o = out + uint64_t(r) * width;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        o[e] = pos ? load_weight(tok + e) + load_weight(pos + e) : load_weight(tok + e);
}

__global__ void layernorm_kernel(const float* x, const float* gamma, const float* beta, float* out,
                                 uint32_t width, float eps) {
    __shared__ double shared[kNormThreads];
    const float* xr = x + uint64_t(blockIdx.x) * width;
    float* o = out + uint64_t(blockIdx.x) * width;
    double s = 0;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        s += xr[e];
    const double mean = block_sum(s, shared) / width;
    double q = 0;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        q += (xr[e] - mean) * (xr[e] - mean);
    const float inv = float(1.0 / sqrt(block_sum(q, shared) / width + eps));
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        o[e] = (xr[e] - float(mean)) * inv * gamma[e] + beta[e];
}

__global__ void rmsnorm_kernel(const float* x, const float* gamma, float* out, uint32_t width,
                               float eps) {
    __shared__ double shared[kNormThreads];
    const float* xr = x + uint64_t(blockIdx.x) * width;
    float* o = out + uint64_t(blockIdx.x) * width;
    double q = 0;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        q += double(xr[e]) * xr[e];
    const float inv = float(1.0 / sqrt(block_sum(q, shared) / width + eps));
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        o[e] = xr[e] * inv * gamma[e];
}

__global__ void add_kernel(const float* a, const float* b, float* out, uint64_t n) {
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// Split warps per output column, kLinearRows rows per block: the block's kLinearWarps warps
// serve kLinearWarps / Split columns. Each lane sums a strided share of its warp's slice of the
// row, a butterfly adds the lanes, then the Split partial sums of a column are added in slice
// order: the same order on every run. Split > 1 gives narrow outputs (Llama's k and v
// projections: 256 columns) enough warps in flight to keep memory busy.
template <typename W, bool Vector, unsigned Split>
__global__ void linear_kernel(const float* __restrict__ x, const W* __restrict__ w,
                              const float* __restrict__ bias, float* __restrict__ out,
                              uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    __shared__ float partial[kLinearWarps][kLinearRows];
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t slice = warp % Split;
    const uint32_t j = blockIdx.x * (kLinearWarps / Split) + warp / Split;
    const bool valid = j < cols; // no early return: the block meets at a barrier below
    const uint32_t r0 = blockIdx.y * kLinearRows;
    const uint32_t nr = min(kLinearRows, rows - r0);
    const W* wr = w + uint64_t(col0 + (valid ? j : 0)) * in;
    float acc[kLinearRows] = {};
    const uint32_t first = slice * 32 + lane, step = 32 * Split;
    if (valid && Vector) { // rows 16-byte aligned, weights 16 (f32) or 8 (f16), in a multiple of 4
        // Unrolled so each lane keeps several weight loads in flight: decode is bound by how
        // many bytes are on their way from memory at once, not by the arithmetic.
#pragma unroll 4
        for (uint32_t i = first; i < in / 4; i += step) {
            const float4 a = load_weight4(wr + 4 * uint64_t(i));
#pragma unroll
            for (uint32_t r = 0; r < kLinearRows; ++r)
                if (r < nr) {
                    const float4 b =
                        reinterpret_cast<const float4*>(x + uint64_t(r0 + r) * in)[i];
                    acc[r] += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
                }
        }
    } else if (valid) {
        for (uint32_t i = first; i < in; i += step) {
            const float a = load_weight(wr + i);
#pragma unroll
            for (uint32_t r = 0; r < kLinearRows; ++r)
                if (r < nr) acc[r] += a * x[uint64_t(r0 + r) * in + i];
        }
    }
#pragma unroll
    for (uint32_t r = 0; r < kLinearRows; ++r)
        for (int offset = 16; offset > 0; offset >>= 1)
            acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
    if (Split > 1) {
        if (lane == 0)
            for (uint32_t r = 0; r < kLinearRows; ++r)
                partial[warp][r] = acc[r];
        __syncthreads();
        if (slice != 0 || lane != 0 || !valid) return;
        for (uint32_t r = 0; r < kLinearRows; ++r) {
            acc[r] = partial[warp][r];
            for (uint32_t s = 1; s < Split; ++s)
                acc[r] += partial[warp + s][r];
        }
    } else if (lane != 0 || !valid) {
        return;
    }
    const float b = bias ? bias[col0 + j] : 0.0f;
    for (uint32_t r = 0; r < nr; ++r)
        out[uint64_t(r0 + r) * cols + j] = acc[r] + b;
}

template <typename W, unsigned Split>
void launch_linear(cudaStream_t stream, bool vector, const float* x, const W* w,
                   const float* bias, float* out, uint32_t rows, uint32_t in, uint32_t col0,
                   uint32_t cols) {
    const dim3 grid(blocks_for(cols, kLinearWarps / Split), blocks_for(rows, kLinearRows));
    if (vector)
        linear_kernel<W, true, Split>
            <<<grid, kLinearWarps * 32, 0, stream>>>(x, w, bias, out, rows, in, col0, cols);
    else
        linear_kernel<W, false, Split>
            <<<grid, kLinearWarps * 32, 0, stream>>>(x, w, bias, out, rows, in, col0, cols);
}

// Warps per column from the shape alone (so a shape always sums in the same order): about 4096
// warps in all, at most the block's 8.
template <typename W>
void launch_linear(cudaStream_t s, bool vector, const float* x, const W* w, const float* bias,
                   float* out, uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    if (cols >= 4096)
        launch_linear<W, 1>(s, vector, x, w, bias, out, rows, in, col0, cols);
    else if (cols >= 2048)
        launch_linear<W, 2>(s, vector, x, w, bias, out, rows, in, col0, cols);
    else if (cols >= 1024)
        launch_linear<W, 4>(s, vector, x, w, bias, out, rows, in, col0, cols);
    else
        launch_linear<W, 8>(s, vector, x, w, bias, out, rows, in, col0, cols);
}

__global__ void gelu_kernel(float* x, uint64_t n) {
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    const float k = 0.7978845608028654f; // sqrt(2 / pi): GPT-2's "gelu_new", as the CPU's
    x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

__global__ void silu_mul_kernel(float* gate, const float* up, uint64_t n) {
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float g = gate[i];
    gate[i] = g / (1.0f + expf(-g)) * up[i];
}

__global__ void rope_kernel(float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
                            uint32_t head_dim, float theta) {
    const uint32_t half = head_dim / 2;
    const uint64_t id = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= uint64_t(rows) * heads * half) return;
    const uint32_t i = uint32_t(id % half);
    const uint64_t head = id / half; // row * heads + h
    const uint32_t r = uint32_t(head / heads);
    // The angle in double, as the CPU computes it.
    const double angle = positions[r] * pow(double(theta), -2.0 * i / head_dim);
    const float c = float(cos(angle)), s = float(sin(angle));
    float* h = x + head * head_dim;
    const float a = h[i], b = h[i + half];
    h[i] = a * c - b * s;
    h[i + half] = b * c + a * s;
}

__global__ void store_kv_kernel(const float* k, const float* v, char* cache, uint64_t stride,
                                const uint32_t* slots, const uint32_t* positions, uint32_t kv_width,
                                uint32_t max_seq) {
    const uint32_t r = blockIdx.x;
    float* keys = reinterpret_cast<float*>(cache + slots[r] * stride);
    float* values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t at = uint64_t(positions[r]) * kv_width;
    for (uint32_t e = threadIdx.x; e < kv_width; e += blockDim.x) {
        keys[at + e] = k[uint64_t(r) * kv_width + e];
        values[at + e] = v[uint64_t(r) * kv_width + e];
    }
}

// Shared memory: scores [max_seq], the query head [head_dim], then the reduction's doubles,
// which start on an 8-byte boundary: the floats before them are rounded up to an even count
// (an odd max_seq put them 4 bytes off: cudaErrorMisalignedAddress).
__host__ __device__ uint64_t attend_floats(uint32_t max_seq, uint32_t head_dim) {
    return (uint64_t(max_seq) + head_dim + 1) / 2 * 2;
}

// One block per (row, query head).
__global__ void attend_kernel(const float* q, const char* cache, uint64_t stride,
                              const uint32_t* slots, const uint32_t* positions, float* out,
                              uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                              uint32_t max_seq) {
    extern __shared__ float shared[];
    float* scores = shared;
    float* query = shared + max_seq;
    double* reduce = reinterpret_cast<double*>(shared + attend_floats(max_seq, head_dim));
    const uint32_t r = blockIdx.x, h = blockIdx.y;
    const uint32_t last = positions[r];
    const uint64_t kv_width = uint64_t(kv_heads) * head_dim;
    const float* keys = reinterpret_cast<const float*>(cache + slots[r] * stride) +
                        uint64_t(h / (heads / kv_heads)) * head_dim;
    const float* values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t row_head = (uint64_t(r) * heads + h) * head_dim;
    for (uint32_t i = threadIdx.x; i < head_dim; i += blockDim.x)
        query[i] = q[row_head + i];
    __syncthreads();
    const float scale = float(1.0 / sqrt(double(head_dim)));
    float top = -INFINITY;
    for (uint32_t t = threadIdx.x; t <= last; t += blockDim.x) {
        const float* key = keys + t * kv_width;
        float s = 0;
        for (uint32_t i = 0; i < head_dim; ++i)
            s += query[i] * key[i];
        scores[t] = s * scale;
        top = fmaxf(top, scores[t]);
    }
    top = block_max(top, reinterpret_cast<float*>(reduce));
    double sum = 0;
    for (uint32_t t = threadIdx.x; t <= last; t += blockDim.x) {
        scores[t] = expf(scores[t] - top);
        sum += scores[t];
    }
    sum = block_sum(sum, reduce); // its barriers also publish every score
    for (uint32_t i = threadIdx.x; i < head_dim; i += blockDim.x) {
        float acc = 0;
        for (uint32_t t = 0; t <= last; ++t)
            acc += float(scores[t] / sum) * values[t * kv_width + i];
        out[row_head + i] = acc;
    }
}

constexpr unsigned kCheckThreads = 64;
constexpr uint32_t kGuardWord = 0xFDFDFDFDu; // kGuardByte four times
constexpr uint32_t kGuardWords = 16;         // kGuardBytes / 4 on each side

__device__ const uint32_t* guard_word(const uint32_t* data, uint32_t words, uint32_t k) {
    return k < kGuardWords ? data - (kGuardWords - k) : data + words + (k - kGuardWords);
}

// One block: FNV-1a over each thread's strided words, the threads' hashes combined in one fixed
// tree; or the first guard word (a min-reduction) that is not kGuardWord.
__global__ void memory_check_kernel(const uint32_t* data, uint64_t* prints, uint32_t* report,
                                    uint32_t words, uint32_t reg, uint32_t instruction,
                                    uint32_t op) {
    __shared__ uint64_t hashes[kCheckThreads];
    __shared__ uint32_t first_bad[kCheckThreads];
    const uint32_t t = threadIdx.x;
    if (op == 2) {
        uint32_t bad = 0xFFFFFFFFu;
        if (t < 2 * kGuardWords && *guard_word(data, words, t) != kGuardWord) bad = t;
        first_bad[t] = bad;
        __syncthreads();
        for (unsigned s = kCheckThreads / 2; s > 0; s >>= 1) {
            if (t < s) first_bad[t] = min(first_bad[t], first_bad[t + s]);
            __syncthreads();
        }
        const uint32_t k = first_bad[0];
        if (t != 0 || k == 0xFFFFFFFFu || report[0] != 0) return;
        report[0] = 2;
        report[1] = instruction;
        report[2] = reg;
        report[3] = k;
        report[4] = *guard_word(data, words, k);
        return;
    }
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = t; i < words; i += kCheckThreads)
        h = (h ^ data[i]) * 0x100000001b3ull;
    hashes[t] = h;
    __syncthreads();
    for (unsigned s = kCheckThreads / 2; s > 0; s >>= 1) {
        if (t < s) hashes[t] = (hashes[t] * 0x100000001b3ull) ^ hashes[t + s];
        __syncthreads();
    }
    if (t != 0) return;
    if (op == 0) {
        prints[reg] = hashes[0];
    } else if (hashes[0] != prints[reg] && report[0] == 0) {
        report[0] = 1;
        report[1] = instruction;
        report[2] = reg;
    }
}

uint64_t attend_bytes(uint32_t max_seq, uint32_t head_dim) {
    return attend_floats(max_seq, head_dim) * sizeof(float) + kAttendThreads * sizeof(double);
}

bool aligned16(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

} // namespace

uint64_t kernel_launches() {
    return launches;
}

void embedding(void* stream, const int32_t* tokens, const uint32_t* positions, const void* table,
               const void* positions_table, bool half, float* out, uint32_t rows,
               uint32_t width) {
    ++launches;
    const cudaStream_t s = as_stream(stream);
    if (half)
        embedding_kernel<<<rows, kElementThreads, 0, s>>>(
            tokens, positions, static_cast<const __half*>(table),
            static_cast<const __half*>(positions_table), out, width);
    else
        embedding_kernel<<<rows, kElementThreads, 0, s>>>(
            tokens, positions, static_cast<const float*>(table),
            static_cast<const float*>(positions_table), out, width);
}

void layernorm(void* stream, const float* x, const float* gamma, const float* beta, float* out,
               uint32_t rows, uint32_t width, float eps) {
    ++launches;
    layernorm_kernel<<<rows, kNormThreads, 0, as_stream(stream)>>>(x, gamma, beta, out, width, eps);
}

void rmsnorm(void* stream, const float* x, const float* gamma, float* out, uint32_t rows,
             uint32_t width, float eps) {
    ++launches;
    rmsnorm_kernel<<<rows, kNormThreads, 0, as_stream(stream)>>>(x, gamma, out, width, eps);
}

void add(void* stream, const float* a, const float* b, float* out, uint64_t n) {
    ++launches;
    add_kernel<<<blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream)>>>(a, b, out,
                                                                                          n);
}

void linear(void* stream, const float* x, const void* w, bool half, const float* bias, float* out,
            uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    ++launches;
    const bool vector = in % 4 == 0 && aligned16(x) &&
                        reinterpret_cast<uintptr_t>(w) % (half ? 8 : 16) == 0 &&
                        (uint64_t(col0) * in) % 4 == 0;
    const cudaStream_t s = as_stream(stream);
    if (half)
        launch_linear(s, vector, x, static_cast<const __half*>(w), bias, out, rows, in, col0, cols);
    else
        launch_linear(s, vector, x, static_cast<const float*>(w), bias, out, rows, in, col0, cols);
}

void gelu_tanh(void* stream, float* x, uint64_t n) {
    ++launches;
    gelu_kernel<<<blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream)>>>(x, n);
}

void silu_mul(void* stream, float* gate, const float* up, uint64_t n) {
    ++launches;
    silu_mul_kernel<<<blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream)>>>(
        gate, up, n);
}

void rope(void* stream, float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
          uint32_t head_dim, float theta) {
    ++launches;
    const uint64_t n = uint64_t(rows) * heads * (head_dim / 2);
    rope_kernel<<<blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream)>>>(
        x, positions, rows, heads, head_dim, theta);
}

void store_kv(void* stream, const float* k, const float* v, void* cache, uint64_t stride,
              const uint32_t* slots, const uint32_t* positions, uint32_t rows, uint32_t kv_width,
              uint32_t max_seq) {
    ++launches;
    store_kv_kernel<<<rows, kElementThreads, 0, as_stream(stream)>>>(
        k, v, static_cast<char*>(cache), stride, slots, positions, kv_width, max_seq);
}

void attend(void* stream, const float* q, const void* cache, uint64_t stride, const uint32_t* slots,
            const uint32_t* positions, float* out, uint32_t rows, uint32_t heads, uint32_t kv_heads,
            uint32_t head_dim, uint32_t max_seq) {
    ++launches;
    const dim3 grid(rows, heads);
    attend_kernel<<<grid, kAttendThreads, attend_bytes(max_seq, head_dim), as_stream(stream)>>>(
        q, static_cast<const char*>(cache), stride, slots, positions, out, heads, kv_heads,
        head_dim, max_seq);
}

void memory_check(void* stream, const void* data, uint64_t* prints, uint32_t* report,
                  uint32_t words, uint32_t reg, uint32_t instruction, uint32_t op) {
    ++launches;
    memory_check_kernel<<<1, kCheckThreads, 0, as_stream(stream)>>>(
        static_cast<const uint32_t*>(data), prints, report, words, reg, instruction, op);
}

uint64_t attend_shared_bytes(uint32_t max_seq, uint32_t head_dim) {
    return attend_bytes(max_seq, head_dim);
}

bool allow_attend_shared_bytes(uint64_t bytes) {
    int device = 0, most = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess ||
        bytes > uint64_t(most))
        return false;
    return cudaFuncSetAttribute(attend_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                int(bytes)) == cudaSuccess;
}

} // namespace tmmu::cuda::kernels
