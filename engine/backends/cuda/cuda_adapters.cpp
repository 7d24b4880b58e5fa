#include "backends/cuda/cuda_adapters.h"

#include "backends/cuda/cuda_kernels.h"
#include "runtime/adapter_memory.h"
#include "runtime/param_block.h"

namespace tmmu::cuda {

using namespace tmmu::runtime;
namespace k = tmmu::cuda::kernels;

namespace {

void embedding(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<EmbeddingParams>(*o.params);
    k::embedding(ctx.queue, static_cast<const int32_t*>(o.inputs[0]), ctx.position_of_row.data(),
                 weight_f32(o, 0), p.positions ? weight_f32(o, 1) : nullptr, output_f32(o),
                 ctx.rows, p.width);
}

void layernorm(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<NormParams>(*o.params);
    k::layernorm(ctx.queue, input_f32(o, 0), weight_f32(o, 0), weight_f32(o, 1), output_f32(o),
                 ctx.rows, p.width, p.eps);
}

void rmsnorm(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<NormParams>(*o.params);
    k::rmsnorm(ctx.queue, input_f32(o, 0), weight_f32(o, 0), output_f32(o), ctx.rows, p.width,
               p.eps);
}

void residual_add(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<ResidualParams>(*o.params);
    k::add(ctx.queue, input_f32(o, 0), input_f32(o, 1), output_f32(o),
           uint64_t(ctx.rows) * p.width);
}

void gelu_mlp(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<MlpParams>(*o.params);
    float* h = ctx.workspace.data();
    k::linear(ctx.queue, input_f32(o, 0), weight_f32(o, 0), weight_f32(o, 1), h, ctx.rows, p.width,
              0, p.inner);
    k::gelu_tanh(ctx.queue, h, uint64_t(ctx.rows) * p.inner);
    k::linear(ctx.queue, h, weight_f32(o, 2), weight_f32(o, 3), output_f32(o), ctx.rows, p.inner, 0,
              p.width);
}

void swiglu(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<MlpParams>(*o.params);
    float* gate = ctx.workspace.data();
    float* up = gate + uint64_t(ctx.rows) * p.inner;
    k::linear(ctx.queue, input_f32(o, 0), weight_f32(o, 0), nullptr, gate, ctx.rows, p.width, 0,
              p.inner);
    k::linear(ctx.queue, input_f32(o, 0), weight_f32(o, 1), nullptr, up, ctx.rows, p.width, 0,
              p.inner);
    k::silu_mul(ctx.queue, gate, up, uint64_t(ctx.rows) * p.inner);
    k::linear(ctx.queue, gate, weight_f32(o, 2), nullptr, output_f32(o), ctx.rows, p.inner, 0,
              p.width);
}

void lm_head(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<LmHeadParams>(*o.params);
    k::linear(ctx.queue, input_f32(o, 0), weight_f32(o, 0), nullptr, output_f32(o), ctx.rows,
              p.width, 0, p.vocab);
}

// Workspace as the CPU's: q [rows][q_width], k and v [rows][kv_width], attended [rows][q_width].
void multihead_attention(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<AttentionParams>(*o.params);
    const uint32_t q_width = p.n_heads * p.head_dim, kv_width = p.n_kv_heads * p.head_dim;
    const uint32_t width = q_width, max_seq = uint32_t(kv_cache_positions(p, o.state_bytes));
    float* q = ctx.workspace.data();
    float* kk = q + uint64_t(ctx.rows) * q_width;
    float* v = kk + uint64_t(ctx.rows) * kv_width;
    float* attn = v + uint64_t(ctx.rows) * kv_width;
    const float* x = input_f32(o, 0);
    if (p.flags & AttentionParams::kSeparateProjections) {
        k::linear(ctx.queue, x, weight_f32(o, 0), nullptr, q, ctx.rows, width, 0, q_width);
        k::linear(ctx.queue, x, weight_f32(o, 1), nullptr, kk, ctx.rows, width, 0, kv_width);
        k::linear(ctx.queue, x, weight_f32(o, 2), nullptr, v, ctx.rows, width, 0, kv_width);
    } else { // the fused qkv matrix, transposed at upload: [q | k | v][in], with its bias
        k::linear(ctx.queue, x, weight_f32(o, 0), weight_f32(o, 1), q, ctx.rows, width, 0, q_width);
        k::linear(ctx.queue, x, weight_f32(o, 0), weight_f32(o, 1), kk, ctx.rows, width, q_width,
                  kv_width);
        k::linear(ctx.queue, x, weight_f32(o, 0), weight_f32(o, 1), v, ctx.rows, width,
                  q_width + kv_width, kv_width);
    }
    const uint32_t* positions = ctx.position_of_row.data();
    if (p.rope_theta > 0) {
        k::rope(ctx.queue, q, positions, ctx.rows, p.n_heads, p.head_dim, p.rope_theta);
        k::rope(ctx.queue, kk, positions, ctx.rows, p.n_kv_heads, p.head_dim, p.rope_theta);
    }
    // Every row's key and value go into the cache first (a kernel of their own, so they are
    // all written before any row attends): a prefill row sees the rows before it.
    k::store_kv(ctx.queue, kk, v, o.state, o.state_stride, ctx.slot_of_row.data(), positions,
                ctx.rows, kv_width, max_seq);
    k::attend(ctx.queue, q, o.state, o.state_stride, ctx.slot_of_row.data(), positions, attn,
              ctx.rows, p.n_heads, p.n_kv_heads, p.head_dim, max_seq);
    if (p.flags & AttentionParams::kSeparateProjections)
        k::linear(ctx.queue, attn, weight_f32(o, 3), nullptr, output_f32(o), ctx.rows, q_width, 0,
                  width);
    else
        k::linear(ctx.queue, attn, weight_f32(o, 2), weight_f32(o, 3), output_f32(o), ctx.rows,
                  q_width, 0, width);
}

constexpr AdapterTable kTable = make_adapter_table({
    {Opcode::Embedding, embedding},
    {Opcode::LayerNorm, layernorm},
    {Opcode::RmsNorm, rmsnorm},
    {Opcode::MultiheadAttention, multihead_attention},
    {Opcode::GeluMlp, gelu_mlp},
    {Opcode::Swiglu, swiglu},
    {Opcode::ResidualAdd, residual_add},
    {Opcode::LmHead, lm_head},
});
static_assert(covers_every_opcode(kTable), "the CUDA backend lacks an adapter for an opcode");

} // namespace

const AdapterTable& cuda_adapters() {
    return kTable;
}

const AdapterCapabilities& cuda_capabilities() {
    static const AdapterCapabilities caps = uniform_capabilities({true, true, 0});
    return caps;
}

std::vector<bool> conv1d_weights(const ExecutionPlan& plan) {
    std::vector<bool> conv1d(plan.weights.size(), false);
    for (const Instruction& insn : plan.instructions) {
        const ParamBlock& b = plan.params[insn.param_block];
        const bool fused_attention =
            insn.opcode == Opcode::MultiheadAttention &&
            !(param_view<AttentionParams>(b).flags & AttentionParams::kSeparateProjections);
        if (fused_attention || insn.opcode == Opcode::GeluMlp) {
            conv1d[insn.weights[0].index] = true; // qkv or fc
            conv1d[insn.weights[2].index] = true; // the output projection
        }
    }
    return conv1d;
}

} // namespace tmmu::cuda
