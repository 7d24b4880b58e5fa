// The engine's public entry points: each takes the execution lock, drains the finalize queue on
// the way in and out (1.4's safe points), and emits lazy nodes.
#include "lazy/engine_state.h"
#include "lazy/entry.h"
#include "lazy/kernels.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

namespace tmmu::lazy {
namespace {

std::string label(const TensorRec& r, TensorId id) {
    return r.name.empty() ? fmt::format("#{}", id) : r.name;
}

} // namespace

TensorId Tensor::id() const {
    return ref_ ? ref_->id : 0;
}

std::string_view loc_role_name(LocRole r) {
    switch (r) {
    case LocRole::TensorState:
        return "tensor_state";
    case LocRole::GradState:
        return "grad_state";
    case LocRole::RngState:
        return "rng_state";
    case LocRole::EngineState:
        return "engine_state";
    case LocRole::SavedState:
        return "saved_state";
    case LocRole::InternalScratch:
        return "internal_scratch";
    }
    return "unknown";
}

std::string TensorInfo::describe() const {
    return fmt::format("Tensor({}{} shape={} base=B{} {}{}{})", name.empty() ? "" : name + " ",
                       fmt::format("#{}", id), shape_text(shape), base, binding,
                       is_view ? " view" : "", requires_grad ? " requires_grad" : "") +
           (disposed ? " disposed" : "");
}

Engine::Engine(EngineOptions options) : s_(std::make_unique<EngineState>(*this, options)) {}
Engine::~Engine() = default;

Tensor Engine::wrap(TensorId id) {
    // Each id is wrapped once, when its record is made: one Ref per tensor, so the finalizer
    // fires when the last copy of that handle goes.
    auto ref = std::make_shared<Tensor::Ref>();
    ref->queue = s_->finalize;
    ref->id = id;
    return Tensor(ref);
}

void Engine::set_site(std::string site) {
    s_->site = std::move(site);
}
void Engine::set_observer(std::function<void(const TraceEvent&)> o) {
    s_->observer = std::move(o);
}

// A pure op's result: a fresh SSA base and a handle on it, recorded for autograd when an input
// needs grad, run at once in eager mode.
Tensor EngineState::pure_op(Op op, const std::vector<Tensor>& args, const Shape& out_shape,
                            const std::vector<int64_t>& dims, bool keepdim) {
    std::vector<TensorId> ids;
    std::vector<ValueId> vals;
    for (const Tensor& a : args) {
        tensor(a);
        ids.push_back(a.id());
    }
    for (TensorId id : ids)
        vals.push_back(resolve(id));
    Node& n = emit(op, vals, {out_shape}, false);
    n.dims = dims;
    n.keepdim = keepdim;
    const ValueId v = n.outputs[0];
    const TensorId out = new_tensor(new_base(out_shape, v, {}), std::nullopt);
    bool needs_grad = false;
    for (TensorId t : ids)
        needs_grad = needs_grad || tensors.at(t).requires_grad;
    if (grad_enabled && needs_grad && !is_comparison(op))
        record_grad(out, op, ids, vals, v, nullptr, dims, keepdim);
    if (eager_now()) force({v}, "eager");
    return engine.wrap(out);
}

Tensor Engine::constant(const Shape& shape, std::vector<float> values, std::string name) {
    Entry entry(*s_, "constant");
    if (static_cast<int64_t>(values.size()) != element_count(shape))
        fail(FailureCode::InvalidArgument, s_->site,
             fmt::format("{} values for shape {} ({} elements)", values.size(), shape_text(shape),
                         element_count(shape)));
    s_->begin_emission();
    const ValueId v = s_->constant_value(shape, std::move(values));
    const TensorId id = s_->new_tensor(s_->new_base(shape, v, name), std::nullopt);
    s_->tensors.at(id).name = std::move(name);
    if (s_->eager_now()) s_->force({v}, "eager");
    return wrap(id);
}

Tensor Engine::full(const Shape& shape, float value, std::string name) {
    return constant(shape, std::vector<float>(static_cast<size_t>(element_count(shape)), value),
                    std::move(name));
}

Tensor Engine::parameter(const Shape& shape, std::vector<float> values, std::string name) {
    Tensor t = constant(shape, std::move(values), name);
    Entry entry(*s_, "parameter");
    TensorRec& r = s_->tensors.at(t.id());
    r.requires_grad = r.is_leaf = true;
    s_->externalize(r.base, LocRole::TensorState);
    return t;
}

void Engine::set_name(const Tensor& t, std::string name) {
    Entry entry(*s_, "set_name");
    TensorRec& r = s_->tensor(t);
    BaseRec& b = s_->bases.at(r.base);
    if (b.name.empty() && !r.view) b.name = name;
    r.name = std::move(name);
}

Tensor Engine::add(const Tensor& a, const Tensor& b) {
    return binary_op(Op::Add, a, b);
}
Tensor Engine::sub(const Tensor& a, const Tensor& b) {
    return binary_op(Op::Sub, a, b);
}
Tensor Engine::mul(const Tensor& a, const Tensor& b) {
    return binary_op(Op::Mul, a, b);
}
Tensor Engine::div(const Tensor& a, const Tensor& b) {
    return binary_op(Op::Div, a, b);
}
Tensor Engine::maximum(const Tensor& a, const Tensor& b) {
    return binary_op(Op::Maximum, a, b);
}
Tensor Engine::add(const Tensor& a, float x) {
    return binary_op(Op::Add, a, full({}, x));
}
Tensor Engine::mul(const Tensor& a, float x) {
    return binary_op(Op::Mul, a, full({}, x));
}
Tensor Engine::neg(const Tensor& a) {
    return unary_op(Op::Neg, a);
}
Tensor Engine::exp(const Tensor& a) {
    return unary_op(Op::Exp, a);
}
Tensor Engine::log(const Tensor& a) {
    return unary_op(Op::Log, a);
}
Tensor Engine::relu(const Tensor& a) {
    return unary_op(Op::Relu, a);
}
Tensor Engine::sigmoid(const Tensor& a) {
    return unary_op(Op::Sigmoid, a);
}
Tensor Engine::tanh(const Tensor& a) {
    return unary_op(Op::Tanh, a);
}
Tensor Engine::sqrt(const Tensor& a) {
    return unary_op(Op::Sqrt, a);
}

Tensor Engine::unary(std::string_view op, const Tensor& a) {
    const std::optional<Op> found = public_elementwise_op(op);
    if (!found || is_binary(*found))
        fail(FailureCode::InvalidArgument, std::string(op), "is not a unary elementwise op");
    return unary_op(*found, a);
}

Tensor Engine::binary(std::string_view op, const Tensor& a, const Tensor& b) {
    const std::optional<Op> found = public_elementwise_op(op);
    if (!found || !is_binary(*found))
        fail(FailureCode::InvalidArgument, std::string(op), "is not a binary elementwise op");
    return binary_op(*found, a, b);
}

Tensor Engine::unary_op(Op op, const Tensor& a) {
    Entry entry(*s_, op_name(op).data());
    s_->begin_emission();
    s_->tensor(a);
    return s_->pure_op(op, {a}, s_->shape_of(a.id()), {}, false);
}

Tensor Engine::binary_op(Op op, const Tensor& a, const Tensor& b) {
    Entry entry(*s_, op_name(op).data());
    s_->tensor(a);
    s_->tensor(b);
    const Shape out = broadcast_shapes(s_->shape_of(a.id()), s_->shape_of(b.id()));
    s_->begin_emission();
    return s_->pure_op(op, {a, b}, out, {}, false);
}

Tensor Engine::matmul(const Tensor& a, const Tensor& b) {
    Entry entry(*s_, "matmul");
    s_->tensor(a);
    s_->tensor(b);
    const Shape& sa = s_->shape_of(a.id());
    const Shape& sb = s_->shape_of(b.id());
    if (sa.size() != 2 || sb.size() != 2 || sa[1] != sb[0])
        fail(FailureCode::InvalidArgument, s_->site,
             fmt::format("matmul needs [m, k] x [k, n], got {} x {}", shape_text(sa),
                         shape_text(sb)));
    s_->begin_emission();
    return s_->pure_op(Op::MatMul, {a, b}, {sa[0], sb[1]}, {}, false);
}

Tensor Engine::sum(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
    Entry entry(*s_, "sum");
    s_->tensor(a);
    const Shape out = reduced_shape(s_->shape_of(a.id()), dims, keepdim);
    s_->begin_emission();
    return s_->pure_op(Op::Sum, {a}, out, dims, keepdim);
}

Tensor Engine::mean(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
    Entry entry(*s_, "mean");
    s_->tensor(a);
    const Shape out = reduced_shape(s_->shape_of(a.id()), dims, keepdim);
    s_->begin_emission();
    return s_->pure_op(Op::Mean, {a}, out, dims, keepdim);
}

Tensor Engine::copy(const Tensor& a) {
    Entry entry(*s_, "copy");
    s_->tensor(a);
    s_->begin_emission();
    return s_->pure_op(Op::Copy, {a}, s_->shape_of(a.id()), {}, false);
}

std::vector<float> Engine::read(const Tensor& t) {
    Entry entry(*s_, "read");
    s_->refuse_in_staging("a host read", LazyError::HostReadInCompile);
    const TensorRec& r = s_->tensor(t);
    s_->begin_emission();
    const ValueId v = s_->resolve(t.id());
    s_->hold(v);
    s_->force({v}, fmt::format("read {} at {}", label(r, t.id()), s_->site));
    std::vector<float> out = s_->host_data(v);
    s_->drop(v);
    return out;
}

float Engine::item(const Tensor& t) {
    const std::vector<float> v = read(t);
    if (v.size() != 1)
        fail(FailureCode::InvalidArgument, s_->site,
             fmt::format("item of a tensor with {} elements: read it instead", v.size()));
    return v.front();
}

void Engine::mark_step() {
    Entry entry(*s_, "mark_step");
    s_->refuse_in_staging("mark_step", LazyError::AsyncInCompile);
    s_->mark_step();
}

TensorInfo Engine::info(const Tensor& t) const {
    s_->check_handle(t);
    TensorInfo i;
    i.id = t.id();
    const TensorRec& r = s_->tensors.at(t.id());
    const BaseRec& b = s_->bases.at(r.base);
    i.name = r.name;
    i.shape = s_->shape_of(t.id());
    i.base = r.base;
    i.is_view = r.view.has_value();
    i.requires_grad = r.requires_grad;
    i.is_leaf = r.is_leaf;
    i.disposed = r.disposed;
    i.binding = b.binding == Binding::Ssa          ? std::string("ssa")
                : b.binding == Binding::PendingLoc ? fmt::format("pending_loc(L{})", b.loc)
                                                   : fmt::format("loc(L{})", b.loc);
    return i;
}

const Trace& Engine::trace() const {
    return s_->trace;
}
bool Engine::poisoned() const {
    return s_->poisoned;
}

EngineStats Engine::stats() const {
    EngineStats st;
    st.events = s_->trace.events.size();
    st.plans = s_->trace.plans.size();
    st.steps = s_->steps;
    st.pool_peak_bytes = s_->pool.peak_bytes();
    for (const PlanRecord& p : s_->trace.plans)
        st.planned_peak_bytes = std::max(st.planned_peak_bytes, p.planned_bytes);
    st.buffers_allocated = s_->pool.allocated();
    st.buffers_reused = s_->pool.reused();
    st.finalized = s_->finalized;
    st.checkpoints = s_->next_checkpoint - 1;
    st.recomputed_ops = s_->recomputed_ops;
    st.kernels = s_->kernels;
    st.compiled_calls = s_->next_call - 1;
    st.cache_hits = s_->cache_hits;
    st.cache_misses = s_->cache_misses;
    st.fused_groups = s_->fused_groups;
    st.fused_ops = s_->fused_ops;
    st.compiled_planned_bytes = s_->compiled_planned_bytes;
    return st;
}

} // namespace tmmu::lazy
