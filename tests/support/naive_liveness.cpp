#include "naive_liveness.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace tmmu::test {

namespace {

bool runs_in(Mode mode, Phase phase) {
    return mode == Mode::Training || phase == Phase::Forward; // inference, forward: forward only
}

bool persistent(Role r) {
    return r == Role::Parameter || r == Role::OptimizerState;
}

// Joins storage `moved` into storage `kept`: the members of `moved` shift by `shift` bytes (to
// sit where they belong inside `kept`), and both take the smaller representative.
void merge(NaiveLiveness& lv, TensorIndex moved, TensorIndex kept, uint64_t shift) {
    if (moved == kept) return;
    const TensorIndex rep = std::min(moved, kept);
    for (TensorIndex t = 0; t < lv.storage.size(); ++t) {
        if (!lv.active[t]) continue;
        if (lv.storage[t] == moved) lv.offset[t] += shift;
        if (lv.storage[t] == moved || lv.storage[t] == kept) lv.storage[t] = rep;
    }
}

} // namespace

NaiveLiveness naive_liveness(const Graph& g, Mode mode) {
    NaiveLiveness lv;
    const size_t n = g.tensors.size();
    for (NodeIndex node : g.execution_order)
        if (runs_in(mode, g.nodes[node].phase)) lv.schedule.push_back(node);
    const uint32_t steps = uint32_t(lv.schedule.size());
    lv.active.assign(n, false);
    lv.begin.assign(n, 0);
    lv.end.assign(n, 0);
    lv.storage.assign(n, kNone);
    lv.offset.assign(n, 0);
    lv.in_place_accepted.assign(n, false);
    std::vector<int64_t> produced_at(n, -1), last_read(n, -1);
    for (uint32_t s = 0; s < steps; ++s) {
        const Node& node = g.nodes[lv.schedule[s]];
        for (TensorIndex t : node.outputs)
            produced_at[t] = s;
        for (TensorIndex t : node.inputs)
            last_read[t] = s;
    }
    // Active: touched by a scheduled node, a parameter nothing writes (the weights exist in
    // every mode), or the base of an active view (its bytes hold the view).
    for (TensorIndex t = 0; t < n; ++t)
        lv.active[t] = produced_at[t] >= 0 || last_read[t] >= 0 ||
                       (g.tensors[t].role == Role::Parameter && g.tensors[t].producer == kNone);
    for (TensorIndex t = 0; t < n; ++t)
        for (TensorIndex v = t; lv.active[v] && g.tensors[v].view;) {
            v = g.tensors[v].view->base;
            lv.active[v] = true;
        }
    // Lifetimes: born at the producer's step (step 0 when nothing in the schedule writes it),
    // dead after the last reader's step (or its own step when nothing reads it); parameters,
    // optimizer state and outputs to the last step, saved tensors too in forward mode (their
    // backward readers run later). Never empty: an empty schedule still has step 0.
    const uint32_t horizon = std::max<uint32_t>(steps, 1);
    for (TensorIndex t = 0; t < n; ++t) {
        if (!lv.active[t]) continue;
        const Tensor& x = g.tensors[t];
        lv.begin[t] = produced_at[t] >= 0 ? uint32_t(produced_at[t]) : 0;
        uint32_t end = last_read[t] >= 0 ? uint32_t(last_read[t]) + 1 : lv.begin[t] + 1;
        if (persistent(x.role) || x.role == Role::Output ||
            (mode == Mode::Forward && x.saved_for_backward))
            end = horizon;
        lv.end[t] = std::max(end, lv.begin[t] + 1);
        lv.storage[t] = t;
    }
    // Views live inside their ultimate base, at the sum of the offsets on the way.
    for (TensorIndex t = 0; t < n; ++t) {
        if (!lv.active[t] || !g.tensors[t].view) continue;
        TensorIndex base = t;
        uint64_t offset = 0;
        while (g.tensors[base].view) {
            offset += g.tensors[base].view->byte_offset;
            base = g.tensors[base].view->base;
        }
        if (!lv.active[base]) continue;
        merge(lv, lv.storage[t], lv.storage[base], offset); // bases are unmerged yet: offset 0
    }
    // Alias groups: every active member in one storage.
    for (TensorIndex a = 0; a < n; ++a)
        for (TensorIndex b = a + 1; b < n; ++b)
            if (lv.active[a] && lv.active[b] && !g.tensors[a].alias_group.empty() &&
                g.tensors[a].alias_group == g.tensors[b].alias_group)
                merge(lv, lv.storage[b], lv.storage[a], 0);
    // In-place writes, in the order they happen: honoured when the writer is the target's last
    // reader, the target is not saved for backward (inference ignores that mark), every other
    // member of the target's storage is dead by the write, and the written tensor does not
    // share bytes with anything yet (views of it, an alias group).
    std::vector<TensorIndex> writes;
    for (TensorIndex t = 0; t < n; ++t)
        if (lv.active[t] && g.tensors[t].in_place_of != kNone && produced_at[t] >= 0)
            writes.push_back(t);
    std::stable_sort(writes.begin(), writes.end(),
                     [&](TensorIndex a, TensorIndex b) { return produced_at[a] < produced_at[b]; });
    for (TensorIndex t : writes) {
        const TensorIndex target = g.tensors[t].in_place_of;
        if (!lv.active[target]) continue;
        const int64_t step = produced_at[t];
        bool ok = last_read[target] == step &&
                  (mode == Mode::Inference || !g.tensors[target].saved_for_backward) &&
                  lv.storage[t] != lv.storage[target];
        for (TensorIndex m = 0; m < n && ok; ++m) {
            if (!lv.active[m]) continue;
            if (m != target && lv.storage[m] == lv.storage[target] && lv.end[m] > uint32_t(step))
                ok = false;
            if (m != t && lv.storage[m] == lv.storage[t]) ok = false;
        }
        if (!ok) continue;
        lv.in_place_accepted[t] = true; // t's bytes are the target's: same place in the storage
        merge(lv, lv.storage[t], lv.storage[target], lv.offset[target] - lv.offset[t]);
    }
    return lv;
}

