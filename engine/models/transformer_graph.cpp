#include "models/transformer_graph.h"

#include "core/checked.h"
#include "core/failure.h"
#include "ir/dims_from_probes.h"
#include "ir/dynamic_dims.h"
#include "ir/validate.h"
#include "models/transformer_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace tmmu {
namespace {

using detail::AttnRec;
using detail::Dims;
using detail::LinearRec;
using detail::NormRec;
using detail::TransformerBuilder;

// Real models have at most a few hundred layers; the cap keeps a typo from building a graph
// that exhausts memory.
constexpr uint64_t kMaxLayers = 10000;

std::string_view mode_label(Mode m) {
    switch (m) {
    case Mode::Inference:
        return "inference";
    case Mode::Forward:
        return "forward";
    case Mode::Training:
        return "training";
    }
    return "?";
}

void check_request(const TransformerConfig& c, const GraphRequest& r) {
    if (r.batch == 0 || r.batch > kMaxTransformerDim)
        fail(FailureCode::InvalidArgument, "--batch",
             fmt::format("expected a batch size in [1, 2^40], got {}", r.batch));
    if (r.seq == 0) fail(FailureCode::InvalidArgument, "--seq", "expected a sequence length >= 1");
    if (r.seq > c.max_positions)
        fail(FailureCode::InvalidArgument, "--seq",
             fmt::format("sequence length {} exceeds the model's {} positions", r.seq,
                         c.max_positions));
    if (r.max_batch != 0 && (r.max_batch < r.batch || r.max_batch > uint64_t(kMaxDynamicDim)))
        fail(FailureCode::InvalidArgument, "--iteration", // the batches iterations ask for
             fmt::format("a dynamic batch's largest value must be from the batch ({}) to {}, "
                         "got {}",
                         r.batch, kMaxDynamicDim, r.max_batch));
    if (static_cast<uint8_t>(r.mode) > static_cast<uint8_t>(Mode::Training))
        fail(FailureCode::InvalidArgument, "request.mode", "not a known Mode value");
    if (static_cast<uint8_t>(r.dtype) > static_cast<uint8_t>(DType::Bool))
        fail(FailureCode::InvalidArgument, "request.dtype", "not a known DType value");
}

Dims dims_of(const TransformerConfig& c, const GraphRequest& r) {
    auto i = [](uint64_t v) { return static_cast<int64_t>(v); };
    return Dims{i(r.batch),      i(r.seq),          i(c.hidden), i(c.n_head),        i(c.n_kv_head),
                i(c.head_dim()), i(c.intermediate), i(c.vocab),  i(c.max_positions), r.dtype};
}

// What both families share: token inputs, the lm head and the loss.
struct ModelBase {
    ModelBase(TransformerBuilder& builder, const TransformerConfig& config)
        : b(builder), c(config) {}

    TransformerBuilder& b;
    const TransformerConfig& c;
    TensorIndex tokens = kNone, targets = kNone, loss = kNone, lse = kNone;
    NormRec final_norm;
    LinearRec lm_head;

    std::string at(uint64_t layer, std::string_view rest) const {
        return fmt::format("h{}.{}", layer, rest);
    }
    TensorIndex logits() const { return lm_head.out; }

