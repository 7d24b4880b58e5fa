#include "backends/cuda/cuda_kernels.h"

#include "backends/cuda/cuda_kernel_common.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace tmmu::cuda::kernels {

namespace {

// Block shapes are constants: the reductions' order depends on them, so they never vary.
constexpr unsigned kNormThreads = 256;
constexpr unsigned kAttendThreads = 128;
constexpr unsigned kAttendWarps = kAttendThreads / 32;
constexpr unsigned kAttendLaneDims = 8; // value dimensions a lane sums at once (256 per warp)
constexpr unsigned kElementThreads = 256;
constexpr unsigned kRopeThreads = 64;

// Sum of every thread's v: a butterfly per warp, then the warps' sums in warp order, the same
// order on every thread and every run. `shared` holds blockDim.x / 32 doubles.
__device__ double block_sum(double v, double* shared) {
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    double sum = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w)
        sum += shared[w];
    __syncthreads(); // `shared` is free again for the caller's next reduction
    return sum;
}

__device__ float block_max(float v, float* shared) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullWarp, v, offset));
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    float top = shared[0];
    for (unsigned w = 1; w < blockDim.x / 32; ++w)
        top = fmaxf(top, shared[w]);
    __syncthreads();
    return top;
}

template <typename W>
__global__ void embedding_kernel(const int32_t* tokens, const uint32_t* positions, const W* table,
                                 const W* positions_table, float* out, uint32_t width) {
    start_after_inputs();
    const uint32_t r = blockIdx.x;
    const W* tok = table + uint64_t(tokens[r]) * width;
    const W* pos = positions_table ? positions_table + uint64_t(positions[r]) * width : nullptr;
    float* o = out + uint64_t(r) * width;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        o[e] = pos ? load_weight(tok + e) + load_weight(pos + e) : load_weight(tok + e);
}

__global__ void layernorm_kernel(const float* x, const float* gamma, const float* beta, float* out,
                                 uint32_t width, float eps) {
    start_after_inputs();
    __shared__ double shared[kNormThreads / 32];
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
    start_after_inputs();
    __shared__ double shared[kNormThreads / 32];
    const float* xr = x + uint64_t(blockIdx.x) * width;
    float* o = out + uint64_t(blockIdx.x) * width;
    double q = 0;
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        q += double(xr[e]) * xr[e];
    const float inv = float(1.0 / sqrt(block_sum(q, shared) / width + eps));
    for (uint32_t e = threadIdx.x; e < width; e += blockDim.x)
        o[e] = xr[e] * inv * gamma[e];
}

// The norms' register path, for rows of a width that is a multiple of 4 (16-byte aligned rows):
// a thread holds float4 groups threadIdx.x + i * kNormThreads (i < N) of its row, so all of
// its loads are in flight at once, and loads gamma and beta, which are weights, before
// wait_for_inputs. Rows up to kNormThreads * 4 * kNormMaxGroups wide; the others take the
// loops of layernorm_kernel and rmsnorm_kernel. The sums run in one fixed order, as there.
constexpr unsigned kNormMaxGroups = 8;

template <unsigned N>
__device__ void load_share(const float* row, uint32_t groups, float4 (&v)[N]) {
#pragma unroll
    for (unsigned i = 0; i < N; ++i) {
        const uint32_t g = threadIdx.x + i * kNormThreads;
        v[i] = g < groups ? reinterpret_cast<const float4*>(row)[g] : make_float4(0, 0, 0, 0);
    }
}

template <unsigned N>
__device__ void store_share(float* row, uint32_t groups, const float4 (&v)[N]) {
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
        if (threadIdx.x + i * kNormThreads < groups)
            reinterpret_cast<float4*>(row)[threadIdx.x + i * kNormThreads] = v[i];
}

