#pragma once
// The CUDA backend's kernels, one launcher per kernel (cuda_kernels.cu; the matrix kernels'
// launchers, linear, linears and gated_linear, in cuda_matrix_kernels.cu). Plain C++17 with no
// engine or CUDA header, since nvcc compiles the kernels as C++17 (toolchain.md) and the
// adapters that call these are C++20. `stream` is a cudaStream_t. Every launcher enqueues
// exactly one kernel and counts it (kernel_launches).
//
// Determinism: every sum runs in one fixed order (a thread's own loop, then a fixed butterfly
// or tree across threads, never atomics), and block shapes are constants, so the same inputs
// give the same bits on the same device.
#include <cstdint>

namespace tmmu::cuda::kernels {

// Kernels this thread has launched so far (host side: a graph replay launches none).
uint64_t kernel_launches();

// out[r] = tokens' rows of `table` [vocab][width] (+ `positions_table` rows at each row's
// position, when not null); both tables f16 when `half`, else f32.
void embedding(void* stream, const int32_t* tokens, const uint32_t* positions, const void* table,
               const void* positions_table, bool half, float* out, uint32_t rows, uint32_t width);
// (x - mean) / sqrt(var + eps) * gamma + beta per row; statistics in double, as the CPU's.
void layernorm(void* stream, const float* x, const float* gamma, const float* beta, float* out,
               uint32_t rows, uint32_t width, float eps);
// x / sqrt(mean(x^2) + eps) * gamma per row.
void rmsnorm(void* stream, const float* x, const float* gamma, float* out, uint32_t rows,
             uint32_t width, float eps);
void add(void* stream, const float* a, const float* b, float* out, uint64_t n);
// out[r][j] = bias[col0 + j] + dot(w[col0 + j], x[r]) for j < cols: w is [out][in] (Conv1D
// weights are transposed to this layout when they are uploaded), f16 when `half`, else f32;
// bias may be null. Sums are f32 either way. Up to 8 rows (decode) read each weight once with
// 16-byte loads where aligned; with f16 weights, 2 to 8 rows (batched decode, `in` a multiple of
// 32) and more rows (prefill) run on the tensor cores, the inputs rounded to f16.
void linear(void* stream, const float* x, const void* w, bool half, const float* bias, float* out,
            uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols);
// Several linear() outputs over the same input x in one launch (one per part on the tensor
// cores): q, k and v from their matrices or from column ranges of one.
struct LinearPart {
    const void* w;
    const float* bias; // may be null
    float* out;        // [rows][cols]
    uint32_t col0, cols;
    // Added to each output as it is written (out = residual + product, the bits add() would
    // give; residual may be out itself): null for none.
    const float* residual = nullptr;
};
constexpr unsigned kMaxLinearParts = 3;
void linears(void* stream, const float* x, const LinearPart* parts, unsigned count, bool half,
             uint32_t rows, uint32_t in);
// SwiGLU's first half: out = silu(x . gate^T) * (x . up^T), [rows][cols], as linear() twice and
// silu_mul would compute it, in one launch (three on the tensor cores, which use `up_out`,
// [rows][cols], for the up projection).
void gated_linear(void* stream, const float* x, const void* gate, const void* up, bool half,
                  float* out, float* up_out, uint32_t rows, uint32_t in, uint32_t cols);
void gelu_tanh(void* stream, float* x, uint64_t n);                    // in place
void silu_mul(void* stream, float* gate, const float* up, uint64_t n); // gate = silu(gate) * up
// Rotates pairs (i, i + d/2) of every head of every row by the row's position, with the cosines
// and sines of `table` (runtime/rope.h's layout: cos at table[p * d/2 + i], sin at
// table[(table_positions + p) * d/2 + i]; every position below table_positions).
void rope(void* stream, float* x, const uint32_t* positions, uint32_t rows, uint32_t heads,
          uint32_t head_dim, const float* table, uint32_t table_positions);
// Writes every row's k and v into its slot's cache (slot s at cache + s * stride bytes: K then
// V, each [max_seq][kv_width]) at the row's position.
void store_kv(void* stream, const float* k, const float* v, void* cache, uint64_t stride,
              const uint32_t* slots, const uint32_t* positions, uint32_t rows, uint32_t kv_width,
              uint32_t max_seq);
// rope() on q and k, then store_kv(), in one launch (k is left unrotated: its rotated rows go
// straight into the cache).
void rope_store_kv(void* stream, float* q, const float* k, const float* v, void* cache,
                   uint64_t stride, const uint32_t* slots, const uint32_t* positions, uint32_t rows,
                   uint32_t heads, uint32_t kv_heads, uint32_t head_dim, const float* table,
                   uint32_t table_positions, uint32_t max_seq);
// Causal softmax attention of every row's query heads over positions 0..position of its slot's
// cache (grouped: head h reads kv head h / (heads / kv_heads)); out [rows][heads * head_dim].
void attend(void* stream, const float* q, const void* cache, uint64_t stride, const uint32_t* slots,
            const uint32_t* positions, float* out, uint32_t rows, uint32_t heads, uint32_t kv_heads,
            uint32_t head_dim, uint32_t max_seq);

// Memory checks on the device (runtime/memory_check.h), one register of `words` 4-byte words
// at `data` per launch: op 0 records its fingerprint in prints[reg], op 1 checks it against
// that, op 2 checks the 16 guard words on each side for 0xFDFDFDFD. The first finding of a step
// goes into report[0..4] = {code (1: changed, 2: guard), instruction, reg, guard word, its
// value}; later ones leave it alone (the stream runs launches in order).
void memory_check(void* stream, const void* data, uint64_t* prints, uint32_t* report,
                  uint32_t words, uint32_t reg, uint32_t instruction, uint32_t op);

// The shared memory attend needs at max_seq positions (scores, the query head, the reduction),
// and permission for that much: false when the device cannot give a block so much (a plan
// whose caches need more is refused at load).
uint64_t attend_shared_bytes(uint32_t max_seq, uint32_t head_dim);
bool allow_attend_shared_bytes(uint64_t bytes);

} // namespace tmmu::cuda::kernels