    void inputs(bool with_loss) {
        const Dims& d = b.dims();
        tokens = b.input("tokens", {d.B, d.S}, DType::I64);
        if (with_loss) targets = b.input("targets", {d.B, d.S}, DType::I64);
    }
    void head_forward(TensorIndex lm_weight, bool with_loss) {
        lm_head = b.linear("logits", final_norm.out, lm_weight, kNone, b.dims().V);
        if (!with_loss) return;
        loss = b.value("loss", {}, DType::F32);
        // Log-sum-exp per row, kept for the backward like the norm statistics.
        lse = b.value("loss.lse", {b.dims().B, b.dims().S}, DType::F32);
        b.op("cross_entropy", {logits(), targets}, {loss, lse});
    }
    // Returns the gradient of the final residual stream.
    TensorIndex head_backward(const std::string& norm_out_grad) {
        TensorIndex d_loss = b.value("loss.grad", {}, DType::F32);
        b.op("loss_grad", {loss}, {d_loss});
        TensorIndex d_logits = b.grad_like(logits(), "logits.grad");
        b.op("cross_entropy_grad", {d_loss, logits(), targets, lse}, {d_logits});
        TensorIndex d_norm = b.linear_grad(lm_head, d_logits, norm_out_grad);
        return b.norm_grad(final_norm, d_norm, b.name_of(final_norm.x) + ".grad");
    }
    // Token embedding gradient; for a tied lm head it accumulates in place over the head's.
    void embedding_backward(TensorIndex embed, TensorIndex d_x0) {
        std::vector<TensorIndex> in{tokens, d_x0};
        TensorIndex d_embed = b.param_grad(embed, in);
        b.op("embedding_grad", std::move(in), {d_embed});
    }
    std::pair<TensorIndex, TensorIndex> weight_bias(const std::string& prefix,
                                                    std::vector<int64_t> weight_shape) {
        int64_t out = weight_shape.back();
        TensorIndex w = b.param(prefix + ".weight", std::move(weight_shape));
        TensorIndex bias = b.param(prefix + ".bias", {out});
        return {w, bias};
    }
};

struct Gpt2Layer {
    NormRec ln_1;
    LinearRec c_attn;
    AttnRec attn;
    LinearRec c_proj;
    NormRec ln_2;
    LinearRec c_fc;
    TensorIndex gelu = kNone;
    LinearRec mlp_proj;
};

struct Gpt2Model : ModelBase {
    using ModelBase::ModelBase;
    TensorIndex wte = kNone, wpe = kNone;
    std::vector<Gpt2Layer> layers;

    void forward(bool with_loss) {
        const Dims& d = b.dims();
        inputs(with_loss);
        wte = b.param("wte", {d.V, d.E});
        wpe = b.param("wpe", {d.P, d.E});
        TensorIndex tok = b.value("embed.tokens", {d.B, d.S, d.E});
        b.op("embedding", {tokens, wte}, {tok});
        TensorIndex x = b.binary("add_position_embedding", "embed.out", tok, wpe);
        for (uint64_t l = 0; l < c.n_layer; ++l)
            x = layer_forward(l, x);
        auto [w, bias] = weight_bias("ln_f", {d.E});
        final_norm = b.layernorm("ln_f", x, w, bias);
        TensorIndex head_weight = wte;
        if (!c.tied_embeddings) head_weight = b.param("lm_head.weight", {d.V, d.E});
        head_forward(head_weight, with_loss);
    }

    TensorIndex layer_forward(uint64_t l, TensorIndex x) {
        const Dims& d = b.dims();
        Gpt2Layer L;
        auto [w1, b1] = weight_bias(at(l, "ln_1"), {d.E});
        L.ln_1 = b.layernorm(at(l, "ln_1"), x, w1, b1);
        auto [wa, ba] = weight_bias(at(l, "attn.c_attn"), {d.E, 3 * d.E});
        L.c_attn = b.linear(at(l, "attn.qkv"), L.ln_1.out, wa, ba, 3 * d.E);
        TensorIndex q = b.value(at(l, "attn.q"), {d.B, d.H, d.S, d.D});
        TensorIndex k = b.value(at(l, "attn.k"), {d.B, d.H, d.S, d.D});
        TensorIndex v = b.value(at(l, "attn.v"), {d.B, d.H, d.S, d.D});
        b.op("split_qkv", {L.c_attn.out}, {q, k, v});
        L.attn = b.attention(at(l, "attn"), q, k, v);
        auto [wp, bp] = weight_bias(at(l, "attn.c_proj"), {d.E, d.E});
        L.c_proj = b.linear(at(l, "attn.proj"), L.attn.merged, wp, bp, d.E);
        TensorIndex mid = b.binary("add", at(l, "resid_attn"), x, L.c_proj.out);
        auto [w2, b2] = weight_bias(at(l, "ln_2"), {d.E});
        L.ln_2 = b.layernorm(at(l, "ln_2"), mid, w2, b2);
        auto [wf, bf] = weight_bias(at(l, "mlp.c_fc"), {d.E, d.I});
        L.c_fc = b.linear(at(l, "mlp.fc"), L.ln_2.out, wf, bf, d.I);
        L.gelu = b.unary("gelu", at(l, "mlp.gelu"), L.c_fc.out);
        auto [wm, bm] = weight_bias(at(l, "mlp.c_proj"), {d.I, d.E});
        L.mlp_proj = b.linear(at(l, "mlp.proj"), L.gelu, wm, bm, d.E);
        layers.push_back(L);
        return b.binary("add", at(l, "out"), mid, L.mlp_proj.out);
    }

