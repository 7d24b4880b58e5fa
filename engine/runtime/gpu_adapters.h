#pragma once
// The adapters every GPU backend shares (seed 002, A3, A5): f32, each call enqueuing its
// opcode's kernels for all rows of the step on ExecutionContext::queue, every pointer in device
// memory. A backend supplies the kernels as a KernelSet, a type with a static launcher per
// kernel (CUDA's cuda_kernels.h, Vulkan's vulkan_kernels.h), all with these signatures:
//
//   embedding(queue, tokens, positions, table, positions_table|null, half, out, rows, width)
//   layernorm(queue, x, gamma, beta, out, rows, width, eps)
//   rmsnorm(queue, x, gamma, out, rows, width, eps)
//   add(queue, a, b, out, n)
//   linear(queue, x, w [out][in], half, bias|null, out, rows, in, col0, cols)
//   gelu_tanh(queue, x, n)            silu_mul(queue, gate, up, n)
//   rope(queue, x, positions, rows, heads, head_dim, theta)
//   store_kv(queue, k, v, cache, stride, slots, positions, rows, kv_width, max_seq)
//   attend(queue, q, cache, stride, slots, positions, out, rows, heads, kv_heads, head_dim,
//          max_seq)
//
// A kernel set may also fuse what an opcode enqueues, to cut launches (CUDA's does; the
// adapters fall back to the kernels above where a set has none of these):
//
//   LinearPart {w, bias|null, out, col0, cols}, and linears(queue, x, parts, count, half, rows,
//       in): linear() for each part over the same x
//   gated_linear(queue, x, gate, up, half, out, up_out, rows, in, cols): linear() of both
//       into out and up_out, then silu_mul(out, up_out)
//   rope_store_kv(queue, q, k, v, cache, stride, slots, positions, rows, heads, kv_heads,
//       head_dim, theta, max_seq): rope() of q and k, then store_kv()
//
// A kernel set with LinearPart also takes the residual runtime/gpu_fusion.h folds into an
// instruction: LinearPart::residual, added to the output as it is written.
//
// `half`: the tables or the matrix hold f16 values (an f16 run, pack_weights); sums are f32.
// Weights the CPU reads as [in, out] (GPT-2's Conv1D) are uploaded transposed to [out, in]
// (conv1d_weights says which), so one matrix kernel serves every layout.
#include "runtime/adapter.h"
#include "runtime/adapter_memory.h"
#include "runtime/param_block.h"
#include "runtime/run_record.h"
#include "runtime/weights.h"

#include <initializer_list>
#include <iterator>
#include <vector>

namespace tmmu::runtime {

// Per plan weight: whether it is an [in, out] matrix a GPU backend uploads transposed.
std::vector<bool> conv1d_weights(const ExecutionPlan& plan);
// Transposes those matrices of `weights` in place to [out, in].
void transpose_conv1d_weights(const ExecutionPlan& plan, WeightStore& weights);

// Per plan weight: whether a GPU backend stores it as f16 at `precision` (the rank-2 weights:
// matrices and embedding tables; biases and norm scales stay f32).
std::vector<bool> half_weights(const ExecutionPlan& plan, WeightPrecision precision);
// IEEE binary16 bits of v, rounded to nearest even (overflow to infinity, NaN kept NaN).
uint16_t f16_bits(float v);
// The weights as a GPU backend uploads them: each at a 16-byte aligned byte offset, f16 where
// `half` says so, f32 elsewhere.
struct PackedWeights {
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> offset; // per plan weight, in bytes
};
PackedWeights pack_weights(const ExecutionPlan& plan, const WeightStore& weights,
                           const std::vector<bool>& half);
// Sets Operands::half_weights of every bound instruction from `half`.
void mark_half_weights(std::vector<BoundInstruction>& bound, const ExecutionPlan& plan,
                       const std::vector<bool>& half);

template <class K>
struct GpuAdapters {
    // One matrix product over an opcode's input: linear()'s arguments past x.
    struct Matrix {
        const void* w;
        bool half;
        const float* bias;
        float* out;
        uint32_t col0, cols;
    };

