#include "backends/cuda/cuda_kernels.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

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
constexpr unsigned kAttendWarps = kAttendThreads / 32;
constexpr unsigned kAttendLaneDims = 8; // value dimensions a lane sums at once (256 per warp)
constexpr unsigned kElementThreads = 256;
constexpr unsigned kLinearWarps = 8; // output columns per block, a warp each
constexpr unsigned kLinearRows = 8;  // rows per block: each weight row read once per 8 rows
constexpr unsigned kFullWarp = 0xffffffffu;

// A warp's butterfly: every lane ends with the same bits, since each step adds the same two
// values on both lanes it pairs (a + b == b + a).
template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullWarp, v, offset);
    return v;
}

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

// A weight element as f32, from f32 or f16 storage (f16 runs: RunRequest::weight_precision).
__device__ float load_weight(const float* p) {
    return __ldg(p);
}
__device__ float load_weight(const __half* p) {
    return __half2float(__ldg(p));
}
// Weight elements per 16-byte load: 4 f32 or 8 f16.
template <typename W>
constexpr unsigned kGroup = 16 / sizeof(W);
// kGroup<W> consecutive weight elements from one 16-byte aligned load.
__device__ void load_group(const float* p, float (&v)[4]) {
    const float4 u = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = u.x, v[1] = u.y, v[2] = u.z, v[3] = u.w;
}
__device__ void load_group(const __half* p, float (&v)[8]) {
    const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
    const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
        const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[k]));
        v[2 * k] = f.x, v[2 * k + 1] = f.y;
    }
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

