// Mutation inside a compiled call, functionalized (seed 004, 8.10 and 8.11). A call runs whole,
// so nothing outside it can observe a loc between two of its accesses: a load after the body
// stored the loc reads the stored SSA value instead, and the loc is written once, at the
// call's exit, with the value of the body's last store (its writeback), after every other
// effect of the body. Each in-place op still commits its own base_commit in program order, so
// base commit versions, and every saved-tensor check (a save published inside the body
// included), are those of the uncompiled program; a loc's committed version counts the
// writebacks.
#include "lazy/engine_state.h"

#include <fmt/format.h>

namespace tmmu::lazy {
namespace {

// Locs the body may functionalize: none invalidated in the body, and no load after a store of
// the body whose value something outside holds (it would see the loc's storage, which the
// writeback has not written yet).
std::set<LocId> functional_locs(const std::vector<Node>& body,
                                const std::map<ValueId, Value>& values) {
    std::map<ValueId, size_t> reads;
    for (const Node& n : body)
        for (ValueId v : n.inputs)
            ++reads[v];
    std::set<LocId> stored, refused, out;
    for (const Node& n : body) {
        if (n.op == Op::LocInvalidate) refused.insert(n.loc);
        if (n.op == Op::LocStore) stored.insert(n.loc);
        if (n.op == Op::LocLoad && stored.count(n.loc) &&
            values.at(n.outputs[0]).refs > reads[n.outputs[0]])
            refused.insert(n.loc);
    }
    for (LocId l : stored)
        if (!refused.count(l)) out.insert(l);
    return out;
}

} // namespace

std::string EngineState::functionalize(std::vector<Node>& body) {
    const std::set<LocId> locs_ok = functional_locs(body, values);
    if (locs_ok.empty()) return {};
    std::map<LocId, size_t> last_store;
    for (size_t k = 0; k < body.size(); ++k)
        if (body[k].op == Op::LocStore && locs_ok.count(body[k].loc)) last_store[body[k].loc] = k;
    // What each dropped node's outputs become: a forwarded load's value the stored one, a dropped
    // node's token its own input token. Body order is topological, so a replacement is final
    // by the time a later node reads it.
    std::map<ValueId, ValueId> replaced;
    std::map<LocId, ValueId> current; // the value the body last stored to each loc
    std::vector<Node> kept, writebacks;
    uint64_t forwarded = 0, elided = 0;
    for (size_t k = 0; k < body.size(); ++k) {
        Node& n = body[k];
        for (ValueId& in : n.inputs) {
            const auto r = replaced.find(in);
            if (r == replaced.end()) continue;
            hold(r->second);
            drop(in);
            in = r->second;
        }
        const bool functional = locs_ok.count(n.loc) > 0;
        const bool forward = functional && n.op == Op::LocLoad && current.count(n.loc);
        const bool stored = functional && n.op == Op::LocStore; // leaves its place either way
        if (stored) current[n.loc] = n.inputs[0];
        if (!forward && !stored) {
            kept.push_back(std::move(n));
            continue;
        }
        if (forward) replaced[n.outputs[0]] = current.at(n.loc);
        replaced[n.outputs.back()] = n.inputs.back(); // the token passes through
        if (stored && last_store[n.loc] == k) {
            writebacks.push_back(std::move(n)); // keeps holding its value
            continue;
        }
        for (ValueId in : n.inputs)
            drop(in);
        forward ? ++forwarded : ++elided;
    }
    body = std::move(kept);
    const auto resolve_token = [&](ValueId& t) {
        if (const auto r = replaced.find(t); r != replaced.end()) t = r->second;
    };
    resolve_token(tok_global);
    for (auto& [loc, t] : tok_loc)
        resolve_token(t);
    // The writebacks, in the order of the stores they keep, each after everything before it.
    for (Node& w : writebacks) {
        drop(w.inputs.back());
        w.inputs.back() = tok_global;
        hold(tok_global);
        w.outputs.back() = new_value({}, true);
        tok_global = tok_loc[w.loc] = w.outputs.back();
        body.push_back(std::move(w));
    }
    return fmt::format("{} loads forwarded, {} stores folded into writebacks at the exit",
                       forwarded, elided);
}

} // namespace tmmu::lazy
