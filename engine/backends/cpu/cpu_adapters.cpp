#include "backends/cpu/cpu_adapters.h"

#include "backends/cpu/cpu_math.h"
#include "runtime/adapter_memory.h"
#include "runtime/param_block.h"
#include "runtime/rope.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

void embedding(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<EmbeddingParams>(*o.params);
    const auto* tokens = static_cast<const int32_t*>(o.inputs[0]);
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        const float* tok = weight_f32(o, 0) + uint64_t(tokens[r]) * p.width;
        float* out = output_f32(o) + uint64_t(r) * p.width;
        std::copy(tok, tok + p.width, out);
        if (p.positions == 0) continue;
        const float* pos = weight_f32(o, 1) + uint64_t(ctx.position_of_row[r]) * p.width;
        for (uint32_t e = 0; e < p.width; ++e)
            out[e] += pos[e];
    }
}

void layernorm(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<NormParams>(*o.params);
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        const float* x = input_f32(o, 0) + uint64_t(r) * p.width;
        float* out = output_f32(o) + uint64_t(r) * p.width;
        double sum = 0, sq = 0;
        for (uint32_t e = 0; e < p.width; ++e)
            sum += x[e];
        const double mean = sum / p.width;
        for (uint32_t e = 0; e < p.width; ++e)
            sq += (x[e] - mean) * (x[e] - mean);
        const float inv = float(1.0 / std::sqrt(sq / p.width + p.eps));
        for (uint32_t e = 0; e < p.width; ++e)
            out[e] = (x[e] - float(mean)) * inv * weight_f32(o, 0)[e] + weight_f32(o, 1)[e];
    }
}

void rmsnorm(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<NormParams>(*o.params);
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        const float* x = input_f32(o, 0) + uint64_t(r) * p.width;
        float* out = output_f32(o) + uint64_t(r) * p.width;
        double sq = 0;
        for (uint32_t e = 0; e < p.width; ++e)
            sq += double(x[e]) * x[e];
        const float inv = float(1.0 / std::sqrt(sq / p.width + p.eps));
        for (uint32_t e = 0; e < p.width; ++e)
            out[e] = x[e] * inv * weight_f32(o, 0)[e];
    }
}

void residual_add(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<ResidualParams>(*o.params);
    const uint64_t n = uint64_t(ctx.rows) * p.width;
    for (uint64_t i = 0; i < n; ++i)
        output_f32(o)[i] = input_f32(o, 0)[i] + input_f32(o, 1)[i];
}

void gelu_mlp(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<MlpParams>(*o.params);
    float* h = ctx.workspace.data();
    matmul_in_out(input_f32(o, 0), weight_f32(o, 0), weight_f32(o, 1), h, ctx.rows, p.width,
                  p.inner, 0, p.inner);
    for (uint64_t i = 0; i < uint64_t(ctx.rows) * p.inner; ++i)
        h[i] = gelu_tanh(h[i]);
    matmul_in_out(h, weight_f32(o, 2), weight_f32(o, 3), output_f32(o), ctx.rows, p.inner, p.width,
                  0, p.width);
}

void swiglu(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<MlpParams>(*o.params);
    float* gate = ctx.workspace.data();
    float* up = gate + uint64_t(ctx.rows) * p.inner;
    matmul_out_in(input_f32(o, 0), weight_f32(o, 0), gate, ctx.rows, p.width, p.inner);
    matmul_out_in(input_f32(o, 0), weight_f32(o, 1), up, ctx.rows, p.width, p.inner);
    for (uint64_t i = 0; i < uint64_t(ctx.rows) * p.inner; ++i)
        gate[i] = silu(gate[i]) * up[i];
    matmul_out_in(gate, weight_f32(o, 2), output_f32(o), ctx.rows, p.inner, p.width);
}

void lm_head(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<LmHeadParams>(*o.params);
    matmul_out_in(input_f32(o, 0), weight_f32(o, 0), output_f32(o), ctx.rows, p.width, p.vocab);
}

// Rotates pairs (i, i + d/2) of one head by position * rope_frequency(i), as Hugging Face
// Llama.
void rope(float* head, const AttentionParams& p, uint32_t position) {
    const uint32_t half = p.head_dim / 2;
    for (uint32_t i = 0; i < half; ++i) {
        const double angle = position * rope_frequency(p, i);
        const float c = float(std::cos(angle)), s = float(std::sin(angle));
        const float a = head[i], b = head[i + half];
        head[i] = a * c - b * s;
        head[i + half] = b * c + a * s;
    }
}

struct AttentionShape {
    uint64_t rows, width, q_width, kv_width, max_seq;
};

