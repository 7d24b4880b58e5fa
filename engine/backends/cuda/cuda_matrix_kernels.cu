#include "backends/cuda/cuda_kernels.h"

#include "backends/cuda/cuda_kernel_common.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace tmmu::cuda::kernels {

namespace {

// Block shapes are constants: the reductions' order depends on them, so they never vary.
constexpr unsigned kLinearWarps = 8; // output columns per block, a warp each
constexpr unsigned kLinearRows = 8;  // rows per block: each weight row read once per 8 rows

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

// The parts one launch of the vector kernel computes: a matrix (or a column range of one) each,
// with its own bias and output; the part of block b is the last whose first_block <= b.
struct VectorParts {
    LinearPart part[kMaxLinearParts];
    const void* up = nullptr; // gated launches: the up projection beside part[0]'s gate
    uint32_t first_block[kMaxLinearParts + 1] = {};
    unsigned count = 0;
};

// Dots weight rows' dot products with up to Rows input rows, a lane's strided share: 16-byte
// weight loads where `Vector` (rows and weights 16-byte aligned, `in` a multiple of the
// group), unrolled so each lane keeps several loads in flight (decode is bound by how many
// bytes are on their way from memory at once, not by the arithmetic). Each load of x serves
// every weight row; each weight row's sums run in the same order whatever Dots is.
template <typename W, bool Vector, unsigned Dots, unsigned Rows>
__device__ void dot_rows(const float* __restrict__ x, const W* const (&wr)[Dots], uint32_t in,
                         uint32_t r0, uint32_t nr, uint32_t first, uint32_t step,
                         float (&acc)[Dots][Rows]) {
    constexpr unsigned G = kGroup<W>;
    if (Vector) {
#pragma unroll(4 / Dots)
        for (uint32_t i = first; i < in / G; i += step) {
            float a[Dots][G];
#pragma unroll
            for (unsigned d = 0; d < Dots; ++d)
                load_group(wr[d] + G * uint64_t(i), a[d]);
#pragma unroll
            for (uint32_t r = 0; r < Rows; ++r)
                if (r < nr)
#pragma unroll
                    for (unsigned g = 0; g < G / 4; ++g) {
                        const float4 b = reinterpret_cast<const float4*>(x + uint64_t(r0 + r) *
                                                                                 in)[G / 4 * i + g];
#pragma unroll
                        for (unsigned d = 0; d < Dots; ++d)
                            acc[d][r] += a[d][4 * g] * b.x + a[d][4 * g + 1] * b.y +
                                         a[d][4 * g + 2] * b.z + a[d][4 * g + 3] * b.w;
                    }
        }
    } else {
        for (uint32_t i = first; i < in; i += step) {
            float a[Dots];
#pragma unroll
            for (unsigned d = 0; d < Dots; ++d)
                a[d] = load_weight(wr[d] + i);
#pragma unroll
            for (uint32_t r = 0; r < Rows; ++r)
                if (r < nr) {
                    const float b = x[uint64_t(r0 + r) * in + i];
#pragma unroll
                    for (unsigned d = 0; d < Dots; ++d)
                        acc[d][r] += a[d] * b;
                }
        }
    }
}

// Asks L2 for `bytes` (a multiple of 16) of weights at p (16-byte aligned) with one bulk
// prefetch (compute capability 9.0 and later): issued before wait_for_inputs, the block's
// weights stream in while the kernel before it is still finishing.
__device__ void prefetch_weights(const void* p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(__cvta_generic_to_global(p)),
                 "r"(bytes)
                 : "memory");
#endif
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

// Weight rows a warp dots with each load of x: gate and up (Gated), or two adjacent columns
// on the vector path over several input rows, where the loads of x cost more than the
// weights' (16 per 16-byte weight load at 8 rows: pairing columns halves them); else one.
template <bool Vector, bool Gated, unsigned Rows>
constexpr unsigned kDots = Gated || (Vector && Rows > 1) ? 2 : 1;
// Output columns a warp's Split share computes: the gated pair is one column.
template <bool Vector, bool Gated, unsigned Rows>
constexpr unsigned kWarpColumns = Gated ? 1 : kDots<Vector, Gated, Rows>;

// Split warps per output column, Rows rows per block (1 for a single row, as batch-1 decode
// has: a lane then holds one row's sums, and the registers that saves keep more warps, and so
// more loads, in flight; else kLinearRows): the block's kLinearWarps warps serve
// kLinearWarps / Split * kWarpColumns columns of its part. Split > 1 gives narrow outputs
// (Llama's k and v projections: 256 columns) enough warps in flight to keep memory busy.
// `Gated` (SwiGLU): one part, whose column j is silu(x . gate[j]) * (x . up[j]), as silu_mul
// computes it.
template <typename W, bool Vector, unsigned Split, bool Gated, unsigned Rows>
__global__ void linear_kernel(const float* __restrict__ x, const VectorParts parts, uint32_t rows,
                              uint32_t in) {
    constexpr unsigned Dots = kDots<Vector, Gated, Rows>;
    __shared__ float partial[Dots][kLinearWarps][Rows];
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
    const uint32_t j0 = ((blockIdx.x - block0) * (kLinearWarps / Split) + warp / Split) *
                        kWarpColumns<Vector, Gated, Rows>;
    const W* wr[Dots];
    bool valid[Dots]; // no early return: the block meets at a barrier below
#pragma unroll
    for (unsigned d = 0; d < Dots; ++d) {
        const uint32_t j = Gated ? j0 : j0 + d;
        valid[d] = j < part.cols;
        wr[d] = static_cast<const W*>(Gated && d == 1 ? parts.up : part.w) +
                uint64_t(part.col0 + (valid[d] ? j : 0)) * in;
    }
    const uint32_t r0 = blockIdx.y * Rows;
    const uint32_t nr = min(Rows, rows - r0);
    const uint32_t first = (warp % Split) * 32 + lane, step = 32 * Split;
    // Vector rows are whole 16-byte groups at 16-byte aligned addresses (vector_path).
    if (Vector && warp % Split == 0 && lane == 0)
#pragma unroll
        for (unsigned d = 0; d < Dots; ++d)
            if (valid[d]) prefetch_weights(wr[d], in * sizeof(W));
    start_after_inputs();
    float acc[Dots][Rows] = {};
    if (valid[0]) dot_rows<W, Vector>(x, wr, in, r0, nr, first, step, acc);
    bool holder[Dots];
#pragma unroll
    for (unsigned d = 0; d < Dots; ++d)
        holder[d] = reduce_column<Split>(acc[d], partial[d], valid[d]);
#pragma unroll
    for (unsigned d = 0; d < (Gated ? 1 : Dots); ++d) {
        if (!holder[d]) continue;
        const uint32_t j = j0 + d;
        const float b = part.bias ? part.bias[part.col0 + j] : 0.0f;
        for (uint32_t r = 0; r < nr; ++r) {
            const float g = acc[d][r] + b;
            const float v = Gated ? g / (1.0f + expf(-g)) * acc[1][r] : g;
            const uint64_t at = uint64_t(r0 + r) * part.cols + j;
            part.out[at] = part.residual ? part.residual[at] + v : v; // add()'s a + b
        }
    }
}

// Warps per column from the shape alone (so a shape always sums in the same order): about 4096
// warps in all, at most the block's 8.
unsigned split_for(uint32_t cols) {
    return cols >= 4096 ? 1 : cols >= 2048 ? 2 : cols >= 1024 ? 4 : 8;
}

template <typename W, bool Vector, bool Gated, unsigned Split, unsigned Rows>
void launch_vector(cudaStream_t s, const float* x, VectorParts parts, uint32_t rows, uint32_t in) {
    constexpr unsigned columns = kLinearWarps / Split * kWarpColumns<Vector, Gated, Rows>;
    for (unsigned k = 0; k < parts.count; ++k)
        parts.first_block[k + 1] = parts.first_block[k] + blocks_for(parts.part[k].cols, columns);
    const dim3 grid(parts.first_block[parts.count], blocks_for(rows, Rows));
    launch(linear_kernel<W, Vector, Split, Gated, Rows>, grid, kLinearWarps * 32, 0, s, x, parts,
           rows, in);
}

template <typename W, bool Gated, unsigned Split>
void launch_vector(cudaStream_t s, bool vector, const float* x, const VectorParts& parts,
                   uint32_t rows, uint32_t in) {
    if (vector && rows == 1)
        launch_vector<W, true, Gated, Split, 1>(s, x, parts, rows, in);
    else if (vector)
        launch_vector<W, true, Gated, Split, kLinearRows>(s, x, parts, rows, in);
    else if (rows == 1)
        launch_vector<W, false, Gated, Split, 1>(s, x, parts, rows, in);
    else
        launch_vector<W, false, Gated, Split, kLinearRows>(s, x, parts, rows, in);
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
                                  const float* __restrict__ bias, const float* residual, float* out,
                                  uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    using namespace nvcuda;
    start_after_inputs();
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
        if (r0 + i < rows && c0 + j < cols) {
            const uint64_t at = uint64_t(r0 + i) * cols + c0 + j;
            const float v = tile[i][j] + (bias ? bias[col0 + c0 + j] : 0.0f);
            out[at] = residual ? residual[at] + v : v; // add()'s a + b
        }
    }
}