    // Products over the same input: one launch where the kernel set fuses them (and their
    // weights share a precision, as pack_weights makes them).
    static void linears(const ExecutionContext& ctx, const float* x, uint32_t in,
                        std::initializer_list<Matrix> matrices) {
        if constexpr (requires { typename K::LinearPart; }) {
            typename K::LinearPart parts[3];
            bool same = matrices.size() <= std::size(parts);
            for (const Matrix& m : matrices)
                same = same && m.half == matrices.begin()->half;
            if (same) {
                unsigned n = 0;
                for (const Matrix& m : matrices)
                    parts[n++] = {m.w, m.bias, m.out, m.col0, m.cols};
                K::linears(ctx.queue, x, parts, n, matrices.begin()->half, ctx.rows, in);
                return;
            }
        }
        for (const Matrix& m : matrices)
            K::linear(ctx.queue, x, m.w, m.half, m.bias, m.out, ctx.rows, in, m.col0, m.cols);
    }

    // An opcode's last product, weights[w] over x into its output, with the residual folded
    // into it (where one was) added.
    static void output_linear(const ExecutionContext& ctx, const Operands& o, const float* x,
                              size_t w, const float* bias, uint32_t in, uint32_t cols) {
        if constexpr (requires { typename K::LinearPart; }) {
            const typename K::LinearPart part{o.weights[w],     bias, output_f32(o), 0, cols,
                                              o.output_residual};
            K::linears(ctx.queue, x, &part, 1, weight_is_f16(o, w), ctx.rows, in);
        } else {
            K::linear(ctx.queue, x, o.weights[w], weight_is_f16(o, w), bias, output_f32(o),
                      ctx.rows, in, 0, cols);
        }
    }

    static void embedding(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<EmbeddingParams>(*o.params);
        K::embedding(ctx.queue, static_cast<const int32_t*>(o.inputs[0]),
                     ctx.position_of_row.data(), o.weights[0], p.positions ? o.weights[1] : nullptr,
                     weight_is_f16(o, 0), output_f32(o), ctx.rows, p.width);
    }

    static void layernorm(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<NormParams>(*o.params);
        K::layernorm(ctx.queue, input_f32(o, 0), weight_f32(o, 0), weight_f32(o, 1), output_f32(o),
                     ctx.rows, p.width, p.eps);
    }

    static void rmsnorm(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<NormParams>(*o.params);
        K::rmsnorm(ctx.queue, input_f32(o, 0), weight_f32(o, 0), output_f32(o), ctx.rows, p.width,
                   p.eps);
    }

    static void residual_add(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<ResidualParams>(*o.params);
        K::add(ctx.queue, input_f32(o, 0), input_f32(o, 1), output_f32(o),
               uint64_t(ctx.rows) * p.width);
    }

    static void gelu_mlp(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<MlpParams>(*o.params);
        float* h = ctx.workspace.data();
        K::linear(ctx.queue, input_f32(o, 0), o.weights[0], weight_is_f16(o, 0), weight_f32(o, 1),
                  h, ctx.rows, p.width, 0, p.inner);
        K::gelu_tanh(ctx.queue, h, uint64_t(ctx.rows) * p.inner);
        output_linear(ctx, o, h, 2, weight_f32(o, 3), p.inner, p.width);
    }

    static void swiglu(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<MlpParams>(*o.params);
        float* gate = ctx.workspace.data();
        float* up = gate + uint64_t(ctx.rows) * p.inner;
        const bool half = weight_is_f16(o, 0);
        bool fused = false;
        if constexpr (requires { K::gated_linear; })
            if (half == weight_is_f16(o, 1)) {
                K::gated_linear(ctx.queue, input_f32(o, 0), o.weights[0], o.weights[1], half, gate,
                                up, ctx.rows, p.width, p.inner);
                fused = true;
            }
        if (!fused) {
            linears(ctx, input_f32(o, 0), p.width,
                    {{o.weights[0], half, nullptr, gate, 0, p.inner},
                     {o.weights[1], weight_is_f16(o, 1), nullptr, up, 0, p.inner}});
            K::silu_mul(ctx.queue, gate, up, uint64_t(ctx.rows) * p.inner);
        }
        output_linear(ctx, o, gate, 2, nullptr, p.inner, p.width);
    }

    static void lm_head(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<LmHeadParams>(*o.params);
        K::linear(ctx.queue, input_f32(o, 0), o.weights[0], weight_is_f16(o, 0), nullptr,
                  output_f32(o), ctx.rows, p.width, 0, p.vocab);
    }

