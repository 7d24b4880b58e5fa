#include "lazy/engine_state.h"

#include "core/assert.h"

#include <fmt/format.h>

namespace tmmu::lazy {

Tensor::Ref::~Ref() {
    // The finalizer safety net (1.4): only enqueue; the engine drains at safe points.
    if (auto q = queue.lock()) {
        std::lock_guard<std::mutex> guard(q->mutex);
        q->ids.push_back(id);
    }
}

EngineState::EngineState(Engine& e, EngineOptions o) : engine(e), options(o) {
    tok_global = new_value({}, true);
    values.at(tok_global).ready = true;
}

ValueId EngineState::new_value(const Shape& shape, bool token) {
    const ValueId id = next_value++;
    Value& v = values[id];
    v.shape = shape;
    v.token = token;
    return id;
}

void EngineState::hold(ValueId v) {
    ++values.at(v).refs;
}

void EngineState::drop(ValueId id) {
    Value& v = values.at(id);
    TMMU_ASSERT(v.refs > 0, "a value dropped more often than held");
    if (v.refs > 0) --v.refs;
    if (v.refs > 0 || v.storage == 0) return;
    release_storage(v.storage, fmt::format("v{} has no holder left", id));
    v.storage = 0;
}

void EngineState::retain_storage(StorageId id) {
    ++pool.at(id).refs;
}

void EngineState::release_storage(StorageId id, const std::string& why) {
    PoolBuffer& b = pool.at(id);
    if (--b.refs > 0) return;
    const bool part = b.arena != 0;
    const uint64_t bytes = b.bytes;
    pool.release(id);
    if (part) return; // a part of a region arena: the arena's release is the pool's event
    TraceEvent e;
    e.plan = current_plan;
    e.key = current_key.empty() ? fmt::format("cleanup/{}", cleanup_releases++)
                                : fmt::format("{}+release", current_key);
    e.kind = EventKind::PoolRelease;
    e.op = "pool_release";
    e.storage = static_cast<int64_t>(id);
    e.bytes = bytes;
    e.detail = "pendingRelease: " + why;
    record(std::move(e));
}

void EngineState::begin_emission() {
    ++graph_instance;
    ir_index = 0;
    synthetic_index = 0;
}

Node& EngineState::emit(Op op, std::vector<ValueId> inputs, std::vector<Shape> data_outputs,
                        bool token_out, const char* tag) {
    // A result too large to hold fails here, naming its shape, before anything is recorded.
    for (const Shape& s : data_outputs)
        (void)element_count(s);
    const NodeId id = next_node++;
    Node& n = nodes[id];
    n.op = op;
    n.site = site;
    if (tag) {
        // Synthetic events anchor on the emission's last ir node (3.4.2).
        n.key = {graph_instance, true, ir_index == 0 ? 0 : ir_index - 1, tag, synthetic_index++};
    } else {
        n.key = {graph_instance, false, ir_index++, {}, 0};
    }
    for (ValueId v : inputs)
        hold(v);
    n.inputs = std::move(inputs);
    for (const Shape& s : data_outputs)
        n.outputs.push_back(new_value(s, false));
    if (token_out) n.outputs.push_back(new_value({}, true));
    for (ValueId v : n.outputs)
        values.at(v).producer = id;
    if (open_checkpoint != 0 && !is_effect(op)) note_checkpoint_node(n);
    return n;
}

ValueId EngineState::emit_data(Op op, std::vector<ValueId> inputs, const Shape& out) {
    return emit(op, std::move(inputs), {out}, false).outputs[0];
}

ValueId EngineState::constant_value(const Shape& shape, std::vector<float> data) {
    Node& n = emit(Op::Constant, {}, {shape}, false);
    n.data = std::move(data);
    return n.outputs[0];
}

uint64_t EngineState::record(TraceEvent event) {
    event.index = trace.events.size();
    if (event.site.empty()) event.site = site;
    trace.events.push_back(std::move(event));
    if (observer) observer(trace.events.back());
    return trace.events.back().index;
}

void EngineState::poison(const std::string& why) {
    poisoned = true;
    poison_reason = why;
}

} // namespace tmmu::lazy