// Tensor cores for f16 weights over 2 to kLinearRows rows (batched decode): mma.m16n8k8 with
// 16 weight rows (output columns) as A and the input rows as B (8 columns, zeros past the
// last row), x rounded to f16 as prefill's kernel rounds it. A block computes 16 columns; its
// kBatchWarps warps split `in` in chunks of 32 (warp w takes chunks w, w + kBatchWarps, ...,
// kBatchUnroll of them in flight), and their sums are added in warp order: the same bits on
// every run. Lane (g, t) = (lane / 4, lane % 4) loads 8 consecutive inputs of a chunk with one
// 16-byte load per weight row (rows g and g + 8) and per input row (row g). A dot product
// does not care which input meets the tensor cores' k position, only that both operands agree:
// mma m of a chunk takes the lane's inputs 2m and 2m + 1 (k = 2t, 2t + 1 of the fragments),
// so every load feeds the tensor cores as it arrives, with no shuffle.
constexpr unsigned kBatchWarps = 8, kBatchColumns = 16, kBatchChunk = 32, kBatchUnroll = 4;

// d += a (16 x 8, row-major: rows g and g + 8, k 2t and 2t + 1) * b (8 x 8, k 2t and 2t + 1 of
// column g); d holds rows g (d[0], d[1]) and g + 8 (d[2], d[3]) of columns 2t and 2t + 1.
__device__ void mma_16x8x8(float (&d)[4], uint32_t a_row_g, uint32_t a_row_g8, uint32_t b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, "
                 "{%6}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a_row_g), "r"(a_row_g8), "r"(b));
}

