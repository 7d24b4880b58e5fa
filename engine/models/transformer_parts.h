#pragma once
// Internal to engine/models: the operator vocabulary shared by the GPT-2 and Llama expansions.
// Each forward helper appends one node and returns a record of the tensors its backward reads;
// each backward helper consumes such a record and a gradient and appends the grad nodes.
#include "ir/graph.h"
#include "models/graph_builder.h"

#include <array>
#include <string>
#include <vector>

namespace tmmu::detail {

// Tensor dimensions: batch, sequence, hidden, query heads, kv heads, head dim, MLP width,
// vocabulary, positions.
struct Dims {
    int64_t B, S, E, H, KV, D, I, V, P;
    DType dt;
};

struct LinearRec {
    TensorIndex x = kNone, w = kNone, b = kNone, out = kNone;
};

// rmsnorm has no bias and no mean.
struct NormRec {
    TensorIndex x = kNone, w = kNone, b = kNone, out = kNone, mean = kNone, rstd = kNone;
};

struct AttnRec {
    std::string prefix;
    TensorIndex q = kNone, k = kNone, v = kNone, probs = kNone, merged = kNone;
};

class TransformerBuilder {
  public:
    TransformerBuilder(std::string graph_name, const Dims& dims);

    const Dims& dims() const { return d_; }
    GraphBuilder& graph() { return gb_; }
    void set_phase(Phase p) { phase_ = p; }

    // Tensors: parameters (listed for the optimizer), inputs, and values made by the current
    // phase (activation in forward, gradient otherwise).
    TensorIndex param(std::string name, std::vector<int64_t> shape);
    TensorIndex input(std::string name, std::vector<int64_t> shape, DType dtype);
    TensorIndex value(std::string name, std::vector<int64_t> shape);
    TensorIndex value(std::string name, std::vector<int64_t> shape, DType dtype);
    TensorIndex grad_like(TensorIndex t, std::string name);
    const std::string& name_of(TensorIndex t) { return gb_.tensor(t).name; }
    const std::vector<int64_t>& shape_of(TensorIndex t) { return gb_.tensor(t).shape; }
    void op(std::string opcode, std::vector<TensorIndex> inputs, std::vector<TensorIndex> outputs);

    // Forward operators.
    LinearRec linear(std::string out_name, TensorIndex x, TensorIndex w, TensorIndex b,
                     int64_t out_features);
    NormRec layernorm(const std::string& prefix, TensorIndex x, TensorIndex w, TensorIndex b);
    NormRec rmsnorm(const std::string& prefix, TensorIndex x, TensorIndex w);
    TensorIndex unary(std::string opcode, std::string out_name, TensorIndex x);
    TensorIndex binary(std::string opcode, std::string out_name, TensorIndex a, TensorIndex b);
    // q (B,H,S,D), k and v (B,KV,S,D) -> scores, causal softmax, probs.v, merge -> (B,S,E).
    AttnRec attention(const std::string& prefix, TensorIndex q, TensorIndex k, TensorIndex v);

    // Backward operators; each returns the gradient of the op's activation input(s).
    TensorIndex linear_grad(const LinearRec& r, TensorIndex d_out, std::string dx_name);
    TensorIndex norm_grad(const NormRec& r, TensorIndex d_out, std::string dx_name);
    std::array<TensorIndex, 3> attention_grad(const AttnRec& r, TensorIndex d_merged);
    TensorIndex grad_sum(std::string name, std::vector<TensorIndex> parts);

    // The gradient output for a parameter. When the parameter already has one (tied weights)
    // the new one accumulates in place over it: that grad is appended to inputs.
    TensorIndex param_grad(TensorIndex param, std::vector<TensorIndex>& inputs);

    // Marks every forward tensor (index < forward_end, not a parameter) that a backward node
    // reads as saved_for_backward.
    void mark_saved_for_backward(size_t forward_end);
    // One adamw (or sgd) node per parameter, in parameter creation order.
    void optimizer(bool adam);

  private:
    GraphBuilder gb_;
    Dims d_;
    Phase phase_ = Phase::Forward;
    std::vector<TensorIndex> params_;
    std::vector<TensorIndex> grad_of_; // per tensor index: its parameter gradient, or kNone
};

} // namespace tmmu::detail
