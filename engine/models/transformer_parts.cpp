#include "models/transformer_parts.h"

#include "core/failure.h"

#include <utility>

namespace tmmu::detail {

TransformerBuilder::TransformerBuilder(std::string graph_name, const Dims& dims)
    : gb_(std::move(graph_name)), d_(dims) {}

TensorIndex TransformerBuilder::param(std::string name, std::vector<int64_t> shape) {
    TensorIndex t = gb_.add_tensor(std::move(name), std::move(shape), d_.dt, Role::Parameter);
    params_.push_back(t);
    return t;
}

TensorIndex TransformerBuilder::input(std::string name, std::vector<int64_t> shape, DType dtype) {
    return gb_.add_tensor(std::move(name), std::move(shape), dtype, Role::Input);
}

TensorIndex TransformerBuilder::value(std::string name, std::vector<int64_t> shape) {
    return value(std::move(name), std::move(shape), d_.dt);
}

TensorIndex TransformerBuilder::value(std::string name, std::vector<int64_t> shape, DType dtype) {
    Role role = phase_ == Phase::Forward ? Role::Activation : Role::Gradient;
    return gb_.add_tensor(std::move(name), std::move(shape), dtype, role);
}

TensorIndex TransformerBuilder::grad_like(TensorIndex t, std::string name) {
    std::vector<int64_t> shape = shape_of(t);
    return value(std::move(name), std::move(shape), gb_.tensor(t).dtype);
}

void TransformerBuilder::op(std::string opcode, std::vector<TensorIndex> inputs,
                            std::vector<TensorIndex> outputs) {
    gb_.add_node(std::move(opcode), std::move(inputs), std::move(outputs), phase_);
}

LinearRec TransformerBuilder::linear(std::string out_name, TensorIndex x, TensorIndex w,
                                     TensorIndex b, int64_t out_features) {
    std::vector<int64_t> shape = shape_of(x);
    shape.back() = out_features;
    LinearRec r{x, w, b, value(std::move(out_name), std::move(shape))};
    std::vector<TensorIndex> inputs{x, w};
    if (b != kNone) inputs.push_back(b);
    op("matmul", std::move(inputs), {r.out});
    return r;
}

NormRec TransformerBuilder::layernorm(const std::string& prefix, TensorIndex x, TensorIndex w,
                                      TensorIndex b) {
    NormRec r{x, w, b, grad_like(x, prefix + ".out"), kNone, kNone};
    // Per-row statistics stay f32 whatever the activation dtype, as fused kernels keep them.
    r.mean = value(prefix + ".mean", {d_.B, d_.S}, DType::F32);
    r.rstd = value(prefix + ".rstd", {d_.B, d_.S}, DType::F32);
    op("layernorm", {x, w, b}, {r.out, r.mean, r.rstd});
    return r;
}

NormRec TransformerBuilder::rmsnorm(const std::string& prefix, TensorIndex x, TensorIndex w) {
    NormRec r{x, w, kNone, grad_like(x, prefix + ".out"), kNone, kNone};
    r.rstd = value(prefix + ".rstd", {d_.B, d_.S}, DType::F32);
    op("rmsnorm", {x, w}, {r.out, r.rstd});
    return r;
}

TensorIndex TransformerBuilder::unary(std::string opcode, std::string out_name, TensorIndex x) {
    TensorIndex out = grad_like(x, std::move(out_name));
    op(std::move(opcode), {x}, {out});
    return out;
}

TensorIndex TransformerBuilder::binary(std::string opcode, std::string out_name, TensorIndex a,
                                       TensorIndex b) {
    TensorIndex out = grad_like(a, std::move(out_name));
    op(std::move(opcode), {a, b}, {out});
    return out;
}

AttnRec TransformerBuilder::attention(const std::string& prefix, TensorIndex q, TensorIndex k,
                                      TensorIndex v) {
    const Dims& d = d_;
    // Grouped-query attention: each of the KV heads serves H / KV query heads, so scores and
    // probabilities have H heads while k and v keep KV.
    TensorIndex scores = value(prefix + ".scores", {d.B, d.H, d.S, d.S});
    op("attention_scores", {q, k}, {scores});
    TensorIndex probs = value(prefix + ".probs", {d.B, d.H, d.S, d.S});
    op("causal_softmax", {scores}, {probs});
    TensorIndex context = value(prefix + ".context", {d.B, d.H, d.S, d.D});
    op("attention_values", {probs, v}, {context});
    TensorIndex merged = value(prefix + ".merged", {d.B, d.S, d.H * d.D});
    op("merge_heads", {context}, {merged});
    return AttnRec{prefix, q, k, v, probs, merged};
}

TensorIndex TransformerBuilder::param_grad(TensorIndex param, std::vector<TensorIndex>& inputs) {
    if (grad_of_.size() <= param) grad_of_.resize(gb_.tensor_count(), kNone);
    TensorIndex previous = grad_of_[param];
    TensorIndex g =
        gb_.add_tensor(name_of(param) + ".grad", shape_of(param), d_.dt, Role::Gradient);
    if (previous != kNone) {
        gb_.tensor(previous).name += ".partial";
        gb_.tensor(g).in_place_of = previous;
        inputs.push_back(previous);
    }
    grad_of_[param] = g;
    return g;
}

TensorIndex TransformerBuilder::linear_grad(const LinearRec& r, TensorIndex d_out,
                                            std::string dx_name) {
    TensorIndex dx = grad_like(r.x, std::move(dx_name));
    op("matmul_grad_input", {d_out, r.w}, {dx});
    std::vector<TensorIndex> inputs{r.x, d_out};
    TensorIndex dw = param_grad(r.w, inputs);
    op("matmul_grad_weight", std::move(inputs), {dw});
    if (r.b != kNone) {
        std::vector<TensorIndex> bias_inputs{d_out};
        TensorIndex db = param_grad(r.b, bias_inputs);
        op("bias_grad", std::move(bias_inputs), {db});
    }
    return dx;
}

TensorIndex TransformerBuilder::norm_grad(const NormRec& r, TensorIndex d_out,
                                          std::string dx_name) {
    TensorIndex dx = grad_like(r.x, std::move(dx_name));
    bool layernorm = r.b != kNone;
    std::vector<TensorIndex> inputs{d_out, r.x, r.w};
    if (layernorm) inputs.push_back(r.mean);
    inputs.push_back(r.rstd);
    std::vector<TensorIndex> outputs{dx, param_grad(r.w, inputs)};
    if (layernorm) outputs.push_back(param_grad(r.b, inputs));
    op(layernorm ? "layernorm_grad" : "rmsnorm_grad", std::move(inputs), std::move(outputs));
    return dx;
}

std::array<TensorIndex, 3> TransformerBuilder::attention_grad(const AttnRec& r,
                                                              TensorIndex d_merged) {
    const Dims& d = d_;
    const std::string& prefix = r.prefix;
    TensorIndex d_context = value(prefix + ".context.grad", {d.B, d.H, d.S, d.D});
    op("merge_heads_grad", {d_merged}, {d_context});
    TensorIndex d_probs = value(prefix + ".probs.grad", {d.B, d.H, d.S, d.S});
    TensorIndex dv = grad_like(r.v, name_of(r.v) + ".grad");
    op("attention_values_grad", {d_context, r.probs, r.v}, {d_probs, dv});
    TensorIndex d_scores = value(prefix + ".scores.grad", {d.B, d.H, d.S, d.S});
    op("softmax_grad", {d_probs, r.probs}, {d_scores});
    TensorIndex dq = grad_like(r.q, name_of(r.q) + ".grad");
    TensorIndex dk = grad_like(r.k, name_of(r.k) + ".grad");
    op("attention_scores_grad", {d_scores, r.q, r.k}, {dq, dk});
    return {dq, dk, dv};
}

TensorIndex TransformerBuilder::grad_sum(std::string name, std::vector<TensorIndex> parts) {
    TensorIndex sum = grad_like(parts.front(), std::move(name));
    op("add", std::move(parts), {sum});
    return sum;
}

void TransformerBuilder::mark_saved_for_backward(size_t forward_end) {
    for (const Node& n : gb_.graph().nodes) {
        if (n.phase != Phase::Backward) continue;
        for (TensorIndex t : n.inputs) {
            Tensor& tensor = gb_.tensor(t);
            if (t < forward_end && tensor.role != Role::Parameter) tensor.saved_for_backward = true;
        }
    }
}

void TransformerBuilder::optimizer(bool adam) {
    set_phase(Phase::Optimizer);
    grad_of_.resize(gb_.tensor_count(), kNone);
    for (TensorIndex p : params_) {
        TensorIndex g = grad_of_[p];
        if (g == kNone)
            fail(FailureCode::InvalidIrShapes, "tensor '" + name_of(p) + "'",
                 "internal: the backward pass produced no gradient for this parameter");
        std::string name = name_of(p);
        TensorIndex updated =
            gb_.add_tensor(name + ".updated", shape_of(p), d_.dt, Role::Parameter);
        gb_.tensor(updated).in_place_of = p;
        if (!adam) {
            op("sgd", {p, g}, {updated});
            continue;
        }
        std::vector<TensorIndex> state;
        for (const char* moment : {".adam_m", ".adam_v"})
            state.push_back(
                gb_.add_tensor(name + moment, shape_of(p), d_.dt, Role::OptimizerState));
        std::vector<TensorIndex> outputs{updated};
        for (TensorIndex s : state) {
            TensorIndex next =
                gb_.add_tensor(name_of(s) + ".updated", shape_of(s), d_.dt, Role::OptimizerState);
            gb_.tensor(next).in_place_of = s;
            outputs.push_back(next);
        }
        op("adamw", {p, g, state[0], state[1]}, std::move(outputs));
    }
}

} // namespace tmmu::detail