    // Workspace as the CPU's: q [rows][q_width], k and v [rows][kv_width], attended
    // [rows][q_width].
    static void multihead_attention(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<AttentionParams>(*o.params);
        const uint32_t q_width = p.n_heads * p.head_dim, kv_width = p.n_kv_heads * p.head_dim;
        const uint32_t width = q_width, max_seq = uint32_t(kv_cache_positions(p, o.state_bytes));
        const bool separate = p.flags & AttentionParams::kSeparateProjections;
        float* q = ctx.workspace.data();
        float* kk = q + uint64_t(ctx.rows) * q_width;
        float* v = kk + uint64_t(ctx.rows) * kv_width;
        float* attn = v + uint64_t(ctx.rows) * kv_width;
        const float* x = input_f32(o, 0);
        if (separate) {
            const bool biased = p.flags & AttentionParams::kQkvBias;
            const auto bias = [&](size_t w) { return biased ? weight_f32(o, w) : nullptr; };
            linears(ctx, x, width,
                    {{o.weights[0], weight_is_f16(o, 0), bias(4), q, 0, q_width},
                     {o.weights[1], weight_is_f16(o, 1), bias(5), kk, 0, kv_width},
                     {o.weights[2], weight_is_f16(o, 2), bias(6), v, 0, kv_width}});
        } else { // the fused qkv matrix, transposed at upload: [q | k | v][in], with its bias
            const void* w = o.weights[0];
            const bool half = weight_is_f16(o, 0);
            const float* b = weight_f32(o, 1);
            linears(ctx, x, width,
                    {{w, half, b, q, 0, q_width},
                     {w, half, b, kk, q_width, kv_width},
                     {w, half, b, v, q_width + kv_width, kv_width}});
        }
        // Every row's key and value go into the cache first (a kernel of their own, so they
        // are all written before any row attends): a prefill row sees the rows before it.
        store_rotated_kv(ctx, p, q, kk, v, o, kv_width, max_seq);
        K::attend(ctx.queue, q, o.state, o.state_stride, ctx.slot_of_row.data(),
                  ctx.position_of_row.data(), attn, ctx.rows, p.n_heads, p.n_kv_heads, p.head_dim,
                  max_seq);
        if (separate)
            output_linear(ctx, o, attn, 3, nullptr, q_width, width);
        else
            output_linear(ctx, o, attn, 2, weight_f32(o, 3), q_width, width);
    }

    // RoPE (where the model has it) on q and k, then k and v into the cache.
    static void store_rotated_kv(const ExecutionContext& ctx, const AttentionParams& p, float* q,
                                 float* k, const float* v, const Operands& o, uint32_t kv_width,
                                 uint32_t max_seq) {
        const uint32_t* positions = ctx.position_of_row.data();
        if (p.rope_theta > 0) {
            if constexpr (requires { K::rope_store_kv; }) {
                K::rope_store_kv(ctx.queue, q, k, v, o.state, o.state_stride,
                                 ctx.slot_of_row.data(), positions, ctx.rows, p.n_heads,
                                 p.n_kv_heads, p.head_dim, p.rope_theta, max_seq);
                return;
            }
            K::rope(ctx.queue, q, positions, ctx.rows, p.n_heads, p.head_dim, p.rope_theta);
            K::rope(ctx.queue, k, positions, ctx.rows, p.n_kv_heads, p.head_dim, p.rope_theta);
        }
        K::store_kv(ctx.queue, k, v, o.state, o.state_stride, ctx.slot_of_row.data(), positions,
                    ctx.rows, kv_width, max_seq);
    }

    // Not static_asserted to cover every opcode: the adapters are template members, whose
    // addresses GCC does not treat as constants under -fsanitize=undefined. Every program load
    // checks the table (check_backend_supports), and the backends' tests check it whole.
    static constexpr AdapterTable table = make_adapter_table({
        {Opcode::Embedding, embedding},
        {Opcode::LayerNorm, layernorm},
        {Opcode::RmsNorm, rmsnorm},
        {Opcode::MultiheadAttention, multihead_attention},
        {Opcode::GeluMlp, gelu_mlp},
        {Opcode::Swiglu, swiglu},
        {Opcode::ResidualAdd, residual_add},
        {Opcode::LmHead, lm_head},
    });
};

} // namespace tmmu::runtime