// (lo, hi) rounded to an f16 pair, lo in the low half as a fragment register holds it.
__device__ uint32_t half2_bits(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
}

// Eight inputs of a row as four f16 pairs (zeros for a row past the last).
__device__ uint4 load_inputs_f16(const float* p, bool valid) {
    if (!valid) return make_uint4(0, 0, 0, 0);
    const float4 lo = reinterpret_cast<const float4*>(p)[0];
    const float4 hi = reinterpret_cast<const float4*>(p)[1];
    return make_uint4(half2_bits(lo.x, lo.y), half2_bits(lo.z, lo.w), half2_bits(hi.x, hi.y),
                      half2_bits(hi.z, hi.w));
}

// A chunk's four mma steps over the 16-byte loads of weight rows g and g + 8 and input row g.
__device__ void mma_chunk(float (&d)[4], uint4 row_g, uint4 row_g8, uint4 b) {
    mma_16x8x8(d, row_g.x, row_g8.x, b.x);
    mma_16x8x8(d, row_g.y, row_g8.y, b.y);
    mma_16x8x8(d, row_g.z, row_g8.z, b.z);
    mma_16x8x8(d, row_g.w, row_g8.w, b.w);
}

// `Gated`: part 0 is the gate, parts.up the up projection beside it, and out = silu(gate) * up.
template <bool Gated>
__global__ void __launch_bounds__(kBatchWarps * 32)
    linear_batch_kernel(const float* __restrict__ x, const VectorParts parts, uint32_t rows,
                        uint32_t in) {
    constexpr unsigned Mats = Gated ? 2 : 1;
    __shared__ float partial[kBatchWarps][Mats][4][32];
    LinearPart part = parts.part[0];
    uint32_t block0 = 0;
#pragma unroll
    for (unsigned k = 1; k < kMaxLinearParts; ++k)
        if (k < parts.count && parts.first_block[k] <= blockIdx.x) {
            part = parts.part[k];
            block0 = parts.first_block[k];
        }
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const uint32_t c0 = (blockIdx.x - block0) * kBatchColumns;
    // Columns past the part's last read its last row (any valid row) and are never written.
    const auto row_of = [&](const void* w, uint32_t j) {
        return static_cast<const __half*>(w) +
               uint64_t(part.col0 + min(c0 + j, part.cols - 1)) * in;
    };
    const __half* wg[Mats];
    const __half* wg8[Mats];
#pragma unroll
    for (unsigned m = 0; m < Mats; ++m) {
        const void* w = m == 0 ? part.w : parts.up;
        wg[m] = row_of(w, g);
        wg8[m] = row_of(w, g + 8);
        if (warp == m && lane < kBatchColumns && c0 + lane < part.cols)
            prefetch_weights(row_of(w, lane), in * sizeof(__half));
    }
    start_after_inputs();
    const float* xg = x + uint64_t(g) * in + 8 * t;
    const bool has_row = g < rows;
    float d[Mats][4] = {};
    const uint32_t chunks = in / kBatchChunk;
    for (uint32_t base = warp; base < chunks; base += kBatchWarps * kBatchUnroll) {
        uint4 a[kBatchUnroll][Mats][2];
#pragma unroll
        for (unsigned u = 0; u < kBatchUnroll; ++u) {
            const uint32_t k = (base + u * kBatchWarps) * kBatchChunk + 8 * t;
            if (base + u * kBatchWarps < chunks)
#pragma unroll
                for (unsigned m = 0; m < Mats; ++m) {
                    a[u][m][0] = __ldg(reinterpret_cast<const uint4*>(wg[m] + k));
                    a[u][m][1] = __ldg(reinterpret_cast<const uint4*>(wg8[m] + k));
                }
        }
#pragma unroll
        for (unsigned u = 0; u < kBatchUnroll; ++u) {
            const uint32_t chunk = base + u * kBatchWarps;
            if (chunk >= chunks) break;
            const uint4 b = load_inputs_f16(xg + chunk * kBatchChunk, has_row);
#pragma unroll
            for (unsigned m = 0; m < Mats; ++m)
                mma_chunk(d[m], a[u][m][0], a[u][m][1], b);
        }
    }
#pragma unroll
    for (unsigned m = 0; m < Mats; ++m)
#pragma unroll
        for (unsigned i = 0; i < 4; ++i)
            partial[warp][m][i][lane] = d[m][i];
    __syncthreads();
    if (warp != 0) return;
#pragma unroll
    for (unsigned m = 0; m < Mats; ++m)
#pragma unroll
        for (unsigned i = 0; i < 4; ++i)
            for (unsigned w = 1; w < kBatchWarps; ++w)
                d[m][i] += partial[w][m][i][lane];
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) { // d[.][i]: column g + 8 * (i / 2), row 2t + i % 2
        const uint32_t j = c0 + g + 8 * (i / 2), r = 2 * t + i % 2;
        if (j >= part.cols || r >= rows) continue;
        const float b = part.bias ? part.bias[part.col0 + j] : 0.0f;
        const float v0 = d[0][i] + b;
        const float v = Gated ? v0 / (1.0f + expf(-v0)) * d[Mats - 1][i] : v0;
        const uint64_t at = uint64_t(r) * part.cols + j;
        part.out[at] = part.residual ? part.residual[at] + v : v; // add()'s a + b
    }
}

