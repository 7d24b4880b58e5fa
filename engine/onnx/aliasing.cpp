#include "onnx/aliasing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <string_view>

namespace tmmu::onnx {
namespace {

bool is_view_op(std::string_view op) {
    return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
           op == "Identity";
}

// Ops whose output element i depends only on element i of their inputs (after broadcasting),
// so writing the output over an input of the same size is safe.
bool is_elementwise(std::string_view op) {
    static const std::set<std::string_view> ops = {"Abs",
                                                   "Acos",
                                                   "Acosh",
                                                   "Add",
                                                   "Asin",
                                                   "Asinh",
                                                   "Atan",
                                                   "Atanh",
                                                   "Ceil",
                                                   "Celu",
                                                   "Clip",
                                                   "Cos",
                                                   "Cosh",
                                                   "Div",
                                                   "Elu",
                                                   "Erf",
                                                   "Exp",
                                                   "Floor",
                                                   "HardSigmoid",
                                                   "HardSwish",
                                                   "LeakyRelu",
                                                   "Log",
                                                   "Max",
                                                   "Mean",
                                                   "Min",
                                                   "Mish",
                                                   "Mul",
                                                   "Neg",
                                                   "Not",
                                                   "Pow",
                                                   "PRelu",
                                                   "Reciprocal",
                                                   "Relu",
                                                   "Round",
                                                   "Selu",
                                                   "Sigmoid",
                                                   "Sign",
                                                   "Sin",
                                                   "Sinh",
                                                   "Softplus",
                                                   "Softsign",
                                                   "Sqrt",
                                                   "Sub",
                                                   "Sum",
                                                   "Tan",
                                                   "Tanh",
                                                   "ThresholdedRelu",
                                                   "And",
                                                   "Or",
                                                   "Xor"};
    return ops.count(op) > 0;
}

// Elements times element size; 0 when unknown (then nothing aliases).
uint64_t bytes_of(const Tensor& t) {
    uint64_t n = dtype_bytes(t.dtype);
    for (int64_t d : t.shape) {
        if (d < 0) return 0;
        n *= uint64_t(d);
    }
    return n;
}

bool is_written_by_graph(const Tensor& t) {
    return t.role == Role::Activation || t.role == Role::Output;
}

class Aliaser {
  public:
    Aliaser(Graph& g, std::vector<std::string>& notes)
        : g_(g), notes_(notes), readers_(g.tensors.size()) {
        for (NodeIndex n = 0; n < g.nodes.size(); ++n)
            for (TensorIndex in : g.nodes[n].inputs)
                readers_[in].insert(n);
    }

    void run() {
        for (Node& n : g_.nodes) {
            if (n.outputs.empty() || n.inputs.empty()) continue;
            if (is_view_op(n.opcode))
                make_view(n);
            else if (is_elementwise(n.opcode))
                write_in_place(n);
        }
        emit(views_, "outputs are views of their input (the op only changes the shape)");
        emit(in_place_, "elementwise results may be written in place of their input (the op's "
                        "only reader)");
    }

  private:
    void make_view(const Node& n) {
        Tensor& out = g_.tensors[n.outputs[0]];
        const Tensor& in = g_.tensors[n.inputs[0]];
        if (!is_written_by_graph(out) || bytes_of(out) == 0 || bytes_of(out) != bytes_of(in))
            return;
        out.view = ViewDesc{n.inputs[0], 0, 0, {}};
        views_.push_back(fmt::format("'{}' is a view of '{}': {} '{}' only changes the shape",
                                     out.id, in.id, n.opcode, n.id));
    }

    void write_in_place(const Node& n) {
        Tensor& out = g_.tensors[n.outputs[0]];
        if (n.outputs.size() != 1 || !is_written_by_graph(out) || out.view ||
            has_view_reader(n.outputs[0]))
            return;
        for (TensorIndex in : n.inputs) {
            const Tensor& t = g_.tensors[in];
            // Only this node reads it, and it is neither a graph output nor a view of something
            // else: its bytes are dead once the node has read them.
            if (t.role != Role::Activation || t.view || readers_[in].size() != 1 ||
                t.dtype != out.dtype || bytes_of(t) == 0 || bytes_of(t) != bytes_of(out))
                continue;
            out.in_place_of = in;
            in_place_.push_back(fmt::format("'{}' may be written in place of '{}': {} '{}' is "
                                            "elementwise and the only reader of '{}'",
                                            out.id, t.id, n.opcode, n.id, t.id));
            return;
        }
    }

    // A result that a Reshape (or another view op) reads becomes a view base; liveness merges an
    // in-place write only into a storage of its own (seed II.G), so asking would only be refused.
    // The view is kept: it is free, and the result still reuses bytes freed before it.
    bool has_view_reader(TensorIndex t) const {
        for (NodeIndex r : readers_[t])
            if (is_view_op(g_.nodes[r].opcode) && g_.nodes[r].inputs[0] == t) return true;
        return false;
    }

    // A few decisions are a note each; many (a large model has thousands) are one note with the
    // first examples, so a summary stays readable. Every decision stays in the graph (view,
    // in_place_of) for the views and the JSON output.
    void emit(const std::vector<std::string>& decisions, const char* what) {
        constexpr size_t kEach = 8, kExamples = 3;
        if (decisions.size() <= kEach) {
            notes_.insert(notes_.end(), decisions.begin(), decisions.end());
            return;
        }
        notes_.push_back(
            fmt::format("{} {}, as ONNX runtimes alias them: {}; and {} more", decisions.size(),
                        what, fmt::join(decisions.begin(), decisions.begin() + kExamples, "; "),
                        decisions.size() - kExamples));
    }

    Graph& g_;
    std::vector<std::string>& notes_;
    std::vector<std::set<NodeIndex>> readers_;
    std::vector<std::string> views_, in_place_;
};

} // namespace

void alias_like_runtimes(Graph& g, std::vector<std::string>& notes) {
    Aliaser(g, notes).run();
}

} // namespace tmmu::onnx
