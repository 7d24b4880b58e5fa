// Forcing (seed 004, 3.4): the dependency closure of the roots, PlanLinearOrder, plan-time
// version assignment and checks, then execution in that order on the CPU.
#include "lazy/engine_state.h"
#include "lazy/kernels.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

#include <queue>
#include <set>

namespace tmmu::lazy {

// Every unexecuted node the roots depend on, by data or token edges (1.2's minimal forcing).
std::vector<NodeId> EngineState::closure(const std::vector<ValueId>& roots) const {
    std::vector<NodeId> out, stack;
    std::set<NodeId> seen;
    for (ValueId v : roots)
        stack.push_back(values.at(v).producer);
    while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        auto it = nodes.find(id);
        if (id == 0 || it == nodes.end() || it->second.done || !seen.insert(id).second) continue;
        out.push_back(id);
        for (ValueId in : it->second.inputs)
            stack.push_back(values.at(in).producer);
    }
    return out;
}

// PlanLinearOrder (3.4.1): a topological order of the closure, ties broken by EventKey.
std::vector<NodeId> EngineState::linearize(const std::vector<NodeId>& members) const {
    const std::set<NodeId> in_plan(members.begin(), members.end());
    std::map<NodeId, uint32_t> indegree;
    std::map<NodeId, std::vector<NodeId>> consumers;
    for (NodeId id : members) {
        indegree[id];
        for (ValueId in : nodes.at(id).inputs) {
            const NodeId p = values.at(in).producer;
            if (!in_plan.count(p)) continue;
            ++indegree[id];
            consumers[p].push_back(id);
        }
    }
    const auto later = [&](NodeId a, NodeId b) { return nodes.at(b).key < nodes.at(a).key; };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
    for (auto [id, deg] : indegree)
        if (deg == 0) ready.push(id);
    std::vector<NodeId> order;
    while (!ready.empty()) {
        const NodeId id = ready.top();
        ready.pop();
        order.push_back(id);
        for (NodeId c : consumers[id])
            if (--indegree[c] == 0) ready.push(c);
    }
    return order;
}

// Version assignment and checks in PlanLinearOrder, before anything runs (3.4, 3.5, 9.3). A
// compiled call expands into its body's subevents here, in the order they will run (8.6.0).
void EngineState::plan_versions(const std::vector<NodeId>& order) {
    PlannedState p;
    for (NodeId id : order) {
        Node& n = nodes.at(id);
        if (n.op != Op::CompiledCall) {
            plan_node(n, p);
            continue;
        }
        for (Node* sub : call_schedule(calls.at(n.call)))
            plan_node(*sub, p);
    }
}

void EngineState::plan_node(Node& n, PlannedState& p) {
    const auto planned_loc = [&](LocId id) -> LocRec& {
        auto it = p.locs.find(id);
        return it != p.locs.end() ? it->second : p.locs.emplace(id, locs.at(id)).first->second;
    };
    const auto planned_commit = [&](BaseId id) -> uint64_t& {
        auto it = p.commits.find(id);
        return it != p.commits.end()
                   ? it->second
                   : p.commits.emplace(id, bases.at(id).commit_version).first->second;
    };
    switch (n.op) {
    case Op::LocLoad: {
        const LocRec& l = planned_loc(n.loc);
        check_loadable(n, l);
        n.planned_version = l.version;
        break;
    }
    case Op::LocStore: {
        LocRec& l = planned_loc(n.loc);
        if (l.tombstone != Tombstone::None) check_loadable(n, l);
        n.planned_version = ++l.version;
        l.has_value = true;
        break;
    }
    case Op::LocInvalidate:
        planned_loc(n.loc).tombstone = Tombstone(n.tombstone);
        break;
    case Op::BaseCommit:
        n.planned_version = ++planned_commit(n.base);
        p.last_commit[n.base] = &n;
        break;
    case Op::PublishSave:
        n.planned_version = planned_commit(n.base);
        p.published[n.slot] = n.planned_version;
        break;
    case Op::SavedCheck:
        check_saved(n, planned_commit(n.base), p);
        break;
    default:
        break;
    }
}

void EngineState::check_loadable(const Node& n, const LocRec& l) const {
    const std::string who =
        fmt::format("loc L{} ({} of '{}')", n.loc, loc_role_name(l.role), bases.at(l.base).name);
    if (l.tombstone == Tombstone::GradInvalidated)
        raise(LazyError::InvalidatedGrad, n.site,
              who + " was set to null by zero_grad; read the parameter's new grad instead");
    if (l.tombstone != Tombstone::None)
        raise(LazyError::InvalidatedLoc, n.site, who + " was invalidated");
    if (!l.has_value)
        raise(LazyError::MissingExternalState, n.site, who + " is read before any store");
}

void EngineState::check_saved(const Node& n, uint64_t commit, const PlannedState& p) const {
    const SavedSlot& s = saved.at(n.slot);
    const auto pub = p.published.find(n.slot);
    const uint64_t at_save = pub != p.published.end() ? pub->second : s.version;
    if (commit == at_save) return;
    const auto last = p.last_commit.find(n.base);
    const std::string mutation = last != p.last_commit.end()
                                     ? last->second->detail
                                     : std::string("an in-place op forced earlier");
    raise(LazyError::SavedTensorModified, n.site,
          fmt::format("'{}' was saved for backward by {} at commit version {}, then modified by "
                      "{} (commit version {}) before backward used it",
                      s.tensor, s.saved_by, at_save, mutation, commit));
}

void EngineState::force(std::vector<ValueId> roots, const std::string& reason) {
    // Failure policy (6.7): any failure while planning or running poisons the engine; one that
    // is not already a named Failure (a bad allocation, say) becomes KernelExecutionError.
    try {
        run_plan(linearize(closure(roots)), reason);
    } catch (const Failure& f) {
        current_plan = kNone;
        current_key.clear();
        poison(f.what());
        throw;
    } catch (const std::exception& e) {
        current_plan = kNone;
        current_key.clear();
        poison(e.what());
        raise(LazyError::KernelExecution, site, e.what());
    }
}

void EngineState::run_plan(const std::vector<NodeId>& order, const std::string& reason) {
    if (order.empty()) return;
    plan_versions(order); // every check before anything runs
    PlanRecord plan;
    plan.index = trace.plans.size();
    plan.reason = reason;
    plan.first_event = trace.events.size();
    current_plan = static_cast<int64_t>(plan.index);
    const std::vector<StorageId> live_before = pool.live();
    for (NodeId id : order)
        execute(id);
    current_plan = kNone;
    current_key.clear();
    plan.end_event = trace.events.size();
    // A compiled call is one node of the order but runs its body's subevents.
    for (uint64_t i = plan.first_event; i < plan.end_event; ++i) {
        const EventKind k = trace.events[i].kind;
        plan.ops += k != EventKind::PoolAcquire && k != EventKind::PoolRelease;
    }
    summarize_memory(plan, live_before);
    trace.plans.push_back(plan);
}

std::vector<float> EngineState::host_data(ValueId v) {
    const Value& val = values.at(v);
    const std::span<const float> data = pool.span(val.storage);
    return {data.begin(), data.end()};
}

} // namespace tmmu::lazy
