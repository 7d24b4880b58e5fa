// markStep (seed 004, section 6): force tokGlobal, promote, finalize bindings, retain reachable
// state, drain finalizers and sweep, then flush the pool, reset tokens and bump the epoch.
#include "lazy/engine_state.h"

#include <fmt/format.h>

namespace tmmu::lazy {

void EngineState::mark_step() {
    refuse_in_checkpoint("mark_step"); // it would compact the body's nodes before they are copied
    begin_emission();
    const uint64_t instance = graph_instance;
    current_key = fmt::format("g{}:s0/mark_step", instance);
    const auto phase = [&](int k, std::string detail) {
        TraceEvent e;
        e.key = fmt::format("g{}:s0/mark_step/{}", instance, k);
        e.kind = EventKind::MarkStep;
        e.op = fmt::format("mark_step.{}", k);
        e.detail = std::move(detail);
        record(std::move(e));
    };

    // 0: everything threaded on tokGlobal (stores, commits, backward jobs, grads).
    const size_t before = trace.events.size();
    force({tok_global}, fmt::format("mark_step at {}", site));
    current_key = fmt::format("g{}:s0/mark_step", instance); // force() moved it
    phase(0, fmt::format("forced {} events on tokGlobal", trace.events.size() - before));

    // 1: promotion by capture: a realized SSA base keeps its buffer, its recipe goes (below).
    uint64_t captured = 0;
    for (const auto& [id, b] : bases)
        if (b.binding == Binding::Ssa && b.value && values.at(b.value).ready) ++captured;
    phase(1, fmt::format("{} SSA bases captured realized storage", captured));

    // 2: a pending loc that now holds a value becomes the base's binding.
    uint64_t bound = 0;
    for (auto& [id, b] : bases) {
        if (b.binding != Binding::PendingLoc || !locs.at(b.loc).has_value) continue;
        b.binding = Binding::Loc;
        ++b.binding_version;
        if (b.seed) drop(b.seed);
        b.seed = 0;
        ++bound;
    }
    phase(2, fmt::format("{} pending locs finalized", bound));

    // 3: reachable persistent state keeps its storage.
    uint64_t retained = 0;
    for (const auto& [id, l] : locs)
        if (l.storage && bases.at(l.base).pins > 0) ++retained;
    phase(3, fmt::format("{} locs retained", retained));

    // 4: finalizers, then unreachable locs and executed nodes go.
    const uint64_t drained = finalized;
    drain_finalize();
    uint64_t freed = 0;
    for (auto& [id, l] : locs) {
        if (!l.storage || bases.at(l.base).pins > 0) continue;
        release_storage(l.storage, fmt::format("loc L{} unreachable", id));
        l.storage = 0;
        l.tombstone = Tombstone::Internal;
        ++freed;
    }
    uint64_t swept = 0;
    for (auto it = nodes.begin(); it != nodes.end();) {
        if (!it->second.done) {
            ++it;
            continue;
        }
        if (it->second.op == Op::CompiledCall) calls.erase(it->second.call);
        it = nodes.erase(it);
        ++swept;
    }
    phase(4, fmt::format("{} handles finalized, {} locs freed, {} executed nodes swept",
                         finalized - drained, freed, swept));

    // 5: pendingRelease becomes acquirable only now; tokens restart; next epoch.
    uint32_t i = 0;
    for (StorageId id : pool.flush()) {
        TraceEvent e;
        e.key = fmt::format("g{}:s0/pool_flush/{}", instance, i++);
        e.kind = EventKind::PoolFlush;
        e.op = "pool_flush";
        e.storage = static_cast<int64_t>(id);
        e.bytes = pool.at(id).bytes;
        e.detail = "pendingRelease -> acquirable at the end of the step";
        record(std::move(e));
    }
    tok_global = new_value({}, true);
    values.at(tok_global).ready = true;
    tok_loc.clear();
    join_parts.clear();
    join_cache.clear();
    for (auto& [id, b] : bases)
        b.mutated_since_step = false;
    ++epoch;
    ++steps;
    current_key.clear();
    phase(5, fmt::format("{} buffers acquirable; tokens reset; epoch {}", i, epoch));
}

} // namespace tmmu::lazy