    void backward() {
        b.set_phase(Phase::Backward);
        TensorIndex dx = head_backward("ln_f.out.grad");
        for (uint64_t l = c.n_layer; l-- > 0;)
            dx = layer_backward(l, layers[l], dx);
        std::vector<TensorIndex> in{dx};
        TensorIndex d_wpe = b.param_grad(wpe, in);
        b.op("position_embedding_grad", std::move(in), {d_wpe});
        embedding_backward(wte, dx);
    }

    TensorIndex layer_backward(uint64_t l, const Gpt2Layer& L, TensorIndex dy) {
        TensorIndex d_gelu = b.linear_grad(L.mlp_proj, dy, at(l, "mlp.gelu.grad"));
        TensorIndex d_fc = b.grad_like(L.c_fc.out, at(l, "mlp.fc.grad"));
        b.op("gelu_grad", {d_gelu, L.c_fc.out}, {d_fc});
        TensorIndex d_ln2 = b.linear_grad(L.c_fc, d_fc, at(l, "ln_2.out.grad"));
        TensorIndex d_mid_branch = b.norm_grad(L.ln_2, d_ln2, at(l, "ln_2.in.grad"));
        TensorIndex d_mid = b.grad_sum(at(l, "resid_attn.grad"), {dy, d_mid_branch});
        TensorIndex d_merged = b.linear_grad(L.c_proj, d_mid, at(l, "attn.merged.grad"));
        auto [dq, dk, dv] = b.attention_grad(L.attn, d_merged);
        TensorIndex d_qkv = b.grad_like(L.c_attn.out, at(l, "attn.qkv.grad"));
        b.op("split_qkv_grad", {dq, dk, dv}, {d_qkv});
        TensorIndex d_ln1 = b.linear_grad(L.c_attn, d_qkv, at(l, "ln_1.out.grad"));
        TensorIndex d_x_branch = b.norm_grad(L.ln_1, d_ln1, at(l, "ln_1.in.grad"));
        return b.grad_sum(b.name_of(L.ln_1.x) + ".grad", {d_mid, d_x_branch});
    }
};

struct LlamaLayer {
    NormRec norm_1;
    LinearRec q, k, v;
    AttnRec attn;
    LinearRec o;
    NormRec norm_2;
    LinearRec gate, up;
    TensorIndex silu = kNone;
    LinearRec down;
};

struct LlamaModel : ModelBase {
    using ModelBase::ModelBase;
    TensorIndex embed = kNone;
    std::vector<LlamaLayer> layers;

    void forward(bool with_loss) {
        const Dims& d = b.dims();
        inputs(with_loss);
        embed = b.param("embed_tokens", {d.V, d.E});
        TensorIndex x = b.value("embed.out", {d.B, d.S, d.E});
        b.op("embedding", {tokens, embed}, {x});
        for (uint64_t l = 0; l < c.n_layer; ++l)
            x = layer_forward(l, x);
        TensorIndex w = b.param("norm.weight", {d.E});
        final_norm = b.rmsnorm("norm", x, w);
        TensorIndex head_weight = embed;
        if (!c.tied_embeddings) head_weight = b.param("lm_head.weight", {d.V, d.E});
        head_forward(head_weight, with_loss);
    }

