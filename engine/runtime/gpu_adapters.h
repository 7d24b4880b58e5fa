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
// `half`: the tables or the matrix hold f16 values (an f16 run, pack_weights); sums are f32.
// Weights the CPU reads as [in, out] (GPT-2's Conv1D) are uploaded transposed to [out, in]
// (conv1d_weights says which), so one matrix kernel serves every layout.
#include "runtime/adapter.h"
#include "runtime/adapter_memory.h"
#include "runtime/param_block.h"
#include "runtime/run_record.h"
#include "runtime/weights.h"

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
        K::linear(ctx.queue, h, o.weights[2], weight_is_f16(o, 2), weight_f32(o, 3), output_f32(o),
                  ctx.rows, p.inner, 0, p.width);
    }

    static void swiglu(const ExecutionContext& ctx, const Operands& o) {
        const auto p = param_view<MlpParams>(*o.params);
        float* gate = ctx.workspace.data();
        float* up = gate + uint64_t(ctx.rows) * p.inner;
        K::linear(ctx.queue, input_f32(o, 0), o.weights[0], weight_is_f16(o, 0), nullptr, gate,
                  ctx.rows, p.width, 0, p.inner);
        K::linear(ctx.queue, input_f32(o, 0), o.weights[1], weight_is_f16(o, 1), nullptr, up,
                  ctx.rows, p.width, 0, p.inner);
        K::silu_mul(ctx.queue, gate, up, uint64_t(ctx.rows) * p.inner);
        K::linear(ctx.queue, gate, o.weights[2], weight_is_f16(o, 2), nullptr, output_f32(o),
                  ctx.rows, p.inner, 0, p.width);
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
            K::linear(ctx.queue, x, o.weights[0], weight_is_f16(o, 0), nullptr, q, ctx.rows, width,
                      0, q_width);
            K::linear(ctx.queue, x, o.weights[1], weight_is_f16(o, 1), nullptr, kk, ctx.rows, width,
                      0, kv_width);
            K::linear(ctx.queue, x, o.weights[2], weight_is_f16(o, 2), nullptr, v, ctx.rows, width,
                      0, kv_width);
        } else { // the fused qkv matrix, transposed at upload: [q | k | v][in], with its bias
            const void* w = o.weights[0];
            const bool half = weight_is_f16(o, 0);
            const float* b = weight_f32(o, 1);
            K::linear(ctx.queue, x, w, half, b, q, ctx.rows, width, 0, q_width);
            K::linear(ctx.queue, x, w, half, b, kk, ctx.rows, width, q_width, kv_width);
            K::linear(ctx.queue, x, w, half, b, v, ctx.rows, width, q_width + kv_width, kv_width);
        }
        const uint32_t* positions = ctx.position_of_row.data();
        if (p.rope_theta > 0) {
            K::rope(ctx.queue, q, positions, ctx.rows, p.n_heads, p.head_dim, p.rope_theta);
            K::rope(ctx.queue, kk, positions, ctx.rows, p.n_kv_heads, p.head_dim, p.rope_theta);
        }
        // Every row's key and value go into the cache first (a kernel of their own, so they
        // are all written before any row attends): a prefill row sees the rows before it.
        K::store_kv(ctx.queue, kk, v, o.state, o.state_stride, ctx.slot_of_row.data(), positions,
                    ctx.rows, kv_width, max_seq);
        K::attend(ctx.queue, q, o.state, o.state_stride, ctx.slot_of_row.data(), positions, attn,
                  ctx.rows, p.n_heads, p.n_kv_heads, p.head_dim, max_seq);
        if (separate)
            K::linear(ctx.queue, attn, o.weights[3], weight_is_f16(o, 3), nullptr, output_f32(o),
                      ctx.rows, q_width, 0, width);
        else
            K::linear(ctx.queue, attn, o.weights[2], weight_is_f16(o, 2), weight_f32(o, 3),
                      output_f32(o), ctx.rows, q_width, 0, width);
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