__global__ void add_kernel(const float* a, const float* b, float* out, uint64_t n) {
    const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// The parts one launch of the vector kernel computes: a matrix (or a column range of one) each,
// with its own bias and output; the part of block b is the last whose first_block <= b.
struct VectorParts {
    LinearPart part[kMaxLinearParts];
    const void* up = nullptr; // gated launches: the up projection beside part[0]'s gate
    uint32_t first_block[kMaxLinearParts + 1] = {};
    unsigned count = 0;
};

// One weight row's dot products with up to Rows input rows, a lane's strided share:
// 16-byte weight loads where `Vector` (rows and weights 16-byte aligned, `in` a multiple of
// the group), unrolled so each lane keeps several loads in flight (decode is bound by how many
// bytes are on their way from memory at once, not by the arithmetic).
template <typename W, bool Vector, unsigned Rows>
__device__ void dot_rows(const float* __restrict__ x, const W* __restrict__ wr, uint32_t in,
                         uint32_t r0, uint32_t nr, uint32_t first, uint32_t step,
                         float (&acc)[Rows]) {
    constexpr unsigned G = kGroup<W>;
    if (Vector) {
#pragma unroll 4
        for (uint32_t i = first; i < in / G; i += step) {
            float a[G];
            load_group(wr + G * uint64_t(i), a);
#pragma unroll
            for (uint32_t r = 0; r < Rows; ++r)
                if (r < nr)
#pragma unroll
                    for (unsigned g = 0; g < G / 4; ++g) {
                        const float4 b = reinterpret_cast<const float4*>(x + uint64_t(r0 + r) *
                                                                                 in)[G / 4 * i + g];
                        acc[r] += a[4 * g] * b.x + a[4 * g + 1] * b.y + a[4 * g + 2] * b.z +
                                  a[4 * g + 3] * b.w;
                    }
        }
    } else {
        for (uint32_t i = first; i < in; i += step) {
            const float a = load_weight(wr + i);
#pragma unroll
            for (uint32_t r = 0; r < Rows; ++r)
                if (r < nr) acc[r] += a * x[uint64_t(r0 + r) * in + i];
        }
    }
}

// Adds a column's sums across its lanes (a butterfly) and then its Split warps (in slice
// order, through `partial`): the same order on every run. True on the one thread that holds
// the column's sums afterwards.
template <unsigned Split, unsigned Rows>
__device__ bool reduce_column(float (&acc)[Rows], float (*partial)[Rows], bool valid) {
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (uint32_t r = 0; r < Rows; ++r)
        acc[r] = warp_sum(acc[r]);
    if (Split == 1) return lane == 0 && valid;
    if (lane == 0)
        for (uint32_t r = 0; r < Rows; ++r)
            partial[warp][r] = acc[r];
    __syncthreads();
    if (warp % Split != 0 || lane != 0 || !valid) return false;
    for (uint32_t r = 0; r < Rows; ++r) {
        acc[r] = partial[warp][r];
        for (uint32_t s = 1; s < Split; ++s)
            acc[r] += partial[warp + s][r];
    }
    return true;
}

// Split warps per output column, Rows rows per block (1 for a single row, as batch-1 decode
// has: a lane then holds one row's sums, and the registers that saves keep more warps, and so
// more loads, in flight; else kLinearRows): the block's kLinearWarps warps serve
// kLinearWarps / Split columns of its part. Split > 1 gives narrow outputs (Llama's k and
// v projections: 256 columns) enough warps in flight to keep memory busy. `Gated` (SwiGLU):
// one part, whose column j is silu(x . gate[j]) * (x . up[j]), as silu_mul computes it.
template <typename W, bool Vector, unsigned Split, bool Gated, unsigned Rows>
__global__ void linear_kernel(const float* __restrict__ x, const VectorParts parts, uint32_t rows,
                              uint32_t in) {
    __shared__ float partial[kLinearWarps][Rows];
    __shared__ float partial_up[Gated ? kLinearWarps : 1][Rows];
    // Constant indices only: a run-time index into the parameters copies them to the stack.
    LinearPart part = parts.part[0];
    uint32_t block0 = 0;
#pragma unroll
    for (unsigned k = 1; k < kMaxLinearParts; ++k)
        if (k < parts.count && parts.first_block[k] <= blockIdx.x) {
            part = parts.part[k];
            block0 = parts.first_block[k];
        }
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t j = (blockIdx.x - block0) * (kLinearWarps / Split) + warp / Split;
    const bool valid = j < part.cols; // no early return: the block meets at a barrier below
    const uint32_t r0 = blockIdx.y * Rows;
    const uint32_t nr = min(Rows, rows - r0);
    const uint64_t row = uint64_t(part.col0 + (valid ? j : 0)) * in;
    const uint32_t first = (warp % Split) * 32 + lane, step = 32 * Split;
    float acc[Rows] = {}, up[Rows] = {};
    if (valid) {
        dot_rows<W, Vector>(x, static_cast<const W*>(part.w) + row, in, r0, nr, first, step, acc);
        if (Gated)
            dot_rows<W, Vector>(x, static_cast<const W*>(parts.up) + row, in, r0, nr, first, step,
                                up);
    }
    const bool holder = reduce_column<Split>(acc, partial, valid);
    if (Gated) reduce_column<Split>(up, partial_up, valid);
    if (!holder) return;
    const float b = part.bias ? part.bias[part.col0 + j] : 0.0f;
    for (uint32_t r = 0; r < nr; ++r) {
        const float g = acc[r] + b;
        part.out[uint64_t(r0 + r) * part.cols + j] = Gated ? g / (1.0f + expf(-g)) * up[r] : g;
    }
}

// Warps per column from the shape alone (so a shape always sums in the same order): about 4096
// warps in all, at most the block's 8.
unsigned split_for(uint32_t cols) {
    return cols >= 4096 ? 1 : cols >= 2048 ? 2 : cols >= 1024 ? 4 : 8;
}

template <typename W, bool Gated, unsigned Split, unsigned Rows>
void launch_vector(cudaStream_t s, bool vector, const float* x, const VectorParts& parts,
                   uint32_t rows, uint32_t in) {
    const dim3 grid(parts.first_block[parts.count], blocks_for(rows, Rows));
    if (vector)
        linear_kernel<W, true, Split, Gated, Rows>
            <<<grid, kLinearWarps * 32, 0, s>>>(x, parts, rows, in);
    else
        linear_kernel<W, false, Split, Gated, Rows>
            <<<grid, kLinearWarps * 32, 0, s>>>(x, parts, rows, in);
}

template <typename W, bool Gated, unsigned Split>
void launch_vector(cudaStream_t s, bool vector, const float* x, VectorParts parts, uint32_t rows,
                   uint32_t in) {
    for (unsigned k = 0; k < parts.count; ++k)
        parts.first_block[k + 1] =
            parts.first_block[k] + blocks_for(parts.part[k].cols, kLinearWarps / Split);
    if (rows == 1)
        launch_vector<W, Gated, Split, 1>(s, vector, x, parts, rows, in);
    else
        launch_vector<W, Gated, Split, kLinearRows>(s, vector, x, parts, rows, in);
}

template <typename W, bool Gated>
void launch_vector(cudaStream_t s, bool vector, const float* x, const VectorParts& parts,
                   uint32_t rows, uint32_t in) {
    uint32_t cols = 0;
    for (unsigned k = 0; k < parts.count; ++k)
        cols += parts.part[k].cols;
    switch (split_for(cols)) {
    case 1:
        return launch_vector<W, Gated, 1>(s, vector, x, parts, rows, in);
    case 2:
        return launch_vector<W, Gated, 2>(s, vector, x, parts, rows, in);
    case 4:
        return launch_vector<W, Gated, 4>(s, vector, x, parts, rows, in);
    default:
        return launch_vector<W, Gated, 8>(s, vector, x, parts, rows, in);
    }
}

// Tensor cores for f16 weights over more rows than the vector kernel serves at once (prefill):
// a block of 4 warps computes a 64 x 64 tile of out, each warp 32 x 32 as 2 x 2 fragments of
// 16 x 16, stepping through `in` 32 at a time. The inputs are rounded to f16 as they are staged
// in shared memory (the weights already are), the products summed in f32 by the tensor cores
// in one fixed order per tile: the same bits on every run.
constexpr unsigned kMmaTile = 64, kMmaStep = 32, kMmaThreads = 128;
constexpr unsigned kMmaPitch = kMmaStep + 8; // halves per staged row: rows 16-byte aligned

__global__ void linear_mma_kernel(const float* __restrict__ x, const __half* __restrict__ w,
                                  const float* __restrict__ bias, float* __restrict__ out,
                                  uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    using namespace nvcuda;
    __shared__ __align__(32) __half xs[kMmaTile][kMmaPitch];
    __shared__ __align__(32) __half ws[kMmaTile][kMmaPitch];
    __shared__ __align__(32) float tile[kMmaTile][kMmaTile + 4];
    const uint32_t warp = threadIdx.x / 32;
    const uint32_t r0 = blockIdx.y * kMmaTile, c0 = blockIdx.x * kMmaTile;
    const uint32_t wr = (warp / 2) * 32, wc = (warp % 2) * 32; // the warp's quarter of the tile
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (unsigned a = 0; a < 2; ++a)
#pragma unroll
        for (unsigned b = 0; b < 2; ++b)
            wmma::fill_fragment(acc[a][b], 0.0f);
    for (uint32_t k0 = 0; k0 < in; k0 += kMmaStep) {
        // Consecutive threads stage consecutive elements of a row: coalesced; zeros past the
        // edges, so a partial tile adds nothing.
        for (uint32_t e = threadIdx.x; e < kMmaTile * kMmaStep; e += kMmaThreads) {
            const uint32_t i = e / kMmaStep, k = e % kMmaStep;
            const bool inside = k0 + k < in;
            xs[i][k] =
                __float2half_rn(r0 + i < rows && inside ? x[uint64_t(r0 + i) * in + k0 + k] : 0.0f);
            ws[i][k] = c0 + i < cols && inside ? w[uint64_t(col0 + c0 + i) * in + k0 + k]
                                               : __float2half_rn(0.0f);
        }
        __syncthreads();
#pragma unroll
        for (uint32_t k = 0; k < kMmaStep; k += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[2];
#pragma unroll
            for (unsigned a = 0; a < 2; ++a)
                wmma::load_matrix_sync(fa[a], &xs[wr + 16 * a][k], kMmaPitch);
#pragma unroll
            for (unsigned b = 0; b < 2; ++b) // w is [out][in]: column-major as the B operand
                wmma::load_matrix_sync(fb[b], &ws[wc + 16 * b][k], kMmaPitch);
#pragma unroll
            for (unsigned a = 0; a < 2; ++a)
#pragma unroll
                for (unsigned b = 0; b < 2; ++b)
                    wmma::mma_sync(acc[a][b], fa[a], fb[b], acc[a][b]);
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned a = 0; a < 2; ++a)
#pragma unroll
        for (unsigned b = 0; b < 2; ++b)
            wmma::store_matrix_sync(&tile[wr + 16 * a][wc + 16 * b], acc[a][b], kMmaTile + 4,
                                    wmma::mem_row_major);
    __syncthreads();
    for (uint32_t e = threadIdx.x; e < kMmaTile * kMmaTile; e += kMmaThreads) {
        const uint32_t i = e / kMmaTile, j = e % kMmaTile;
        if (r0 + i < rows && c0 + j < cols)
            out[uint64_t(r0 + i) * cols + c0 + j] =
                tile[i][j] + (bias ? bias[col0 + c0 + j] : 0.0f);
    }
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

// RoPE's rotation of pair (i, i + d/2) of head `head` at `position`, the angle in double
// as the CPU computes it.
__device__ float2 rotate(const float* head, uint32_t i, uint32_t head_dim, uint32_t position,
                         float theta) {
    const uint32_t half = head_dim / 2;
    const double angle = position * pow(double(theta), -2.0 * i / head_dim);
    const float c = float(cos(angle)), s = float(sin(angle));
    const float a = head[i], b = head[i + half];
    return make_float2(a * c - b * s, b * c + a * s);
}

__global__ void rope_kernel(float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
                            uint32_t head_dim, float theta) {
    const uint32_t half = head_dim / 2;
    const uint64_t id = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= uint64_t(rows) * heads * half) return;
    const uint32_t i = uint32_t(id % half);
    const uint64_t head = id / half; // row * heads + h
    float* h = x + head * head_dim;
    const float2 turned = rotate(h, i, head_dim, positions[head / heads], theta);
    h[i] = turned.x;
    h[i + half] = turned.y;
}

// rope on q (in place) and k, then store_kv, for one row per block: k's rotated pairs go
// straight into the cache. The same arithmetic as the three kernels it replaces.
__global__ void rope_store_kv_kernel(float* q, const float* k, const float* v, char* cache,
                                     uint64_t stride, const uint32_t* slots,
                                     const uint32_t* positions, uint32_t heads, uint32_t kv_heads,
                                     uint32_t head_dim, float theta, uint32_t max_seq) {
    const uint32_t r = blockIdx.x, half = head_dim / 2, position = positions[r];
    const uint64_t kv_width = uint64_t(kv_heads) * head_dim;
    float* keys = reinterpret_cast<float*>(cache + slots[r] * stride);
    float* values = keys + uint64_t(max_seq) * kv_width;
    const uint64_t at = uint64_t(position) * kv_width;
    for (uint32_t e = threadIdx.x; e < (heads + kv_heads) * half; e += blockDim.x) {
        const uint32_t h = e / half, i = e % half;
        if (h < heads) {
            float* head = q + (uint64_t(r) * heads + h) * head_dim;
            const float2 turned = rotate(head, i, head_dim, position, theta);
            head[i] = turned.x;
            head[i + half] = turned.y;
        } else {
            const uint64_t offset = uint64_t(h - heads) * head_dim;
            const float2 turned = rotate(k + r * kv_width + offset, i, head_dim, position, theta);
            keys[at + offset + i] = turned.x;
            keys[at + offset + i + half] = turned.y;
        }
    }
    for (uint32_t e = threadIdx.x; e < kv_width; e += blockDim.x)
        values[at + e] = v[r * kv_width + e];
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

bool aligned16(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Whether every matrix of a launch can take the 16-byte path.
bool vector_path(const float* x, const VectorParts& v, bool half, uint32_t in) {
    const unsigned group = half ? kGroup<__half> : kGroup<float>;
    bool vector = in % group == 0 && aligned16(x) && (!v.up || aligned16(v.up));
    for (unsigned k = 0; k < v.count; ++k)
        vector = vector && aligned16(v.part[k].w) && (uint64_t(v.part[k].col0) * in) % group == 0;
    return vector;
}

} // namespace

uint64_t kernel_launches() {
    return launches;
}

void embedding(void* stream, const int32_t* tokens, const uint32_t* positions, const void* table,
               const void* positions_table, bool half, float* out, uint32_t rows, uint32_t width) {
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
    const LinearPart part{w, bias, out, col0, cols};
    linears(stream, x, &part, 1, half, rows, in);
}

void linears(void* stream, const float* x, const LinearPart* parts, unsigned count, bool half,
             uint32_t rows, uint32_t in) {
    const cudaStream_t s = as_stream(stream);
    if (half && rows > kLinearRows) { // tensor cores: a launch per part
        for (unsigned k = 0; k < count; ++k) {
            ++launches;
            const LinearPart& p = parts[k];
            const dim3 grid(blocks_for(p.cols, kMmaTile), blocks_for(rows, kMmaTile));
            linear_mma_kernel<<<grid, kMmaThreads, 0, s>>>(x, static_cast<const __half*>(p.w),
                                                           p.bias, p.out, rows, in, p.col0, p.cols);
        }
        return;
    }
    ++launches;
    VectorParts v;
    v.count = count;
    for (unsigned k = 0; k < count; ++k)
        v.part[k] = parts[k];
    if (half)
        launch_vector<__half, false>(s, vector_path(x, v, half, in), x, v, rows, in);
    else
        launch_vector<float, false>(s, vector_path(x, v, half, in), x, v, rows, in);
}

void gated_linear(void* stream, const float* x, const void* gate, const void* up, bool half,
                  float* out, float* up_out, uint32_t rows, uint32_t in, uint32_t cols) {
    if (half && rows > kLinearRows) { // tensor cores, then the gate
        linear(stream, x, gate, half, nullptr, out, rows, in, 0, cols);
        linear(stream, x, up, half, nullptr, up_out, rows, in, 0, cols);
        silu_mul(stream, out, up_out, uint64_t(rows) * cols);
        return;
    }
    ++launches;
    VectorParts v;
    v.count = 1;
    v.part[0] = {gate, nullptr, out, 0, cols};
    v.up = up;
    const bool vector = vector_path(x, v, half, in);
    if (half)
        launch_vector<__half, true>(as_stream(stream), vector, x, v, rows, in);
    else
        launch_vector<float, true>(as_stream(stream), vector, x, v, rows, in);
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

void rope_store_kv(void* stream, float* q, const float* k, const float* v, void* cache,
                   uint64_t stride, const uint32_t* slots, const uint32_t* positions, uint32_t rows,
                   uint32_t heads, uint32_t kv_heads, uint32_t head_dim, float theta,
                   uint32_t max_seq) {
    ++launches;
    rope_store_kv_kernel<<<rows, kElementThreads, 0, as_stream(stream)>>>(
        q, k, v, static_cast<char*>(cache), stride, slots, positions, heads, kv_heads, head_dim,
        theta, max_seq);
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