    LinearRec projection(uint64_t l, std::string_view param, std::string_view out, TensorIndex x,
                         int64_t in_features, int64_t out_features, bool bias) {
        TensorIndex w = b.param(at(l, param) + ".weight", {in_features, out_features});
        TensorIndex bias_param = bias ? b.param(at(l, param) + ".bias", {out_features}) : kNone;
        return b.linear(at(l, out), x, w, bias_param, out_features);
    }

    TensorIndex layer_forward(uint64_t l, TensorIndex x) {
        const Dims& d = b.dims();
        LlamaLayer L;
        TensorIndex w1 = b.param(at(l, "input_layernorm.weight"), {d.E});
        L.norm_1 = b.rmsnorm(at(l, "input_layernorm"), x, w1);
        TensorIndex n1 = L.norm_1.out;
        L.q = projection(l, "self_attn.q_proj", "attn.q_proj", n1, d.E, d.H * d.D, c.qkv_bias);
        L.k = projection(l, "self_attn.k_proj", "attn.k_proj", n1, d.E, d.KV * d.D, c.qkv_bias);
        L.v = projection(l, "self_attn.v_proj", "attn.v_proj", n1, d.E, d.KV * d.D, c.qkv_bias);
        TensorIndex q = b.value(at(l, "attn.q"), {d.B, d.H, d.S, d.D});
        b.op("rope", {L.q.out}, {q});
        TensorIndex k = b.value(at(l, "attn.k"), {d.B, d.KV, d.S, d.D});
        b.op("rope", {L.k.out}, {k});
        TensorIndex v = b.value(at(l, "attn.v"), {d.B, d.KV, d.S, d.D});
        b.op("split_heads", {L.v.out}, {v});
        L.attn = b.attention(at(l, "attn"), q, k, v);
        L.o =
            projection(l, "self_attn.o_proj", "attn.proj", L.attn.merged, d.H * d.D, d.E, c.o_bias);
        TensorIndex mid = b.binary("add", at(l, "resid_attn"), x, L.o.out);
        TensorIndex w2 = b.param(at(l, "post_attention_layernorm.weight"), {d.E});
        L.norm_2 = b.rmsnorm(at(l, "post_attention_layernorm"), mid, w2);
        L.gate = projection(l, "mlp.gate_proj", "mlp.gate", L.norm_2.out, d.E, d.I, c.mlp_bias);
        L.up = projection(l, "mlp.up_proj", "mlp.up", L.norm_2.out, d.E, d.I, c.mlp_bias);
        L.silu = b.unary("silu", at(l, "mlp.silu"), L.gate.out);
        TensorIndex act = b.binary("mul", at(l, "mlp.act"), L.silu, L.up.out);
        L.down = projection(l, "mlp.down_proj", "mlp.down", act, d.I, d.E, c.mlp_bias);
        layers.push_back(L);
        return b.binary("add", at(l, "out"), mid, L.down.out);
    }

    void backward() {
        b.set_phase(Phase::Backward);
        TensorIndex dx = head_backward("norm.out.grad");
        for (uint64_t l = c.n_layer; l-- > 0;)
            dx = layer_backward(l, layers[l], dx);
        embedding_backward(embed, dx);
    }

