// Token algebra, the join rule and ordered loc access (seed 004, sections 3.1-3.3, 3.6).
#include "lazy/engine_state.h"

#include <fmt/format.h>

#include <algorithm>

namespace tmmu::lazy {

ValueId EngineState::after_all(std::vector<ValueId> tokens) {
    // Associative: a join's parts replace the join; commutative and idempotent: the parts are a
    // sorted set. Equal sets give the same token, so after_all(a, b) == after_all(b, a, a).
    std::vector<ValueId> parts;
    for (ValueId t : tokens) {
        auto it = join_parts.find(t);
        if (it == join_parts.end())
            parts.push_back(t);
        else
            parts.insert(parts.end(), it->second.begin(), it->second.end());
    }
    std::sort(parts.begin(), parts.end());
    parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
    if (parts.size() == 1) return parts[0];
    if (auto it = join_cache.find(parts); it != join_cache.end()) return it->second;
    const ValueId out = emit(Op::AfterAll, parts, {}, true, "after_all").outputs[0];
    join_parts[out] = parts;
    join_cache[parts] = out;
    return out;
}

ValueId EngineState::join_in(LocId loc) {
    auto it = tok_loc.find(loc);
    const ValueId tok_r = it == tok_loc.end() ? tok_global : it->second;
    return after_all({tok_global, tok_r});
}

void EngineState::advance(LocId loc, ValueId tok_out) {
    tok_global = tok_out;
    tok_loc[loc] = tok_out;
}

Node& EngineState::global_effect(Op op, std::vector<ValueId> data_inputs, const char* tag) {
    data_inputs.push_back(tok_global);
    Node& n = emit(op, std::move(data_inputs), {}, true, tag);
    tok_global = n.outputs.back();
    return n;
}

LocId EngineState::new_loc(LocRole role, BaseId base) {
    const LocId id = next_loc++;
    LocRec& l = locs[id];
    l.role = role;
    l.base = base;
    l.created_epoch = epoch;
    return id;
}

ValueId EngineState::loc_load(LocId loc, const Shape& shape) {
    const ValueId tok_in = join_in(loc);
    Node& n = emit(Op::LocLoad, {tok_in}, {shape}, true, "loc_load");
    n.loc = loc;
    advance(loc, n.outputs.back());
    return n.outputs[0];
}

ValueId EngineState::loc_store(LocId loc, ValueId value, bool materialize,
                               const std::string& what) {
    const ValueId tok_in = join_in(loc);
    LocRec& l = locs.at(loc);
    if (!materialize) ++l.logical_version; // semantic intent, at scheduling time (3.6)
    Node& n = emit(Op::LocStore, {value, tok_in}, {}, true, "loc_store");
    n.loc = loc;
    n.materialize = materialize;
    n.logical_version = l.logical_version;
    n.detail = fmt::format("{} store: {}", materialize ? "materialize" : "semantic", what);
    advance(loc, n.outputs.back());
    return n.outputs.back();
}

void EngineState::base_commit(BaseId base, const std::string& what) {
    Node& n = global_effect(Op::BaseCommit, {}, "base_commit");
    n.base = base;
    n.mut = next_mut++; // unique per semantic mutation (3.6)
    n.detail = fmt::format("mut{}: {}", n.mut, what);
}

} // namespace tmmu::lazy
