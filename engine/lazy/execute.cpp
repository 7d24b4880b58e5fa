// Running one planned node on the CPU and recording its events: pool acquire, the event itself,
// then the pool releases its inputs' last use causes.
#include "lazy/engine_state.h"
#include "lazy/kernels.h"

#include "plan/strategy.h"

#include <fmt/format.h>

#include <algorithm>

namespace tmmu::lazy {
namespace {

EventKind kind_of(Op op) {
    switch (op) {
    case Op::LocLoad:
        return EventKind::LocLoad;
    case Op::LocStore:
        return EventKind::LocStore;
    case Op::BaseCommit:
        return EventKind::BaseCommit;
    case Op::AfterAll:
        return EventKind::AfterAll;
    case Op::LocInvalidate:
        return EventKind::LocInvalidate;
    case Op::PublishSave:
        return EventKind::PublishSave;
    case Op::SavedCheck:
        return EventKind::SavedCheck;
    case Op::BackwardJob:
        return EventKind::BackwardJob;
    case Op::CompiledCall:
        return EventKind::CompiledCall;
    default:
        return EventKind::Op;
    }
}

} // namespace

StorageId EngineState::acquire_buffer(uint64_t elements, std::string_view what) {
    const auto got = pool.acquire(elements);
    PoolBuffer& b = pool.at(got.id);
    b.refs = 1;
    TraceEvent a;
    a.plan = current_plan;
    a.key = current_key + "+acquire";
    a.kind = EventKind::PoolAcquire;
    a.op = "pool_acquire";
    a.storage = static_cast<int64_t>(got.id);
    a.bytes = b.bytes;
    a.detail = got.reused ? "reused from the acquirable pool" : "new buffer";
    if (!what.empty()) a.detail += fmt::format(": {}", what);
    record(std::move(a));
    return got.id;
}

StorageId EngineState::acquire_output(ValueId v) {
    Value& out = values.at(v);
    const auto elements = static_cast<uint64_t>(element_count(out.shape));
    if (const auto at = arena_places.find(v); at != arena_places.end()) {
        out.storage = pool.part(running_arena, at->second / sizeof(float), elements);
        pool.at(out.storage).refs = 1;
        return out.storage; // the arena's acquire is the pool's event
    }
    out.storage = acquire_buffer(elements, {});
    return out.storage;
}

std::string EngineState::arena_part_at(StorageId id) const {
    const PoolBuffer& b = pool.at(id);
    if (b.arena == 0) return {};
    return fmt::format("in region arena s{} at +{} B", b.arena, b.offset * sizeof(float));
}

StorageId EngineState::run_pure(const Node& n) {
    const StorageId id = acquire_output(n.outputs[0]);
    std::vector<KernelInput> inputs;
    for (ValueId in : n.inputs) {
        const Value& v = values.at(in);
        inputs.push_back({pool.span(v.storage), &v.shape});
    }
    run_kernel(n, inputs, values.at(n.outputs[0]).shape, pool.span(id));
    ++kernels;
    return id;
}

void EngineState::store_into_loc(const Node& n, TraceEvent& e) {
    LocRec& l = locs.at(n.loc);
    const StorageId src = values.at(n.inputs[0]).storage;
    if (l.storage && l.storage != src && pool.at(l.storage).refs == 1 &&
        pool.at(l.storage).bytes == pool.at(src).bytes) {
        // Only the loc holds its buffer: write it in place, and bump its storageVersion exactly
        // once at this commit (5.3).
        PoolBuffer& dst = pool.at(l.storage);
        const std::span<const float> from = pool.span(src);
        std::copy(from.begin(), from.end(), dst.data.begin());
        ++dst.version;
        e.detail += fmt::format(" (in place, storageVersion {})", dst.version);
    } else {
        retain_storage(src);
        if (l.storage) release_storage(l.storage, fmt::format("loc L{} rebound", n.loc));
        l.storage = src;
    }
    l.version = n.planned_version;
    l.has_value = true;
    e.storage = static_cast<int64_t>(l.storage);
}

void EngineState::run_effect(Node& n, TraceEvent& e) {
    switch (n.op) {
    case Op::LocLoad: {
        const LocRec& l = locs.at(n.loc);
        values.at(n.outputs[0]).storage = l.storage;
        retain_storage(l.storage);
        e.storage = static_cast<int64_t>(l.storage);
        break;
    }
    case Op::LocStore:
        store_into_loc(n, e);
        break;
    case Op::LocInvalidate: {
        LocRec& l = locs.at(n.loc);
        l.tombstone = Tombstone(n.tombstone);
        if (l.storage) release_storage(l.storage, fmt::format("loc L{} invalidated", n.loc));
        l.storage = 0;
        break;
    }
    case Op::BaseCommit:
        bases.at(n.base).commit_version = n.planned_version;
        break;
    case Op::PublishSave: {
        SavedSlot& s = saved.at(n.slot);
        s.published = true;
        s.version = n.planned_version;
        break;
    }
    default:
        break;
    }
    if (n.loc) {
        e.loc = static_cast<int64_t>(n.loc);
        e.loc_version = n.op == Op::LocInvalidate ? locs.at(n.loc).version : n.planned_version;
        e.loc_logical_version =
            n.op == Op::LocStore ? n.logical_version : locs.at(n.loc).logical_version;
    }
    if (n.base) {
        e.base = static_cast<int64_t>(n.base);
        e.base_commit =
            n.op == Op::SavedCheck ? bases.at(n.base).commit_version : n.planned_version;
    }
}

void EngineState::note_values(const Node& n, TraceEvent& e) const {
    for (ValueId in : n.inputs) {
        const Value& v = values.at(in);
        (v.token ? e.tokens_in : e.values_in).push_back(in);
        (v.token ? e.token_from : e.data_from).push_back(v.event);
    }
    for (ValueId out : n.outputs)
        (values.at(out).token ? e.tokens_out : e.values_out).push_back(out);
}

void EngineState::execute(NodeId id) {
    execute_node(nodes.at(id));
}

void EngineState::execute_node(Node& n) {
    current_key = n.key.text();
    TraceEvent e;
    e.plan = current_plan;
    e.key = current_key;
    e.kind = kind_of(n.op);
    e.op = std::string(op_name(n.op));
    e.site = n.site;
    e.detail = n.detail;
    if (n.op == Op::CompiledCall) {
        run_call(n, e); // records the call, then its body's events
        return;
    }
    if (is_effect(n.op)) {
        run_effect(n, e);
    } else {
        e.storage = static_cast<int64_t>(run_pure(n));
        e.bytes = pool.at(static_cast<StorageId>(e.storage)).bytes;
        if (const std::string at = arena_part_at(static_cast<StorageId>(e.storage)); !at.empty())
            e.detail += (e.detail.empty() ? "" : ", ") + at;
    }
    note_values(n, e);
    n.done = true;
    const uint64_t index = record(std::move(e));
    for (ValueId out : n.outputs) {
        Value& v = values.at(out);
        v.ready = true;
        v.event = static_cast<int64_t>(index);
    }
    const std::vector<ValueId> inputs = n.inputs;
    for (ValueId in : inputs)
        drop(in);
    for (ValueId out : n.outputs)
        release_if_unread(out);
}

void EngineState::release_if_unread(ValueId id) {
    Value& v = values.at(id);
    if (!v.token && v.refs == 0 && v.storage) {
        release_storage(v.storage, fmt::format("v{} is never read", id));
        v.storage = 0;
    }
}

// The plan's buffers as an offset problem: lifetimes in event positions, solved by our planner
// beside what the pool held, so a run shows pool bytes against a planned arena (section 14).
void EngineState::summarize_memory(PlanRecord& plan, const std::vector<StorageId>& live_before) {
    std::map<StorageId, Buffer> lifetimes;
    const uint64_t length = plan.end_event - plan.first_event + 1;
    for (StorageId id : live_before)
        lifetimes[id] = {0, length, pool.at(id).bytes};
    for (uint64_t i = plan.first_event; i < plan.end_event; ++i) {
        const TraceEvent& e = trace.events[i];
        const auto id = static_cast<StorageId>(e.storage);
        if (e.kind == EventKind::PoolAcquire)
            lifetimes[id] = {i - plan.first_event, length, e.bytes};
        if (e.kind == EventKind::PoolRelease && lifetimes.count(id))
            lifetimes[id].end = std::max(lifetimes[id].begin + 1, i - plan.first_event + 1);
    }
    OffsetProblem problem;
    for (const auto& [id, b] : lifetimes)
        problem.buffers.push_back(b);
    plan.buffers = problem.buffers.size();
    plan.live_peak_bytes = lower_bound_bytes(problem);
    plan.planned_bytes = find_strategy("auto")->solve(problem, Progress{}).height;
    plan.pool_bytes = pool.held_bytes();
}

} // namespace tmmu::lazy