// Whether every matrix of a launch can take the 16-byte path.
bool vector_path(const float* x, const VectorParts& v, bool half, uint32_t in) {
    const unsigned group = half ? kGroup<__half> : kGroup<float>;
    bool vector = in % group == 0 && aligned16(x) && (!v.up || aligned16(v.up));
    for (unsigned k = 0; k < v.count; ++k)
        vector = vector && aligned16(v.part[k].w) && (uint64_t(v.part[k].col0) * in) % group == 0;
    return vector;
}

// One row stays on the vector kernel: on the H200 a TinyLlama f16 decode token took 1.555 ms
// with its row on the tensor cores (7 of 8 columns of B zero) against 1.323 ms there.
constexpr unsigned kBatchMinRows = 2;

// Whether linear_batch_kernel serves a launch: f16 weights, 2 to kLinearRows rows, whole
// chunks of `in`, 16-byte aligned rows.
bool batch_path(const float* x, const VectorParts& v, uint32_t rows, uint32_t in) {
    return rows >= kBatchMinRows && rows <= kLinearRows && in % kBatchChunk == 0 &&
           vector_path(x, v, true, in);
}

template <bool Gated>
void launch_batch(cudaStream_t s, const float* x, VectorParts parts, uint32_t rows, uint32_t in) {
    for (unsigned k = 0; k < parts.count; ++k)
        parts.first_block[k + 1] =
            parts.first_block[k] + blocks_for(parts.part[k].cols, kBatchColumns);
    launch(linear_batch_kernel<Gated>, dim3(parts.first_block[parts.count]), kBatchWarps * 32, 0, s,
           x, parts, rows, in);
}

} // namespace

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
            const LinearPart& p = parts[k];
            const dim3 grid(blocks_for(p.cols, kMmaTile), blocks_for(rows, kMmaTile));
            launch(linear_mma_kernel, grid, kMmaThreads, 0, s, x, static_cast<const __half*>(p.w),
                   p.bias, p.residual, p.out, rows, in, p.col0, p.cols);
        }
        return;
    }
    VectorParts v;
    v.count = count;
    for (unsigned k = 0; k < count; ++k)
        v.part[k] = parts[k];
    if (half && batch_path(x, v, rows, in))
        launch_batch<false>(s, x, v, rows, in);
    else if (half)
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
    VectorParts v;
    v.count = 1;
    v.part[0] = {gate, nullptr, out, 0, cols};
    v.up = up;
    const bool vector = vector_path(x, v, half, in);
    if (half && batch_path(x, v, rows, in))
        launch_batch<true>(as_stream(stream), x, v, rows, in);
    else if (half)
        launch_vector<__half, true>(as_stream(stream), vector, x, v, rows, in);
    else
        launch_vector<float, true>(as_stream(stream), vector, x, v, rows, in);
}

} // namespace tmmu::cuda::kernels
