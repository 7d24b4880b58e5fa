// Views (seed 004, section 4.2) and in-place mutation, including the lowering of a write
// through a view to a strided scatter into a copy of the base (4.3, 4.4).
#include "lazy/engine_state.h"
#include "lazy/entry.h"

#include <fmt/format.h>

namespace tmmu::lazy {

Tensor EngineState::view_op(const Tensor& a, const std::function<ViewMeta(const ViewMeta&)>& f,
                            const char* what) {
    Entry entry(*this, what);
    TensorRec& r = tensor(a);
    const Shape in_shape = shape_of(a.id());
    const ViewMeta parent = r.view ? *r.view : identity_view(bases.at(r.base).shape);
    const ViewMeta local = f(identity_view(in_shape)); // against a's own value (autograd)
    begin_emission();
    const TensorId out = new_tensor(r.base, f(parent));
    if (grad_enabled && tensors.at(a.id()).requires_grad)
        record_grad(out, Op::View, {a.id()}, {}, 0, &local, {}, false);
    return engine.wrap(out);
}

Tensor Engine::slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
    return s_->view_op(
        a, [&](const ViewMeta& v) { return slice_view(v, dim, start, end, step); }, "slice");
}

Tensor Engine::transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
    return s_->view_op(
        a, [&](const ViewMeta& v) { return transpose_view(v, dim0, dim1); }, "transpose");
}

Tensor Engine::reshape(const Tensor& a, const Shape& shape) {
    bool contiguous = true;
    {
        Entry entry(*s_, "reshape");
        const TensorRec& r = s_->tensor(a);
        contiguous = !r.view || r.view->is_contiguous();
    }
    // Only a contiguous view reshapes in place; anything else is reshaped from a copy.
    if (!contiguous) return reshape(copy(a), shape);
    return s_->view_op(
        a, [&](const ViewMeta& v) { return reshape_view(v, shape); }, "reshape");
}

void EngineState::in_place(const Tensor& t, const char* what,
                           const std::function<ValueId(const std::function<ValueId()>& current,
                                                       const Shape& shape)>& update) {
    Entry entry(*this, what);
    const TensorRec& r = tensor(t);
    if (grad_enabled && r.requires_grad)
        fail(FailureCode::InvalidArgument, site,
             fmt::format("{} on '{}', which requires grad: update parameters under NoGrad (an "
                         "optimizer step)",
                         what, r.name));
    begin_emission();
    const std::string desc = fmt::format("{} at {}", what, site);
    // The base is loaded only when the update reads it or a view needs the rest of it, so a
    // store that overwrites a whole pending base initialises it without a materialize (3.7).
    ValueId base_value = 0;
    const auto load_base = [&] { return base_value ? base_value : base_value = base_load(r.base); };
    const ValueId updated = update([&] { return resolve_with(r, load_base()); }, shape_of(t.id()));
    if (!r.view) {
        base_store(r.base, updated, desc);
    } else {
        // 4.4: base_load, copy, strided scatter of the view's new value, base_store.
        const Shape& shape = bases.at(r.base).shape;
        const ValueId base_copy = emit_data(Op::Copy, {load_base()}, shape);
        Node& n = emit(Op::StridedScatter, {base_copy, updated}, {shape}, false);
        n.view = *r.view;
        base_store(r.base, n.outputs[0], desc);
    }
    if (eager_now()) force({tok_global}, "eager");
}

ValueId EngineState::operand(const Tensor& x, const Shape& target, const char* what) {
    tensor(x);
    const Shape& xs = shape_of(x.id());
    if (broadcast_shapes(target, xs) != target)
        fail(FailureCode::InvalidArgument, site,
             fmt::format("{}: operand of shape {} does not broadcast to the target's {}", what,
                         shape_text(xs), shape_text(target)));
    return resolve(x.id());
}

void Engine::add_(const Tensor& t, const Tensor& x) {
    s_->binary_in_place(t, x, Op::Add, "add_");
}
void Engine::sub_(const Tensor& t, const Tensor& x) {
    s_->binary_in_place(t, x, Op::Sub, "sub_");
}
void Engine::mul_(const Tensor& t, const Tensor& x) {
    s_->binary_in_place(t, x, Op::Mul, "mul_");
}
void Engine::mul_(const Tensor& t, float x) {
    mul_(t, full({}, x));
}

void EngineState::binary_in_place(const Tensor& t, const Tensor& x, Op op, const char* what) {
    in_place(t, what, [&](const std::function<ValueId()>& current, const Shape& shape) {
        const ValueId cur = current();
        const ValueId xv = operand(x, shape, what);
        return emit_data(op, {cur, xv}, shape);
    });
}

void Engine::copy_(const Tensor& t, const Tensor& src) {
    s_->in_place(t, "copy_", [&](const std::function<ValueId()>&, const Shape& shape) {
        const ValueId sv = s_->operand(src, shape, "copy_");
        Node& n = s_->emit(Op::Expand, {sv}, {shape}, false);
        n.shape = shape;
        return n.outputs[0];
    });
}

void Engine::fill_(const Tensor& t, float value) {
    s_->in_place(t, "fill_", [&](const std::function<ValueId()>&, const Shape& shape) {
        return s_->constant_value(
            shape, std::vector<float>(static_cast<size_t>(element_count(shape)), value));
    });
}

} // namespace tmmu::lazy