NaiveStorage naive_storage(const Graph& g, const NaiveLiveness& lv, TensorIndex representative) {
    NaiveStorage s;
    bool first = true;
    for (TensorIndex t = 0; t < lv.storage.size(); ++t) {
        if (!lv.active[t] || lv.storage[t] != representative) continue;
        const Tensor& x = g.tensors[t];
        s.begin = first ? lv.begin[t] : std::min(s.begin, lv.begin[t]);
        s.end = first ? lv.end[t] : std::max(s.end, lv.end[t]);
        s.bytes = std::max(s.bytes, lv.offset[t] + x.bytes);
        s.alignment = std::max(s.alignment, x.alignment);
        if (!x.view && (s.root == kNone || x.bytes > g.tensors[s.root].bytes)) s.root = t;
        first = false;
        if (!x.pinned_offset) continue;
        if (*x.pinned_offset < lv.offset[t]) {
            s.pin_conflict = fmt::format("'{}' is pinned below its storage's start", x.id);
        } else if (s.pinned && *s.pinned != *x.pinned_offset - lv.offset[t]) {
            s.pin_conflict = fmt::format("'{}' pins its storage elsewhere", x.id);
        } else {
            s.pinned = *x.pinned_offset - lv.offset[t];
        }
    }
    if (s.root == kNone) s.root = representative; // only views: the first member
    return s;
}

std::string check_plan_lifetimes(const Graph& g, Mode mode, const Plan& plan) {
    const NaiveLiveness lv = naive_liveness(g, mode);
    std::map<std::string, const PlannedTensor*> planned;
    for (const PlannedTensor& p : plan.tensors)
        planned[p.id] = &p;
    std::vector<const PlannedTensor*> at(g.tensors.size(), nullptr);
    for (TensorIndex t = 0; t < g.tensors.size(); ++t) {
        if (!lv.active[t]) continue;
        auto it = planned.find(g.tensors[t].id);
        if (it == planned.end())
            return fmt::format("active tensor '{}' is not planned", g.tensors[t].id);
        at[t] = it->second;
    }
    std::map<TensorIndex, NaiveStorage> storages;
    for (TensorIndex t = 0; t < g.tensors.size(); ++t)
        if (lv.active[t] && !storages.count(lv.storage[t]))
            storages[lv.storage[t]] = naive_storage(g, lv, lv.storage[t]);
    auto bytes_meet = [&](TensorIndex a, TensorIndex b) {
        const uint64_t ea = at[a]->offset + g.tensors[a].bytes,
                       eb = at[b]->offset + g.tensors[b].bytes;
        return g.tensors[a].bytes > 0 && g.tensors[b].bytes > 0 && at[a]->offset < eb &&
               at[b]->offset < ea;
    };
    for (TensorIndex a = 0; a < g.tensors.size(); ++a) {
        if (!at[a]) continue;
        for (TensorIndex b = a + 1; b < g.tensors.size(); ++b) {
            if (!at[b]) continue;
            const TensorIndex sa = lv.storage[a], sb = lv.storage[b];
            if (sa == sb) {
                if (at[a]->arena != at[b]->arena ||
                    at[a]->offset - lv.offset[a] != at[b]->offset - lv.offset[b])
                    return fmt::format("'{}' and '{}' share a storage but are placed apart",
                                       g.tensors[a].id, g.tensors[b].id);
                continue;
            }
            const NaiveStorage &x = storages[sa], &y = storages[sb];
            const bool same_time = x.begin < y.end && y.begin < x.end;
            const auto& mna = g.tensors[a].must_not_alias;
            const auto& mnb = g.tensors[b].must_not_alias;
            const bool never =
                std::count(mna.begin(), mna.end(), b) + std::count(mnb.begin(), mnb.end(), a) > 0;
            if (at[a]->arena == at[b]->arena && (same_time || never) && bytes_meet(a, b))
                return fmt::format("'{}' [{}, {}) and '{}' [{}, {}) share bytes at {} / {}{}",
                                   g.tensors[a].id, x.begin, x.end, g.tensors[b].id, y.begin, y.end,
                                   at[a]->offset, at[b]->offset, never ? " (must_not_alias)" : "");
        }
    }
    return {};
}

} // namespace tmmu::test