    TensorIndex layer_backward(uint64_t l, const LlamaLayer& L, TensorIndex dy) {
        TensorIndex d_act = b.linear_grad(L.down, dy, at(l, "mlp.act.grad"));
        TensorIndex d_silu = b.grad_like(L.silu, at(l, "mlp.silu.grad"));
        TensorIndex d_up = b.grad_like(L.up.out, at(l, "mlp.up.grad"));
        b.op("mul_grad", {d_act, L.silu, L.up.out}, {d_silu, d_up});
        TensorIndex d_gate = b.grad_like(L.gate.out, at(l, "mlp.gate.grad"));
        b.op("silu_grad", {d_silu, L.gate.out}, {d_gate});
        std::string n2 = at(l, "post_attention_layernorm.out.grad");
        TensorIndex d_n2_gate = b.linear_grad(L.gate, d_gate, n2 + ".gate");
        TensorIndex d_n2_up = b.linear_grad(L.up, d_up, n2 + ".up");
        TensorIndex d_n2 = b.grad_sum(n2, {d_n2_gate, d_n2_up});
        TensorIndex d_mid_branch =
            b.norm_grad(L.norm_2, d_n2, at(l, "post_attention_layernorm.in.grad"));
        TensorIndex d_mid = b.grad_sum(at(l, "resid_attn.grad"), {dy, d_mid_branch});
        TensorIndex d_merged = b.linear_grad(L.o, d_mid, at(l, "attn.merged.grad"));
        auto [dq, dk, dv] = b.attention_grad(L.attn, d_merged);
        TensorIndex d_qp = b.grad_like(L.q.out, at(l, "attn.q_proj.grad"));
        b.op("rope_grad", {dq}, {d_qp});
        TensorIndex d_kp = b.grad_like(L.k.out, at(l, "attn.k_proj.grad"));
        b.op("rope_grad", {dk}, {d_kp});
        TensorIndex d_vp = b.grad_like(L.v.out, at(l, "attn.v_proj.grad"));
        b.op("split_heads_grad", {dv}, {d_vp});
        std::string n1 = at(l, "input_layernorm.out.grad");
        TensorIndex d_n1_q = b.linear_grad(L.q, d_qp, n1 + ".q");
        TensorIndex d_n1_k = b.linear_grad(L.k, d_kp, n1 + ".k");
        TensorIndex d_n1_v = b.linear_grad(L.v, d_vp, n1 + ".v");
        TensorIndex d_n1 = b.grad_sum(n1, {d_n1_q, d_n1_k, d_n1_v});
        TensorIndex d_x_branch = b.norm_grad(L.norm_1, d_n1, at(l, "input_layernorm.in.grad"));
        return b.grad_sum(b.name_of(L.norm_1.x) + ".grad", {d_mid, d_x_branch});
    }
};

// Forward, then for forward/training the backward (to find what it reads); forward mode then
// drops the backward again, which keeps its tensor ids identical to the training graph's.
template <typename Model>
Graph expand(Model& m, TransformerBuilder& b, const GraphRequest& r) {
    m.forward(r.mode != Mode::Inference);
    GraphBuilder& gb = b.graph();
    if (r.mode == Mode::Inference) {
        gb.tensor(m.logits()).role = Role::Output;
    } else {
        size_t forward_tensors = gb.tensor_count();
        size_t forward_nodes = gb.node_count();
        m.backward();
        b.mark_saved_for_backward(forward_tensors);
        if (r.mode == Mode::Forward) {
            gb.truncate(forward_tensors, forward_nodes);
            gb.tensor(m.loss).role = Role::Output;
        } else {
            b.optimizer(r.adam);
        }
    }
    Graph g = gb.take();
    finalize_graph(g);
    return g;
}

Graph build_fixed(const TransformerConfig& config, const GraphRequest& request) {
    std::string name = fmt::format("{} {} b{} s{} {}", config.name, mode_label(request.mode),
                                   request.batch, request.seq, dtype_name(request.dtype));
    TransformerBuilder b(std::move(name), dims_of(config, request));
    if (config.family == TransformerConfig::Family::Gpt2) {
        Gpt2Model m(b, config);
        return expand(m, b, request);
    }
    LlamaModel m(b, config);
    return expand(m, b, request);
}

// Makes batch and seq dynamic in a graph built at request.batch and request.seq: batch up to
// request.max_batch, seq up to the model's positions. Which axes follow them is read from the
// graph built at other values (the builder's shapes name no dimension).
void make_dynamic(Graph& g, const TransformerConfig& config, const GraphRequest& request) {
    const auto i64 = [](uint64_t v) { return int64_t(v); };
    const int64_t max_seq = std::min(i64(config.max_positions), kMaxDynamicDim);
    const auto build_at = [&](const DimBinding& b) {
        GraphRequest at = request;
        at.max_batch = 0;
        at.batch = uint64_t(b.at("batch"));
        at.seq = uint64_t(b.at("seq"));
        return build_fixed(config, at);
    };
    make_dims_from_probes(g,
                          {{"batch", 1, i64(request.max_batch), i64(request.batch)},
                           {"seq", 1, max_seq, i64(request.seq)}},
                          ReplanPolicy::ReplanAtSafepoint, build_at,
                          fmt::format("config '{}'", config.name));
}

} // namespace

