#include "runtime/plan_compiler.h"

#include "core/checked.h"
#include "core/failure.h"
#include "models/transformer_graph.h"

#include <fmt/format.h>
#include <initializer_list>

namespace tmmu::runtime {

namespace {

uint32_t dim(uint64_t value, std::string_view field) {
    if (value > UINT32_MAX)
        fail(FailureCode::InvalidIrShapes, std::string(field),
             fmt::format("{} does not fit the runtime's 32-bit dimensions", value));
    return uint32_t(value);
}

// Appends registers, weights, state blocks, parameter blocks and instructions to one plan.
class PlanBuilder {
  public:
    PlanBuilder(ExecutionPlan& p, const TransformerConfig& c, uint64_t rows)
        : p_(p), rows_(rows), width_(c.hidden) {}

    // An activation of `width` columns, one row per token.
    RegisterRef reg(std::string name, uint64_t width) {
        const std::string where = fmt::format("{} register '{}'", p_.name, name);
        const uint64_t shape[] = {rows_, width};
        p_.registers.push_back({std::move(name), contiguous_view(DType::F32, shape, where)});
        return {uint16_t(p_.registers.size() - 1)};
    }
    RegisterRef hidden(std::string name) { return reg(std::move(name), width_); }
    RegisterRef token_ids() {
        const uint64_t shape[] = {rows_};
        p_.registers.push_back(
            {"tokens", contiguous_view(DType::I32, shape, p_.name + " register 'tokens'")});
        return {uint16_t(p_.registers.size() - 1)};
    }
    WeightRef weight(std::string name, std::initializer_list<uint64_t> shape) {
        const std::string where = fmt::format("{} weight '{}'", p_.name, name);
        p_.weights.push_back({std::move(name), contiguous_view(DType::F32, shape, where)});
        return {uint32_t(p_.weights.size() - 1)};
    }
    uint8_t kv_cache(uint64_t layer, uint64_t bytes) {
        const uint8_t id = uint8_t(p_.states.size());
        StateDescriptor s;
        s.id = id;
        s.name = fmt::format("h{}.kv_cache", layer);
        s.size_bytes = bytes;
        p_.states.push_back(std::move(s));
        return id;
    }
    // Equal blocks are stored once: every norm of a model shares one.
    template <class P>
    uint32_t params(Opcode op, const P& payload) {
        const ParamBlock b = make_param_block(op, payload);
        for (uint32_t i = 0; i < p_.params.size(); ++i)
            if (p_.params[i] == b) return i;
        p_.params.push_back(b);
        return uint32_t(p_.params.size() - 1);
    }
    RegisterRef emit(Opcode op, std::vector<RegisterRef> in, RegisterRef out,
                     std::vector<WeightRef> weights, uint32_t params,
                     uint8_t state_block = kNoStateBlock) {
        p_.instructions.push_back(
            {op, std::move(in), {out}, std::move(weights), params, state_block});
        return out;
    }