// q, k and v rows into the workspace, with RoPE applied.
void project_qkv(const ExecutionContext& ctx, const Operands& o, const AttentionParams& p,
                 const AttentionShape& s, float* q, float* k, float* v) {
    const float* x = input_f32(o, 0);
    if (p.flags & AttentionParams::kSeparateProjections) {
        const bool biased = p.flags & AttentionParams::kQkvBias;
        const auto bias = [&](size_t w) { return biased ? weight_f32(o, w) : nullptr; };
        matmul_out_in(x, weight_f32(o, 0), q, s.rows, s.width, s.q_width, bias(4));
        matmul_out_in(x, weight_f32(o, 1), k, s.rows, s.width, s.kv_width, bias(5));
        matmul_out_in(x, weight_f32(o, 2), v, s.rows, s.width, s.kv_width, bias(6));
    } else { // fused [in, 3 * width] with bias
        const uint64_t total = s.q_width + 2 * s.kv_width;
        matmul_in_out(x, weight_f32(o, 0), weight_f32(o, 1), q, s.rows, s.width, total, 0,
                      s.q_width);
        matmul_in_out(x, weight_f32(o, 0), weight_f32(o, 1), k, s.rows, s.width, total, s.q_width,
                      s.kv_width);
        matmul_in_out(x, weight_f32(o, 0), weight_f32(o, 1), v, s.rows, s.width, total,
                      s.q_width + s.kv_width, s.kv_width);
    }
    if (p.rope_theta <= 0) return;
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        for (uint32_t h = 0; h < p.n_heads; ++h)
            rope(q + r * s.q_width + h * p.head_dim, p, ctx.position_of_row[r]);
        for (uint32_t h = 0; h < p.n_kv_heads; ++h)
            rope(k + r * s.kv_width + h * p.head_dim, p, ctx.position_of_row[r]);
    }
}

// A slot's cache: K [max_seq][kv_width] then V [max_seq][kv_width].
float* cache_of(const Operands& o, uint32_t slot) {
    return reinterpret_cast<float*>(static_cast<char*>(o.state) + slot * o.state_stride);
}

// Softmax attention of one query head over positions 0..last of its slot's cache.
void attend(const float* q, const float* keys, const float* values, uint64_t kv_width,
            uint32_t last, uint32_t d, float* scores, float* out) {
    const float scale = float(1.0 / std::sqrt(double(d)));
    float top = -INFINITY;
    for (uint32_t t = 0; t <= last; ++t) {
        scores[t] = dot(q, keys + t * kv_width, d) * scale;
        top = std::max(top, scores[t]);
    }
    double sum = 0;
    for (uint32_t t = 0; t <= last; ++t) {
        scores[t] = std::exp(scores[t] - top);
        sum += scores[t];
    }
    std::fill(out, out + d, 0.0f);
    for (uint32_t t = 0; t <= last; ++t) {
        const float w = float(scores[t] / sum);
        const float* vt = values + t * kv_width;
        for (uint32_t i = 0; i < d; ++i)
            out[i] += w * vt[i];
    }
}

void multihead_attention(const ExecutionContext& ctx, const Operands& o) {
    const auto p = param_view<AttentionParams>(*o.params);
    const AttentionShape s{ctx.rows, uint64_t(p.n_heads) * p.head_dim,
                           uint64_t(p.n_heads) * p.head_dim, uint64_t(p.n_kv_heads) * p.head_dim,
                           kv_cache_positions(p, o.state_bytes)};
    float* q = ctx.workspace.data();
    float* k = q + s.rows * s.q_width;
    float* v = k + s.rows * s.kv_width;
    float* attn = v + s.rows * s.kv_width;
    float* scores = attn + s.rows * s.q_width;
    project_qkv(ctx, o, p, s, q, k, v);
    // Every row's key and value go into the cache first, so a prefill row sees the rows before
    // it; the causal bound (its own position) hides the ones after.
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        float* cache = cache_of(o, ctx.slot_of_row[r]);
        const uint64_t at = uint64_t(ctx.position_of_row[r]) * s.kv_width;
        std::copy(k + r * s.kv_width, k + (r + 1) * s.kv_width, cache + at);
        std::copy(v + r * s.kv_width, v + (r + 1) * s.kv_width,
                  cache + s.max_seq * s.kv_width + at);
    }
    const uint32_t group = p.n_heads / p.n_kv_heads;
    for (uint32_t r = 0; r < ctx.rows; ++r) {
        const float* cache = cache_of(o, ctx.slot_of_row[r]);
        for (uint32_t h = 0; h < p.n_heads; ++h) {
            const uint64_t kv = uint64_t(h / group) * p.head_dim;
            attend(q + r * s.q_width + h * p.head_dim, cache + kv,
                   cache + s.max_seq * s.kv_width + kv, s.kv_width, ctx.position_of_row[r],
                   p.head_dim, scores, attn + r * s.q_width + h * p.head_dim);
        }
    }
    if (p.flags & AttentionParams::kSeparateProjections)
        matmul_out_in(attn, weight_f32(o, 3), output_f32(o), s.rows, s.q_width, s.width);
    else
        matmul_in_out(attn, weight_f32(o, 2), weight_f32(o, 3), output_f32(o), s.rows, s.q_width,
                      s.width, 0, s.width);
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
static_assert(covers_every_opcode(kTable), "the CPU backend lacks an adapter for an opcode");

} // namespace

const AdapterTable& cpu_adapters() {
    return kTable;
}

const AdapterCapabilities& cpu_capabilities() {
    static const AdapterCapabilities caps = uniform_capabilities({true, false, 0});
    return caps;
}

} // namespace tmmu::cpu
