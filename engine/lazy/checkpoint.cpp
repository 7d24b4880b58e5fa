// Non-reentrant checkpointing with whole-body replay (seed 004, section 10).
//
// While a body is recorded, save_for_backward keeps no value: it notes which forward value a
// slot stands for. The values the body's pure ops read but did not make are held, and when the
// body ends its nodes are copied. At backward, the first use of one of its slots replays the
// body: a clone of every pure node the saved values depend on, in recording order, on the held
// values, random draws with their recorded keys (11.7: nothing reserves a draw nonce again, so
// the RNG state ends as without checkpointing). The kernels are the forward's, so the
// recomputed values, and every gradient, have the forward's bits.
#include "lazy/engine_state.h"
#include "lazy/entry.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tmmu::lazy {

void EngineState::begin_checkpoint() {
    if (open_checkpoint != 0)
        raise(LazyError::CheckpointReentrancy, site,
              fmt::format("a checkpoint inside the checkpointed body begun at {}: bodies do "
                          "not nest",
                          checkpoints.at(open_checkpoint).site));
    open_checkpoint = next_checkpoint++;
    checkpoints[open_checkpoint].site = site;
    checkpoint_first_node = next_node;
}

// A load's value is read, not made, by the replay: only pure nodes make values.
void EngineState::note_checkpoint_node(const Node& n) {
    CheckpointRegion& r = checkpoints.at(open_checkpoint);
    for (ValueId v : n.inputs)
        if (!r.made.count(v) && r.external.insert(v).second) hold(v);
    r.made.insert(n.outputs.begin(), n.outputs.end());
}

void EngineState::end_checkpoint() {
    CheckpointRegion& r = checkpoints.at(open_checkpoint);
    open_checkpoint = 0;
    r.made.clear();
    const auto record = [&](const Node& n) {
        std::vector<Shape> outputs;
        for (ValueId v : n.outputs)
            outputs.push_back(values.at(v).shape);
        r.body.push_back({n, std::move(outputs)});
    };
    // A compiled call in the body (readonly, 10.6) is recorded as its body's nodes: a replay
    // makes the values it needs with plain kernels, the same bits as the fused ones.
    for (auto it = nodes.lower_bound(checkpoint_first_node); it != nodes.end(); ++it) {
        if (it->second.op != Op::CompiledCall) {
            record(it->second);
            continue;
        }
        for (const Node& n : calls.at(it->second.call).body)
            record(n);
    }
}

void EngineState::refuse_in_checkpoint(const char* what) const {
    if (open_checkpoint != 0)
        fail(FailureCode::InvalidArgument, site,
             fmt::format("{} inside the checkpointed body begun at {}: end the body first", what,
                         checkpoints.at(open_checkpoint).site));
}

// Loads are read, not replayed; a materializing store initialised a parameter in the forward and
// is not replayed either (the load after it is a held value).
bool EngineState::writes_persistent_state(const Node& n) const {
    switch (n.op) {
    case Op::LocStore:
        return !n.materialize && locs.at(n.loc).role != LocRole::InternalScratch;
    case Op::BaseCommit:
    case Op::LocInvalidate:
        return true;
    default:
        return false;
    }
}

void EngineState::recompute(uint64_t region) {
    CheckpointRegion& r = checkpoints.at(region);
    for (const CheckpointRegion::Recorded& rec : r.body)
        if (writes_persistent_state(rec.node))
            raise(LazyError::CheckpointImpureRegion, rec.node.site,
                  fmt::format("backward would replay the checkpointed body begun at {}, which "
                              "writes persistent state ({}: {}); a checkpointed body must be "
                              "pure",
                              r.site, op_name(rec.node.op), rec.node.detail));
    // The pure nodes the saved values depend on: a clone that nothing forces would hold its
    // inputs until the step ends.
    std::set<ValueId> needed;
    for (SavedSlotId id : r.slots)
        needed.insert(saved.at(id).recorded);
    std::vector<bool> replay(r.body.size(), false);
    for (size_t k = r.body.size(); k-- > 0;) {
        const Node& n = r.body[k].node;
        if (is_effect(n.op) || std::none_of(n.outputs.begin(), n.outputs.end(),
                                            [&](ValueId v) { return needed.count(v) > 0; }))
            continue;
        replay[k] = true;
        needed.insert(n.inputs.begin(), n.inputs.end());
    }
    std::map<ValueId, ValueId> replayed;
    for (size_t k = 0; k < r.body.size(); ++k) {
        if (!replay[k]) continue;
        const CheckpointRegion::Recorded& rec = r.body[k];
        const Node& n = rec.node;
        std::vector<ValueId> inputs;
        for (ValueId v : n.inputs) {
            const auto it = replayed.find(v);
            inputs.push_back(it == replayed.end() ? v : it->second);
        }
        // Ir nodes of the backward, numbered where backward first needs them, so PlanLinearOrder
        // runs them then, not before every other ready node (synthetic keys sort after the
        // ir ones: the whole replay would run first, and its values stay live meanwhile).
        Node& c = emit(n.op, std::move(inputs), rec.outputs, false);
        c.dims = n.dims;
        c.keepdim = n.keepdim;
        c.view = n.view;
        c.shape = n.shape;
        c.data = n.data;
        c.rng = n.rng;
        c.detail = fmt::format("recompute of the body begun at {}{}", r.site,
                               n.detail.empty() ? "" : ": " + n.detail);
        for (size_t o = 0; o < n.outputs.size(); ++o)
            replayed[n.outputs[o]] = c.outputs[o];
        ++recomputed_ops;
    }
    for (SavedSlotId id : r.slots) { // a value the body read (x of x @ w) is its held self
        SavedSlot& s = saved.at(id);
        const auto it = replayed.find(s.recorded);
        s.value = it == replayed.end() ? s.recorded : it->second;
        hold(s.value);
    }
    for (ValueId v : r.external) // the clones hold what they read
        drop(v);
    r.external.clear();
    r.replayed = true;
}

Tensor Engine::checkpoint(const std::function<Tensor()>& body) {
    if (s_->options.checkpoint == CheckpointPolicy::Keep) return body();
    {
        Entry entry(*s_, "checkpoint");
        s_->refuse_in_staging("a checkpointed body");
        s_->begin_checkpoint();
    }
    Tensor out;
    try {
        out = body();
    } catch (...) {
        Entry entry(*s_, "checkpoint");
        s_->end_checkpoint();
        throw;
    }
    Entry entry(*s_, "checkpoint");
    s_->end_checkpoint();
    return out;
}

} // namespace tmmu::lazy