// Element k of a group (k a constant once unrolled: the group stays in registers).
__device__ float& at(float4& v, unsigned k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

template <unsigned N>
__global__ void rmsnorm_rows_kernel(const float* x, const float* gamma, float* out, uint32_t width,
                                    float eps) {
    __shared__ double shared[kNormThreads / 32];
    const uint32_t groups = width / 4;
    float4 g[N], v[N];
    load_share(gamma, groups, g);
    start_after_inputs();
    load_share(x + uint64_t(blockIdx.x) * width, groups, v);
    double q = 0; // the zeros past the row add nothing
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
#pragma unroll
        for (unsigned k = 0; k < 4; ++k)
            q += double(at(v[i], k)) * at(v[i], k);
    const float inv = float(1.0 / sqrt(block_sum(q, shared) / width + eps));
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
#pragma unroll
        for (unsigned k = 0; k < 4; ++k)
            at(v[i], k) = at(v[i], k) * inv * at(g[i], k);
    store_share(out + uint64_t(blockIdx.x) * width, groups, v);
}

template <unsigned N>
__global__ void layernorm_rows_kernel(const float* x, const float* gamma, const float* beta,
                                      float* out, uint32_t width, float eps) {
    __shared__ double shared[kNormThreads / 32];
    const uint32_t groups = width / 4;
    float4 g[N], b[N], v[N];
    load_share(gamma, groups, g);
    load_share(beta, groups, b);
    start_after_inputs();
    load_share(x + uint64_t(blockIdx.x) * width, groups, v);
    double s = 0;
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
#pragma unroll
        for (unsigned k = 0; k < 4; ++k)
            s += at(v[i], k);
    const double mean = block_sum(s, shared) / width;
    double q = 0;
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
        if (threadIdx.x + i * kNormThreads < groups) // past the row, (0 - mean)^2 would count
#pragma unroll
            for (unsigned k = 0; k < 4; ++k)
                q += (at(v[i], k) - mean) * (at(v[i], k) - mean);
    const float inv = float(1.0 / sqrt(block_sum(q, shared) / width + eps));
#pragma unroll
    for (unsigned i = 0; i < N; ++i)
#pragma unroll
        for (unsigned k = 0; k < 4; ++k)
            at(v[i], k) = (at(v[i], k) - float(mean)) * inv * at(g[i], k) + at(b[i], k);
    store_share(out + uint64_t(blockIdx.x) * width, groups, v);
}

__global__ void add_kernel(const float* a, const float* b, float* out, uint64_t n) {
    start_after_inputs();
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void gelu_kernel(float* x, uint64_t n) {
    start_after_inputs();
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    const float k = 0.7978845608028654f; // sqrt(2 / pi): GPT-2's "gelu_new", as the CPU's
    x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

__global__ void silu_mul_kernel(float* gate, const float* up, uint64_t n) {
    start_after_inputs();
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float g = gate[i];
    gate[i] = g / (1.0f + expf(-g)) * up[i];
}

// RoPE's rotation of pair (i, i + d/2) of head `head` at `position`, by the table's cosine and
// sine (computed on the host in double, as the CPU computes the angle).
__device__ float2 rotate(const float* head, uint32_t i, uint32_t head_dim, uint32_t position,
                         const float* table, uint32_t table_positions) {
    const uint32_t half = head_dim / 2;
    const uint64_t at = uint64_t(position) * half + i;
    const float c = table[at], s = table[uint64_t(table_positions) * half + at];
    const float a = head[i], b = head[i + half];
    return make_float2(a * c - b * s, b * c + a * s);
}

__global__ void rope_kernel(float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
                            uint32_t head_dim, const float* table, uint32_t table_positions) {
    start_after_inputs();
    const uint32_t half = head_dim / 2;
    const uint64_t id = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= uint64_t(rows) * heads * half) return;
    const uint32_t i = uint32_t(id % half);
    const uint64_t head = id / half; // row * heads + h
    float* h = x + head * head_dim;
    const float2 turned =
        rotate(h, i, head_dim, positions[head / heads], table, table_positions);
    h[i] = turned.x;
    h[i + half] = turned.y;
}

// rope on q (in place) and k, then store_kv: k's rotated pairs go straight into the cache. The
// same arithmetic as the three kernels it replaces. Blocks (row, y): thread t of block y takes
// pair and value element y * blockDim.x + t of the row, so every pair of a row is turned at
// once rather than a few at a time by one block.
__global__ void rope_store_kv_kernel(float* q, const float* k, const float* v, char* cache,
                                     uint64_t stride, const uint32_t* slots,
                                     const uint32_t* positions, uint32_t heads, uint32_t kv_heads,
                                     uint32_t head_dim, const float* table,
                                     uint32_t table_positions, uint32_t max_seq) {
    start_after_inputs();
    const uint32_t r = blockIdx.x, half = head_dim / 2, position = positions[r];
    const uint64_t kv_width = uint64_t(kv_heads) * head_dim;
    float* keys = reinterpret_cast<float*>(cache + slots[r] * stride);
    float* values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t at = uint64_t(position) * kv_width;
    const uint32_t e = blockIdx.y * blockDim.x + threadIdx.x;
    if (e < (heads + kv_heads) * half) {
        const uint32_t h = e / half, i = e % half;
        if (h < heads) {
            float* head = q + (uint64_t(r) * heads + h) * head_dim;
            const float2 turned = rotate(head, i, head_dim, position, table, table_positions);
            head[i] = turned.x;
            head[i + half] = turned.y;
        } else {
            const uint64_t offset = uint64_t(h - heads) * head_dim;
            const float2 turned = rotate(k + r * kv_width + offset, i, head_dim, position, table,
                                         table_positions);
            keys[at + offset + i] = turned.x;
            keys[at + offset + i + half] = turned.y;
        }
    }
    if (e < kv_width) values[at + e] = v[r * kv_width + e];
}

__global__ void store_kv_kernel(const float* k, const float* v, char* cache, uint64_t stride,
                                const uint32_t* slots, const uint32_t* positions, uint32_t kv_width,
                                uint32_t max_seq) {
    start_after_inputs();
    const uint32_t r = blockIdx.x;
    float* keys = reinterpret_cast<float*>(cache + slots[r] * stride);
    float* values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t at = uint64_t(positions[r]) * kv_width;
    for (uint32_t e = threadIdx.x; e < kv_width; e += blockDim.x) {
        keys[at + e] = k[uint64_t(r) * kv_width + e];
        values[at + e] = v[uint64_t(r) * kv_width + e];
    }
}

// Shared memory: scores [max_seq], the query head [head_dim], each warp's partial output
// [kAttendWarps][head_dim], then the reductions' doubles, which start on an 8-byte boundary:
// the floats before them are rounded up to an even count (an odd count put them 4 bytes off:
// cudaErrorMisalignedAddress).
__host__ __device__ uint64_t attend_floats(uint32_t max_seq, uint32_t head_dim) {
    return (uint64_t(max_seq) + uint64_t(1 + kAttendWarps) * head_dim + 1) / 2 * 2;
}

// Positions a warp scores at once: their key loads are in flight together.
constexpr unsigned kAttendBatch = 4;

// One block per (row, query head). Scores: a warp per position, its lanes across the head so a
// key row is read whole by one coalesced access, a butterfly per dot product. Values: the
// warps split the positions (warp w takes t = w mod kAttendWarps, in order), lanes across the
// head, and the warps' partial outputs are added in warp order. No atomics: the same bits on
// every run.
__global__ void attend_kernel(const float* q, const char* cache, uint64_t stride,
                              const uint32_t* slots, const uint32_t* positions, float* out,
                              uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                              uint32_t max_seq) {
    start_after_inputs();
    extern __shared__ float shared[];
    float* scores = shared;
    float* query = shared + max_seq;
    float* partial = query + head_dim;
    double* reduce = reinterpret_cast<double*>(shared + attend_floats(max_seq, head_dim));
    const uint32_t r = blockIdx.x, h = blockIdx.y;
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t last = positions[r];
    const uint64_t kv_width = uint64_t(kv_heads) * head_dim;
    const float* __restrict__ keys = reinterpret_cast<const float*>(cache + slots[r] * stride) +
                                     uint64_t(h / (heads / kv_heads)) * head_dim;
    const float* __restrict__ values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t row_head = (uint64_t(r) * heads + h) * head_dim;
    for (uint32_t i = threadIdx.x; i < head_dim; i += blockDim.x)
        query[i] = q[row_head + i];
    __syncthreads();
    const float scale = float(1.0 / sqrt(double(head_dim)));
    float top = -INFINITY;
    for (uint32_t t0 = warp * kAttendBatch; t0 <= last; t0 += kAttendWarps * kAttendBatch) {
        float dot[kAttendBatch] = {};
        for (uint32_t i = lane; i < head_dim; i += 32) {
            const float qi = query[i];
#pragma unroll
            for (uint32_t u = 0; u < kAttendBatch; ++u)
                if (t0 + u <= last) dot[u] += qi * keys[(t0 + u) * kv_width + i];
        }
#pragma unroll
        for (uint32_t u = 0; u < kAttendBatch; ++u) {
            dot[u] = warp_sum(dot[u]);
            if (t0 + u > last) continue;
            const float score = dot[u] * scale;
            if (lane == 0) scores[t0 + u] = score;
            top = fmaxf(top, score);
        }
    }
    top = block_max(top, reinterpret_cast<float*>(reduce)); // its barriers publish the scores
    double sum = 0;
    for (uint32_t t = threadIdx.x; t <= last; t += blockDim.x) {
        scores[t] = expf(scores[t] - top);
        sum += scores[t];
    }
    sum = block_sum(sum, reduce); // its barriers also publish every exponential
    for (uint32_t t = threadIdx.x; t <= last; t += blockDim.x)
        scores[t] = float(scores[t] / sum);
    __syncthreads();
    for (uint32_t base = 0; base < head_dim; base += 32 * kAttendLaneDims) {
        float acc[kAttendLaneDims] = {};
#pragma unroll 4
        for (uint32_t t = warp; t <= last; t += kAttendWarps) {
            const float weight = scores[t];
            const float* value = values + t * kv_width + base;
#pragma unroll
            for (uint32_t k = 0; k < kAttendLaneDims; ++k)
                if (base + lane + 32 * k < head_dim) acc[k] += weight * value[lane + 32 * k];
        }
#pragma unroll
        for (uint32_t k = 0; k < kAttendLaneDims; ++k)
            if (base + lane + 32 * k < head_dim)
                partial[warp * head_dim + base + lane + 32 * k] = acc[k];
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < head_dim; i += blockDim.x) {
        float o = partial[i];
        for (uint32_t w = 1; w < kAttendWarps; ++w)
            o += partial[w * head_dim + i];
        out[row_head + i] = o;
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
    start_after_inputs();
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
    return attend_floats(max_seq, head_dim) * sizeof(float) + kAttendWarps * sizeof(double);
}

// Calls launch_with(std::integral_constant<unsigned, N>) for the register path's N (groups a
// thread holds: 1, 2, 4 or kNormMaxGroups) and returns true, or false where a row of `width`
// floats (`aligned`: its pointers 16-byte aligned) must take the loops.
template <typename Launch>
bool by_norm_groups(uint32_t width, bool aligned, Launch&& launch_with) {
    if (width % 4 != 0 || !aligned) return false;
    const uint32_t per_thread = blocks_for(width / 4, kNormThreads);
    if (per_thread <= 1)
        launch_with(std::integral_constant<unsigned, 1>{});
    else if (per_thread <= 2)
        launch_with(std::integral_constant<unsigned, 2>{});
    else if (per_thread <= 4)
        launch_with(std::integral_constant<unsigned, 4>{});
    else if (per_thread <= kNormMaxGroups)
        launch_with(std::integral_constant<unsigned, kNormMaxGroups>{});
    else
        return false;
    return true;
}

} // namespace

thread_local uint64_t launches = 0;

bool overlapped_launches() {
    static const bool overlapped = [] {
        int device = 0, major = 0;
        return cudaGetDevice(&device) == cudaSuccess &&
               cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
                   cudaSuccess &&
               major >= 9;
    }();
    return overlapped;
}

uint64_t kernel_launches() {
    return launches;
}

void embedding(void* stream, const int32_t* tokens, const uint32_t* positions, const void* table,
               const void* positions_table, bool half, float* out, uint32_t rows, uint32_t width) {
    const cudaStream_t s = as_stream(stream);
    if (half)
        launch(embedding_kernel<__half>, rows, kElementThreads, 0, s, tokens, positions,
               static_cast<const __half*>(table), static_cast<const __half*>(positions_table), out,
               width);
    else
        launch(embedding_kernel<float>, rows, kElementThreads, 0, s, tokens, positions,
               static_cast<const float*>(table), static_cast<const float*>(positions_table), out,
               width);
}

void layernorm(void* stream, const float* x, const float* gamma, const float* beta, float* out,
               uint32_t rows, uint32_t width, float eps) {
    const bool on_registers =
        by_norm_groups(width, aligned16(x) && aligned16(gamma) && aligned16(beta) && aligned16(out),
                       [&](auto groups) {
                           launch(layernorm_rows_kernel<groups.value>, rows, kNormThreads, 0,
                                  as_stream(stream), x, gamma, beta, out, width, eps);
                       });
    if (!on_registers)
        launch(layernorm_kernel, rows, kNormThreads, 0, as_stream(stream), x, gamma, beta, out,
               width, eps);
}

void rmsnorm(void* stream, const float* x, const float* gamma, float* out, uint32_t rows,
             uint32_t width, float eps) {
    const bool on_registers =
        by_norm_groups(width, aligned16(x) && aligned16(gamma) && aligned16(out), [&](auto groups) {
            launch(rmsnorm_rows_kernel<groups.value>, rows, kNormThreads, 0, as_stream(stream), x,
                   gamma, out, width, eps);
        });
    if (!on_registers)
        launch(rmsnorm_kernel, rows, kNormThreads, 0, as_stream(stream), x, gamma, out, width, eps);
}

void add(void* stream, const float* a, const float* b, float* out, uint64_t n) {
    launch(add_kernel, blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream), a, b,
           out, n);
}

void gelu_tanh(void* stream, float* x, uint64_t n) {
    launch(gelu_kernel, blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream), x,
           n);
}