  private:
    ExecutionPlan& p_;
    uint64_t rows_, width_;
};

struct Dims {
    uint64_t E, H, KV, D, I, V, P;
};

AttentionParams attention_params(const TransformerConfig& c, const Dims& d) {
    const bool llama = c.family == TransformerConfig::Family::Llama;
    AttentionParams p{dim(d.H, "heads"),
                      dim(d.KV, "kv heads"),
                      dim(d.D, "head dim"),
                      float(c.rope_theta),
                      AttentionParams::kCausal |
                          (llama ? AttentionParams::kSeparateProjections : 0) |
                          (c.qkv_bias ? AttentionParams::kQkvBias : 0),
                      dim(d.P, "max positions"),
                      0,
                      0,
                      0,
                      0,
                      0,
                      0};
    // Fields a kind does not use stay 0, so equal computations give equal blocks.
    const RopeScaling& s = c.rope_scaling;
    p.rope_scaling = uint32_t(s.kind);
    if (s.kind != RopeScaling::Kind::None) p.rope_factor = float(s.factor);
    if (s.kind == RopeScaling::Kind::Llama3) {
        p.rope_low_freq_factor = float(s.low_freq_factor);
        p.rope_high_freq_factor = float(s.high_freq_factor);
        p.rope_original_positions =
            dim(s.original_max_positions, "rope_scaling.original_max_position_embeddings");
    }
    return p;
}

// x -> norm -> attention -> +x -> norm -> MLP -> +; `name(stem)` gives a layer weight's name.
template <class Names>
RegisterRef layer(PlanBuilder& b, const TransformerConfig& c, const Dims& d, uint64_t l,
                  uint64_t kv_bytes, RegisterRef x, Names name) {
    const bool gpt2 = c.family == TransformerConfig::Family::Gpt2;
    const Opcode norm_op = gpt2 ? Opcode::LayerNorm : Opcode::RmsNorm;
    const uint32_t norm = b.params(norm_op, NormParams{float(c.norm_eps), dim(d.E, "hidden")});
    const uint32_t residual = b.params(Opcode::ResidualAdd, ResidualParams{dim(d.E, "hidden"), 0});
    const std::string at = fmt::format("h{}.", l);
    auto norm_weights = [&](const char* stem) {
        std::vector<WeightRef> w{b.weight(name(stem) + ".weight", {d.E})};
        if (gpt2) w.push_back(b.weight(name(stem) + ".bias", {d.E}));
        return w;
    };
    std::vector<WeightRef> attn, mlp;
    if (gpt2) {
        attn = {b.weight(name("attn.c_attn.weight"), {d.E, 3 * d.E}),
                b.weight(name("attn.c_attn.bias"), {3 * d.E}),
                b.weight(name("attn.c_proj.weight"), {d.E, d.E}),
                b.weight(name("attn.c_proj.bias"), {d.E})};
        mlp = {b.weight(name("mlp.c_fc.weight"), {d.E, d.I}),
               b.weight(name("mlp.c_fc.bias"), {d.I}),
               b.weight(name("mlp.c_proj.weight"), {d.I, d.E}),
               b.weight(name("mlp.c_proj.bias"), {d.E})};
    } else {
        attn = {b.weight(name("self_attn.q_proj.weight"), {d.H * d.D, d.E}),
                b.weight(name("self_attn.k_proj.weight"), {d.KV * d.D, d.E}),
                b.weight(name("self_attn.v_proj.weight"), {d.KV * d.D, d.E}),
                b.weight(name("self_attn.o_proj.weight"), {d.E, d.H * d.D})};
        if (c.qkv_bias)
            for (const auto& [stem, width] :
                 {std::pair{"q_proj", d.H * d.D}, std::pair{"k_proj", d.KV * d.D},
                  std::pair{"v_proj", d.KV * d.D}})
                attn.push_back(b.weight(name(fmt::format("self_attn.{}.bias", stem)), {width}));
        mlp = {b.weight(name("mlp.gate_proj.weight"), {d.I, d.E}),
               b.weight(name("mlp.up_proj.weight"), {d.I, d.E}),
               b.weight(name("mlp.down_proj.weight"), {d.E, d.I})};
    }
    const RegisterRef n1 = b.emit(norm_op, {x}, b.hidden(at + "norm_1"),
                                  norm_weights(gpt2 ? "ln_1" : "input_layernorm"), norm);
    const RegisterRef a = b.emit(Opcode::MultiheadAttention, {n1}, b.hidden(at + "attn"), attn,
                                 b.params(Opcode::MultiheadAttention, attention_params(c, d)),
                                 b.kv_cache(l, kv_bytes));
    const RegisterRef mid =
        b.emit(Opcode::ResidualAdd, {x, a}, b.hidden(at + "resid_attn"), {}, residual);
    const RegisterRef n2 = b.emit(norm_op, {mid}, b.hidden(at + "norm_2"),
                                  norm_weights(gpt2 ? "ln_2" : "post_attention_layernorm"), norm);
    const Opcode mlp_op = gpt2 ? Opcode::GeluMlp : Opcode::Swiglu;
    const RegisterRef m =
        b.emit(mlp_op, {n2}, b.hidden(at + "mlp"), mlp,
               b.params(mlp_op, MlpParams{dim(d.E, "hidden"), dim(d.I, "inner")}));
    return b.emit(Opcode::ResidualAdd, {mid, m}, b.hidden(at + "out"), {}, residual);
}

// The option that sets a request's rows: decode slots are the batch, prefill rows the prompt.
const char* rows_option(const CompileRequest& r) {
    return r.mode == PlanMode::Decode ? "--batch" : "--prompt";
}

void check_request(const TransformerConfig& c, const CompileRequest& r, uint64_t max_seq) {
    check_transformer_config(c); // a billion layers would be compiled (and run) one by one
    // The adapters compute the default model's RoPE and activations: a plan for another would
    // run and give wrong logits with nothing said.
    if (c.unrunnable)
        fail(FailureCode::InvalidIrShapes, c.unrunnable->where,
             fmt::format("the runtime's kernels do not compute this: {}; tmmu plan still plans "
                         "the model's memory",
                         c.unrunnable->message));
    if (r.rows == 0)
        fail(FailureCode::InvalidArgument, rows_option(r),
             "a plan needs at least one row (slot or token)");
    if (max_seq > c.max_positions)
        fail(FailureCode::InvalidArgument, "max_seq",
             fmt::format("{} is above the model's {} positions", max_seq, c.max_positions));
    if (c.sliding_window != 0 && max_seq > c.sliding_window)
        fail(FailureCode::InvalidArgument, "max_seq",
             fmt::format("{} positions are more than the sliding window of {} ({}): the "
                         "runtime attends over the whole context, which matches the model "
                         "only up to the window (--max-seq {} or less runs it)",
                         max_seq, c.sliding_window, c.sliding_window_where, c.sliding_window));
    if (r.mode == PlanMode::Prefill && r.rows > max_seq)
        fail(
            FailureCode::InvalidArgument, rows_option(r),
            fmt::format("a prompt of {} tokens does not fit {} cached positions", r.rows, max_seq));
}

} // namespace

CompiledPlan compile_transformer(const TransformerConfig& c, const CompileRequest& r) {
    const uint64_t max_seq = r.max_seq ? r.max_seq : c.max_positions;
    check_request(c, r, max_seq);
    const bool gpt2 = c.family == TransformerConfig::Family::Gpt2;
    const Dims d{c.hidden,       c.n_head, c.n_kv_head,    c.head_dim(),
                 c.intermediate, c.vocab,  c.max_positions};
    // K and V, f32, per cached position and kv head.
    const uint64_t kv_bytes = checked_mul(checked_mul(2 * 4, max_seq, "kv cache"),
                                          checked_mul(d.KV, d.D, "kv cache"), "kv cache");
    ExecutionPlan p;
    p.name = fmt::format("{} {} x{}", c.name, plan_mode_name(r.mode), r.rows);
    p.mode = r.mode;
    p.rows = r.rows;
    PlanBuilder b(p, c, r.rows);
    const RegisterRef tokens = b.token_ids();
    p.plan_inputs = {tokens};
    std::vector<WeightRef> embedding{
        b.weight(gpt2 ? "wte.weight" : "model.embed_tokens.weight", {d.V, d.E})};
    if (gpt2) embedding.push_back(b.weight("wpe.weight", {d.P, d.E}));
    const WeightRef token_table = embedding.front();
    RegisterRef x =
        b.emit(Opcode::Embedding, {tokens}, b.hidden("embed"), embedding,
               b.params(Opcode::Embedding, EmbeddingParams{dim(d.V, "vocab"), dim(d.E, "hidden"),
                                                           gpt2 ? dim(d.P, "positions") : 0, 0}));
    for (uint64_t l = 0; l < c.n_layer; ++l) {
        auto name = [&](std::string_view stem) {
            return gpt2 ? fmt::format("h.{}.{}", l, stem)
                        : fmt::format("model.layers.{}.{}", l, stem);
        };
        x = layer(b, c, d, l, kv_bytes, x, name);
    }
    const Opcode norm_op = gpt2 ? Opcode::LayerNorm : Opcode::RmsNorm;
    std::vector<WeightRef> final_norm{b.weight(gpt2 ? "ln_f.weight" : "model.norm.weight", {d.E})};
    if (gpt2) final_norm.push_back(b.weight("ln_f.bias", {d.E}));
    x = b.emit(norm_op, {x}, b.hidden("final_norm"), final_norm,
               b.params(norm_op, NormParams{float(c.norm_eps), dim(d.E, "hidden")}));
    const WeightRef head = c.tied_embeddings ? token_table : b.weight("lm_head.weight", {d.V, d.E});
    const RegisterRef logits =
        b.emit(Opcode::LmHead, {x}, b.reg("logits", d.V), {head},
               b.params(Opcode::LmHead, LmHeadParams{dim(d.E, "hidden"), dim(d.V, "vocab")}));
    p.plan_outputs = {logits};
    return compile_plan(std::move(p));
}

} // namespace tmmu::runtime