void check_transformer_config(const TransformerConfig& c) {
    auto dim = [](uint64_t v, std::string_view field) {
        if (v == 0 || v > kMaxTransformerDim)
            fail(FailureCode::InvalidIrShapes, fmt::format("config.{}", field),
                 fmt::format("expected a value in [1, 2^40], got {}", v));
    };
    dim(c.n_layer, "n_layer");
    dim(c.hidden, "hidden");
    dim(c.n_head, "n_head");
    dim(c.n_kv_head, "n_kv_head");
    dim(c.intermediate, "intermediate");
    dim(c.vocab, "vocab");
    dim(c.max_positions, "max_positions");
    if (c.hidden % c.n_head != 0)
        fail(FailureCode::InvalidIrShapes, "config.n_head",
             fmt::format("hidden size {} is not divisible by {} heads", c.hidden, c.n_head));
    if (c.n_head % c.n_kv_head != 0)
        fail(
            FailureCode::InvalidIrShapes, "config.n_kv_head",
            fmt::format("{} heads are not divisible by {} key/value heads", c.n_head, c.n_kv_head));
    if (c.n_layer > kMaxLayers)
        fail(FailureCode::InvalidIrShapes, "config.n_layer", // the file's data, not a usage error
             fmt::format("{} layers; tmmu builds models of at most {}", c.n_layer, kMaxLayers));
}

Graph build_transformer_graph(const TransformerConfig& config, const GraphRequest& request) {
    check_transformer_config(config);
    check_request(config, request);
    Graph g = build_fixed(config, request);
    if (request.max_batch != 0) make_dynamic(g, config, request);
    return g;
}

uint64_t parameter_count(const TransformerConfig& c) {
    constexpr std::string_view where = "parameter_count";
    auto mul = [&](uint64_t a, uint64_t b) { return checked_mul(a, b, where); };
    auto add = [&](uint64_t a, uint64_t b) { return checked_add(a, b, where); };
    uint64_t E = c.hidden, I = c.intermediate, V = c.vocab;
    uint64_t kv_width = mul(c.n_kv_head, c.head_dim());
    uint64_t embed = mul(V, E);
    uint64_t total = c.tied_embeddings ? embed : mul(2, embed);
    uint64_t per_layer = 0;
    if (c.family == TransformerConfig::Family::Gpt2) {
        total = add(total, mul(c.max_positions, E)); // wpe
        total = add(total, mul(2, E));               // ln_f
        uint64_t attn = add(add(mul(E, mul(3, E)), mul(3, E)), add(mul(E, E), E));
        uint64_t mlp = add(add(mul(E, I), I), add(mul(I, E), E));
        per_layer = add(add(attn, mlp), mul(4, E)); // + ln_1, ln_2 weight and bias
    } else {
        total = add(total, E); // final norm
        uint64_t attn = add(mul(2, mul(E, E)), mul(2, mul(E, kv_width)));
        if (c.qkv_bias) attn = add(attn, add(E, mul(2, kv_width)));
        if (c.o_bias) attn = add(attn, E);
        uint64_t mlp = mul(3, mul(E, I));
        if (c.mlp_bias) mlp = add(mlp, add(mul(2, I), E));
        per_layer = add(add(attn, mlp), mul(2, E));
    }
    return add(total, mul(c.n_layer, per_layer));
}

} // namespace tmmu