void silu_mul(void* stream, float* gate, const float* up, uint64_t n) {
    launch(silu_mul_kernel, blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream),
           gate, up, n);
}

void rope(void* stream, float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
          uint32_t head_dim, const float* table, uint32_t table_positions) {
    const uint64_t n = uint64_t(rows) * heads * (head_dim / 2);
    launch(rope_kernel, blocks_for(n, kElementThreads), kElementThreads, 0, as_stream(stream), x,
           positions, rows, heads, head_dim, table, table_positions);
}

void store_kv(void* stream, const float* k, const float* v, void* cache, uint64_t stride,
              const uint32_t* slots, const uint32_t* positions, uint32_t rows, uint32_t kv_width,
              uint32_t max_seq) {
    launch(store_kv_kernel, rows, kElementThreads, 0, as_stream(stream), k, v,
           static_cast<char*>(cache), stride, slots, positions, kv_width, max_seq);
}

void rope_store_kv(void* stream, float* q, const float* k, const float* v, void* cache,
                   uint64_t stride, const uint32_t* slots, const uint32_t* positions, uint32_t rows,
                   uint32_t heads, uint32_t kv_heads, uint32_t head_dim, const float* table,
                   uint32_t table_positions, uint32_t max_seq) {
    const uint32_t pairs = (heads + kv_heads) * (head_dim / 2),
                   n = std::max(pairs, kv_heads * head_dim);
    launch(rope_store_kv_kernel, dim3(rows, blocks_for(n, kRopeThreads)), kRopeThreads, 0,
           as_stream(stream), q, k, v, static_cast<char*>(cache), stride, slots, positions, heads,
           kv_heads, head_dim, table, table_positions, max_seq);
}

void attend(void* stream, const float* q, const void* cache, uint64_t stride, const uint32_t* slots,
            const uint32_t* positions, float* out, uint32_t rows, uint32_t heads, uint32_t kv_heads,
            uint32_t head_dim, uint32_t max_seq) {
    launch(attend_kernel, dim3(rows, heads), kAttendThreads, attend_bytes(max_seq, head_dim),
           as_stream(stream), q, static_cast<const char*>(cache), stride, slots, positions, out,
           heads, kv_heads, head_dim, max_seq);
}

void memory_check(void* stream, const void* data, uint64_t* prints, uint32_t* report,
                  uint32_t words, uint32_t reg, uint32_t instruction, uint32_t op) {
    launch(memory_check_kernel, 1, kCheckThreads, 0, as_stream(stream),
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
