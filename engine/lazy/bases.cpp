// BaseId bindings (seed 004, 2.2, 3.7), tensor handles and their cleanup (1.4).
#include "lazy/engine_state.h"
#include "lazy/entry.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

namespace tmmu::lazy {

BaseId EngineState::new_base(const Shape& shape, ValueId value, std::string name) {
    const BaseId id = next_base++;
    BaseRec& b = bases[id];
    b.shape = shape;
    b.name = std::move(name);
    b.value = value;
    if (value) hold(value);
    return id;
}

ValueId EngineState::base_load(BaseId id) {
    BaseRec& b = bases.at(id);
    if (b.binding == Binding::Ssa) return b.value;
    if (b.binding == Binding::PendingLoc && b.init_tok == 0) {
        // ensure_initialized (3.7): the seed goes in by a materialize store, and the load
        // below is ordered after its token by the join rule (tokLoc[loc] is that token).
        loc_store(b.loc, b.seed, true, fmt::format("initialize {}", b.name));
        b.init_tok = tok_loc.at(b.loc);
    }
    return loc_load(b.loc, b.shape);
}

void EngineState::base_store(BaseId id, ValueId value, const std::string& what) {
    BaseRec& b = bases.at(id);
    b.mutated_since_step = true;
    if (b.binding == Binding::Ssa) {
        // Externalize on mutation (4.3): the frozen seed is the SSA value before rebinding.
        ++b.logical_version;
        const LocId loc = new_loc(LocRole::TensorState, id);
        b.binding = Binding::PendingLoc;
        b.loc = loc;
        b.seed = b.value;
        b.value = 0;
        ++b.binding_version;
    }
    const ValueId tok = loc_store(b.loc, value, false, what);
    // A semantic store that comes before any load initializes the pending loc: no materialize
    // store is needed (the initializer subsumption rule of 3.7).
    if (b.binding == Binding::PendingLoc && b.init_tok == 0) b.init_tok = tok;
    base_commit(id, what);
}

void EngineState::externalize(BaseId id, LocRole role) {
    BaseRec& b = bases.at(id);
    b.loc = new_loc(role, id);
    b.binding = Binding::PendingLoc;
    b.seed = b.value;
    b.value = 0;
    ++b.binding_version;
}

TensorId EngineState::new_tensor(BaseId base, std::optional<ViewMeta> view, bool in_scope) {
    const TensorId id = next_tensor++;
    TensorRec& t = tensors[id];
    t.base = base;
    t.view = std::move(view);
    ++bases.at(base).pins;
    if (in_scope && !tidy_scopes.empty()) tidy_scopes.back().push_back(id);
    return id;
}

void EngineState::check_handle(const Tensor& t) const {
    if (!t.valid()) fail(FailureCode::InvalidArgument, site, "an empty tensor handle");
    if (t.ref_->queue.lock() != finalize)
        fail(FailureCode::InvalidArgument, site,
             fmt::format("tensor #{} belongs to another engine", t.id()));
}

TensorRec& EngineState::tensor(const Tensor& t) {
    check_handle(t);
    TensorRec& r = tensors.at(t.id());
    if (r.disposed && r.trace_fn)
        raise(LazyError::InvalidTraceTensorEscape, site,
              fmt::format("tensor {} was made while compiled '{}' staged and not returned by it: "
                          "it was disposed when the call returned (return it to use it)",
                          r.name.empty() ? fmt::format("#{}", t.id()) : "'" + r.name + "'",
                          compiled_fns.at(r.trace_fn).name));
    if (r.disposed)
        raise(LazyError::DisposedTensor, site,
              fmt::format("tensor {} was disposed (by dispose, or at the end of the tidy scope "
                          "that made it)",
                          r.name.empty() ? fmt::format("#{}", t.id()) : "'" + r.name + "'"));
    return r;
}

const Shape& EngineState::shape_of(TensorId id) {
    const TensorRec& t = tensors.at(id);
    return t.view ? t.view->shape : bases.at(t.base).shape;
}

ValueId EngineState::resolve_with(const TensorRec& t, ValueId base_value) {
    if (!t.view) return base_value;
    Node& n = emit(Op::View, {base_value}, {t.view->shape}, false);
    n.view = *t.view;
    return n.outputs[0];
}

ValueId EngineState::resolve(TensorId id) {
    const TensorRec& t = tensors.at(id);
    return resolve_with(t, base_load(t.base));
}

void EngineState::dispose_now(TensorId id) {
    TensorRec& t = tensors.at(id);
    if (t.disposed) return; // idempotent
    t.disposed = true;
    if (t.grad) dispose_now(t.grad); // the tensor's own record of its grad goes with it
    t.grad = 0;
    BaseRec& b = bases.at(t.base);
    if (--b.pins > 0) return;
    // The last handle of a base: what only the base held has no holder left. A pending loc's
    // seed is held by any initializer already emitted; a loc-backed base's storage stays until
    // mark_step's retention pass finds the base unreachable (6.4).
    if (b.binding == Binding::Ssa && b.value) drop(b.value);
    if (b.binding == Binding::Ssa) b.value = 0;
    if (b.binding == Binding::PendingLoc && b.seed) drop(b.seed);
    if (b.binding == Binding::PendingLoc) b.seed = 0;
}

void EngineState::dispose_or_defer(TensorId id) {
    CleanupLock lock(*this, "dispose");
    if (lock.held()) {
        dispose_now(id);
        return;
    }
    std::lock_guard<std::mutex> guard(finalize->mutex);
    finalize->ids.push_back(id);
}

void EngineState::drain_finalize() {
    // One at a time: if cleanup throws (an observer did), the rest stays queued.
    for (;;) {
        TensorId id = 0;
        {
            std::lock_guard<std::mutex> guard(finalize->mutex);
            if (finalize->ids.empty()) return;
            id = finalize->ids.front();
            finalize->ids.pop_front();
        }
        if (!tensors.at(id).disposed) ++finalized;
        dispose_now(id);
    }
}

} // namespace tmmu::lazy
