// tidy / keep / dispose and the finalize queue (seed 004, 1.4), and the autograd entry points.
#include "lazy/engine_state.h"
#include "lazy/entry.h"

#include <fmt/format.h>

#include <algorithm>

namespace tmmu::lazy {

void EngineState::open_scope() {
    tidy_scopes.emplace_back();
}

// Kept tensors escape every scope; a returned one only this one: inside another scope it
// belongs to that scope from now on (as a tensor made there would), at the outermost it
// escapes for good. Everything else made here is disposed, even if a C++ handle still names
// it (DisposedTensorError on use, InvalidTraceTensorEscapeError for a compiled call's).
void EngineState::close_scope(std::span<const TensorId> returned, uint64_t trace_fn) {
    std::vector<TensorId> made = std::move(tidy_scopes.back());
    tidy_scopes.pop_back();
    for (TensorId id : made) {
        TensorRec& t = tensors.at(id);
        if (t.escapes) continue;
        if (std::find(returned.begin(), returned.end(), id) == returned.end()) {
            t.trace_fn = trace_fn;
            if (trace_fn)
                dispose_now(id);
            else
                dispose_or_defer(id);
        } else if (tidy_scopes.empty()) {
            t.escapes = true;
        } else {
            tidy_scopes.back().push_back(id);
        }
    }
}

Tensor Engine::tidy(const std::function<Tensor()>& fn) {
    s_->open_scope();
    Tensor out;
    try {
        out = fn();
    } catch (...) {
        s_->close_scope({});
        throw;
    }
    const TensorId returned[] = {out.valid() ? out.id() : 0};
    s_->close_scope(returned);
    return out;
}

Engine::TidyScope::TidyScope(Engine& e) : e_(e) {
    e.s_->open_scope();
}
Engine::TidyScope::~TidyScope() {
    e_.s_->close_scope({});
}

void Engine::keep(const Tensor& t) {
    Entry entry(*s_, "keep");
    s_->tensor(t).escapes = true;
}

void Engine::dispose(const Tensor& t) {
    // Cleanup-only (1.4): allowed on a poisoned engine; while a call is running (another
    // thread, or an observer inside a force) it is deferred to the finalize queue instead.
    if (!t.valid()) return;
    s_->check_handle(t);
    s_->dispose_or_defer(t.id());
}

void Engine::drain_finalize_queue() {
    CleanupLock lock(*s_, "drain_finalize_queue");
    if (lock.held()) s_->drain_finalize(); // else the holder drains on its way out
}

Engine::NoGrad::NoGrad(Engine& e) : e_(e), was_(e.s_->grad_enabled) {
    e.s_->grad_enabled = false;
}
Engine::NoGrad::~NoGrad() {
    e_.s_->grad_enabled = was_;
}

void Engine::backward(const Tensor& loss) {
    Entry entry(*s_, "backward");
    s_->tensor(loss);
    s_->begin_emission();
    s_->run_backward(loss.id());
    if (s_->eager_now()) s_->force({s_->tok_global}, "eager");
}

Tensor Engine::grad(const Tensor& t) {
    Entry entry(*s_, "grad");
    const TensorRec& r = s_->tensor(t);
    if (r.grad == 0) return {};
    // A fresh handle on the grad base: the tensor's own record stays with the tensor.
    const TensorId id = s_->new_tensor(s_->tensors.at(r.grad).base, std::nullopt);
    s_->tensors.at(id).name = s_->tensors.at(r.grad).name;
    return wrap(id);
}

void Engine::retain_grad(const Tensor& t) {
    Entry entry(*s_, "retain_grad");
    TensorRec& r = s_->tensor(t);
    if (!r.requires_grad)
        fail(FailureCode::InvalidArgument, s_->site,
             fmt::format("retain_grad on '{}', which does not require grad", r.name));
    if (r.is_leaf || r.retain_grad) return;
    r.retain_grad = true;
    s_->autograd.at(r.grad_fn).retains.push_back(t.id());
}

void Engine::zero_grad(std::span<const Tensor> params, bool set_to_null) {
    Entry entry(*s_, "zero_grad");
    s_->begin_emission();
    for (const Tensor& p : params) {
        s_->tensor(p);
        s_->zero_grad(p.id(), set_to_null);
    }
    if (s_->eager_now()) s_->force({s_->tok_global}, "eager");
}

} // namespace tmmu::lazy
