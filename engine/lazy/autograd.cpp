// Autograd core (seed 004, section 9): graphs recorded as ops are made, saved-for-backward slots
// guarded by their base's commit version, lazy backward rooted on tokGlobal, leaf grads
// accumulated into grad_state locs.
#include "lazy/engine_state.h"

#include "core/assert.h"
#include "lazy/kernels.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

#include <set>

namespace tmmu::lazy {
namespace {

// Which values an op's backward reads: its inputs (by index) or its output (kOutput).
constexpr int kOutput = -1;
std::vector<int> saved_operands(Op op) {
    switch (op) {
    case Op::Mul:
    case Op::Div:
    case Op::Maximum:
    case Op::Minimum:
    case Op::Pow:
    case Op::MatMul:
        return {0, 1};
    case Op::Log:
    case Op::Relu:
    case Op::Abs:
    case Op::Sin:
    case Op::Cos:
    case Op::Gelu:
    case Op::Silu:
        return {0};
    case Op::Exp:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Sqrt:
    case Op::Rsqrt:
        return {kOutput};
    default:
        return {};
    }
}

} // namespace

void EngineState::record_grad(TensorId out, Op op, const std::vector<TensorId>& inputs,
                              const std::vector<ValueId>& input_values, ValueId out_value,
                              const ViewMeta* view, const std::vector<int64_t>& dims,
                              bool keepdim) {
    const AutogradId id = next_autograd++;
    AutogradNode& g = autograd[id];
    g.op = op;
    g.dims = dims;
    g.keepdim = keepdim;
    if (view) g.view = *view;
    for (TensorId t : inputs) {
        const TensorRec& r = tensors.at(t);
        g.input_shapes.push_back(shape_of(t));
        g.input_fns.push_back(r.requires_grad && !r.is_leaf ? r.grad_fn : 0);
        g.input_leaves.push_back(r.requires_grad && r.is_leaf ? t : 0);
    }
    for (int k : saved_operands(op)) {
        const TensorId t = k == kOutput ? out : inputs[static_cast<size_t>(k)];
        const ValueId v = k == kOutput ? out_value : input_values[static_cast<size_t>(k)];
        g.saved.push_back(save_for_backward(t, v, op));
    }
    TensorRec& o = tensors.at(out);
    o.requires_grad = true;
    o.is_leaf = false;
    o.grad_fn = id;
}

// A saved slot and its publish event: the base's commit version at this token point is what
// backward's use is checked against (9.3).
SavedSlotId EngineState::save_for_backward(TensorId t, ValueId v, Op op) {
    const SavedSlotId id = next_saved++;
    SavedSlot& s = saved[id];
    const TensorRec& r = tensors.at(t);
    if (open_checkpoint != 0) {
        s.region = open_checkpoint;
        s.recorded = v;
        checkpoints.at(open_checkpoint).slots.push_back(id);
    } else {
        s.value = v;
        hold(v);
    }
    s.base = r.base;
    s.tensor = r.name.empty() ? fmt::format("#{}", t) : r.name;
    s.saved_by = fmt::format("{} at {}", op_name(op), site);
    Node& n = global_effect(Op::PublishSave, {}, "publish_save");
    n.slot = id;
    n.base = r.base;
    n.detail = fmt::format("save '{}' for {}", s.tensor, s.saved_by);
    return id;
}

ValueId EngineState::use_saved(SavedSlotId id) {
    const SavedSlot& s = saved.at(id);
    if (s.value == 0 && s.region != 0 && !checkpoints.at(s.region).replayed) recompute(s.region);
    TMMU_ASSERT(s.value != 0, "check_graph_alive lets no freed slot through");
    Node& n = global_effect(Op::SavedCheck, {}, "saved_check");
    n.slot = id;
    n.base = s.base;
    n.detail = fmt::format("backward reads '{}' saved by {}", s.tensor, s.saved_by);
    return s.value;
}

ValueId EngineState::op2(Op op, ValueId a, ValueId b) {
    return emit_data(op, {a, b}, broadcast_shapes(values.at(a).shape, values.at(b).shape));
}

ValueId EngineState::op1(Op op, ValueId a) {
    return emit_data(op, {a}, values.at(a).shape);
}

ValueId EngineState::scalar(float x) {
    return constant_value({}, {x});
}

ValueId EngineState::sum_to(ValueId v, const Shape& shape) {
    if (values.at(v).shape == shape) return v;
    Node& n = emit(Op::SumTo, {v}, {shape}, false);
    n.shape = shape;
    return n.outputs[0];
}

ValueId EngineState::view_value(ValueId v, const ViewMeta& meta) {
    Node& n = emit(Op::View, {v}, {meta.shape}, false);
    n.view = meta;
    return n.outputs[0];
}

ValueId EngineState::transposed(ValueId v) {
    return view_value(v, transpose_view(identity_view(values.at(v).shape), 0, 1));
}

// The gradient of one input of a recorded op, given the output's gradient g.
ValueId EngineState::vjp(const AutogradNode& node, size_t i, ValueId g) {
    const Shape& s = node.input_shapes[i];
    const auto saved_value = [&](size_t k) { return use_saved(node.saved[k]); };
    switch (node.op) {
    case Op::Add:
        return sum_to(g, s);
    case Op::Sub:
        return sum_to(i == 0 ? g : op1(Op::Neg, g), s);
    case Op::Mul:
        return sum_to(op2(Op::Mul, g, saved_value(1 - i)), s);
    case Op::Div: {
        const ValueId b = saved_value(1);
        if (i == 0) return sum_to(op2(Op::Div, g, b), s);
        const ValueId ga = op2(Op::Mul, g, saved_value(0));
        return sum_to(op1(Op::Neg, op2(Op::Div, ga, op2(Op::Mul, b, b))), s);
    }
    case Op::Maximum:
    case Op::Minimum: {
        // The gradient goes to the input chosen, and a tie gives each input half, as PyTorch
        // does: a's weight is 1 where a wins, 1/2 where the inputs are equal, else 0, and b
        // takes the rest, so where either is NaN (the kernels then choose b) b takes it all.
        const ValueId a = saved_value(0), b = saved_value(1);
        const ValueId lead = node.op == Op::Maximum ? op2(Op::Sub, a, b) : op2(Op::Sub, b, a);
        const ValueId tie = op2(Op::Mul, op2(Op::Eq, a, b), scalar(0.5f));
        const ValueId ga = op2(Op::Mul, g, op2(Op::Add, op1(Op::Step, lead), tie));
        return sum_to(i == 0 ? ga : op2(Op::Sub, g, ga), s);
    }
    case Op::Pow: {
        const ValueId a = saved_value(0), b = saved_value(1);
        const Op factor = i == 0 ? Op::PowGradBase : Op::PowGradExponent;
        return sum_to(op2(Op::Mul, g, op2(factor, a, b)), s);
    }
    case Op::Floor:
    case Op::Ceil:
    case Op::Round: // piecewise constant: zeros, whatever g holds (g * 0 is NaN for g = inf)
        return constant_value(s, std::vector<float>(static_cast<size_t>(element_count(s)), 0.0f));
    case Op::Abs: {
        const ValueId x = saved_value(0);
        return op2(Op::Mul, g, op2(Op::Sub, op1(Op::Step, x), op1(Op::Step, op1(Op::Neg, x))));
    }
    case Op::Rsqrt: {
        const ValueId o = saved_value(0);
        return op2(Op::Mul, op2(Op::Mul, g, scalar(-0.5f)), op2(Op::Mul, o, op2(Op::Mul, o, o)));
    }
    case Op::Sin:
        return op2(Op::Mul, g, op1(Op::Cos, saved_value(0)));
    case Op::Cos:
        return op1(Op::Neg, op2(Op::Mul, g, op1(Op::Sin, saved_value(0))));
    case Op::Gelu:
        return op2(Op::Mul, g, op1(Op::GeluGrad, saved_value(0)));
    case Op::Silu: {
        const ValueId x = saved_value(0), sig = op1(Op::Sigmoid, x);
        const ValueId inner =
            op2(Op::Add, scalar(1.0f), op2(Op::Mul, x, op2(Op::Sub, scalar(1.0f), sig)));
        return op2(Op::Mul, g, op2(Op::Mul, sig, inner));
    }
    case Op::Neg:
        return op1(Op::Neg, g);
    case Op::Exp:
        return op2(Op::Mul, g, saved_value(0));
    case Op::Log:
        return op2(Op::Div, g, saved_value(0));
    case Op::Relu:
        return op2(Op::Mul, g, op1(Op::Step, saved_value(0)));
    case Op::Sigmoid: {
        const ValueId o = saved_value(0);
        return op2(Op::Mul, g, op2(Op::Mul, o, op2(Op::Sub, scalar(1.0f), o)));
    }
    case Op::Tanh: {
        const ValueId o = saved_value(0);
        return op2(Op::Mul, g, op2(Op::Sub, scalar(1.0f), op2(Op::Mul, o, o)));
    }
    case Op::Sqrt:
        return op2(Op::Div, op2(Op::Mul, g, scalar(0.5f)), saved_value(0));
    case Op::MatMul:
        return i == 0 ? emit_data(Op::MatMul, {g, transposed(saved_value(1))}, s)
                      : emit_data(Op::MatMul, {transposed(saved_value(0)), g}, s);
    case Op::Sum:
    case Op::Mean: {
        const Shape kept = reduced_shape(s, node.dims, true);
        const ValueId shaped = view_value(g, reshape_view(identity_view(values.at(g).shape), kept));
        Node& n = emit(Op::Expand, {shaped}, {s}, false);
        n.shape = s;
        if (node.op == Op::Sum) return n.outputs[0];
        const double count =
            static_cast<double>(element_count(s)) / static_cast<double>(element_count(kept));
        return op2(Op::Mul, n.outputs[0], scalar(static_cast<float>(1.0 / count)));
    }
    case Op::View: {
        const ValueId zeros =
            constant_value(s, std::vector<float>(static_cast<size_t>(element_count(s)), 0.0f));
        Node& n = emit(Op::StridedScatter, {zeros, g}, {s}, false);
        n.view = node.view;
        return n.outputs[0];
    }
    default:
        return g; // Copy
    }
}

void EngineState::run_backward(TensorId loss) {
    refuse_in_checkpoint("backward");
    TensorRec& l = tensors.at(loss);
    if (!l.requires_grad)
        fail(FailureCode::InvalidArgument, site,
             fmt::format("backward on '{}', which does not require grad", l.name));
    check_graph_alive(loss);
    const ValueId loss_value = resolve(loss);
    Node& job = global_effect(Op::BackwardJob, {loss_value}, "backward_job");
    job.detail = fmt::format("backward of '{}'", l.name);
    const ValueId seed = constant_value(
        shape_of(loss),
        std::vector<float>(static_cast<size_t>(element_count(shape_of(loss))), 1.0f));
    std::map<AutogradId, ValueId> grads;
    std::map<TensorId, ValueId> leaf_grads;
    const auto add_to = [&](auto& table, auto key, ValueId g) {
        auto [it, fresh] = table.emplace(key, g);
        if (!fresh) it->second = op2(Op::Add, it->second, g);
    };
    if (l.is_leaf)
        leaf_grads[loss] = seed;
    else
        grads[l.grad_fn] = seed;
    // Ids grow as ops are made, so descending ids are a reverse topological order.
    for (auto it = grads.rbegin(); it != grads.rend(); it = grads.rbegin()) {
        const auto [id, g] = *it;
        grads.erase(id);
        AutogradNode& node = autograd.at(id);
        for (TensorId t : node.retains)
            accumulate_grad(t, g);
        for (size_t i = 0; i < node.input_shapes.size(); ++i) {
            if (!node.input_fns[i] && !node.input_leaves[i]) continue;
            const ValueId gi = vjp(node, i, g);
            if (node.input_fns[i])
                add_to(grads, node.input_fns[i], gi);
            else
                add_to(leaf_grads, node.input_leaves[i], gi);
        }
        free_graph_node(node);
    }
    for (const auto& [t, g] : leaf_grads)
        accumulate_grad(t, g);
}

void EngineState::free_graph_node(AutogradNode& node) {
    node.freed = true;
    for (SavedSlotId id : node.saved) {
        SavedSlot& s = saved.at(id);
        if (s.value) drop(s.value);
        s.value = 0;
    }
}

// Before anything is emitted: a second backward through a node whose saved values the first
// one freed cannot compute its gradients (PyTorch's rule without retain_graph). Nodes that save
// nothing (views, adds) may be walked again.
void EngineState::check_graph_alive(TensorId loss) const {
    std::vector<AutogradId> stack = {tensors.at(loss).grad_fn};
    std::set<AutogradId> seen;
    while (!stack.empty()) {
        const AutogradId id = stack.back();
        stack.pop_back();
        if (id == 0 || !seen.insert(id).second) continue;
        const AutogradNode& node = autograd.at(id);
        if (node.freed && !node.saved.empty())
            raise(LazyError::BackwardGraphFreed, site,
                  fmt::format("backward of '{}' goes through {}, whose saved values an earlier "
                              "backward freed (its graph is used once)",
                              tensors.at(loss).name, op_name(node.op)));
        stack.insert(stack.end(), node.input_fns.begin(), node.input_fns.end());
    }
}

void EngineState::accumulate_grad(TensorId t, ValueId g) {
    TensorRec& r = tensors.at(t);
    const std::string name = (r.name.empty() ? fmt::format("#{}", t) : r.name) + ".grad";
    if (r.grad == 0) {
        const BaseId gb = new_base(shape_of(t), 0, name);
        BaseRec& b = bases.at(gb);
        b.binding = Binding::Loc;
        b.loc = new_loc(LocRole::GradState, gb);
        r.grad = new_tensor(gb, std::nullopt, false);
        tensors.at(r.grad).name = name;
        tensors.at(r.grad).escapes = true;
        loc_store(b.loc, g, false, fmt::format("first grad of {} at {}", name, site));
        return;
    }
    const BaseId gb = tensors.at(r.grad).base;
    const ValueId sum = op2(Op::Add, base_load(gb), g);
    base_store(gb, sum, fmt::format("accumulate {} at {}", name, site));
}

void EngineState::zero_grad(TensorId param, bool set_to_null) {
    TensorRec& r = tensors.at(param);
    if (r.grad == 0) return;
    const BaseId gb = tensors.at(r.grad).base;
    if (!set_to_null) {
        const Shape& s = bases.at(gb).shape;
        base_store(
            gb, constant_value(s, std::vector<float>(static_cast<size_t>(element_count(s)), 0.0f)),
            fmt::format("zero_grad at {}", site));
        return;
    }
    // Set to null (9.5): the grad loc is tombstoned in token order, so a load ordered before it
    // still reads the old grad and one after it is InvalidatedGradError.
    const LocId loc = bases.at(gb).loc;
    Node& n = emit(Op::LocInvalidate, {join_in(loc)}, {}, true, "loc_invalidate");
    n.loc = loc;
    n.tombstone = static_cast<uint8_t>(Tombstone::GradInvalidated);
    n.detail = fmt::format("zero_grad(set_to_null) at {}", site);
    advance(loc, n.outputs.back());
    dispose_now(r.grad);
    r.grad = 0;
}

} // namespace tmmu::lazy
