#include "liveness/liveness.h"

#include "core/checked.h"
#include "core/failure.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <numeric>

namespace tmmu {
namespace {

bool runs_in_mode(Phase phase, Mode mode) {
    return mode == Mode::Training || phase == Phase::Forward;
}

bool is_persistent(Role r) {
    return r == Role::Parameter || r == Role::OptimizerState;
}

// Union-find over tensors; each root keeps its member list so in-place checks can ask which
// members of a storage are still live. Lists merge small-into-large: O(n log n) overall.
class StorageSets {
  public:
    explicit StorageSets(size_t n) : parent_(n), members_(n) {
        std::iota(parent_.begin(), parent_.end(), 0u);
        for (size_t i = 0; i < n; ++i)
            members_[i] = {static_cast<TensorIndex>(i)};
    }
    TensorIndex find(TensorIndex t) {
        while (parent_[t] != t)
            t = parent_[t] = parent_[parent_[t]];
        return t;
    }
    void unite(TensorIndex a, TensorIndex b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (members_[a].size() < members_[b].size()) std::swap(a, b);
        members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
        members_[b].clear();
        members_[b].shrink_to_fit();
        parent_[b] = a;
    }
    const std::vector<TensorIndex>& members_of_root(TensorIndex root) const {
        return members_[root];
    }

  private:
    std::vector<TensorIndex> parent_;
    std::vector<std::vector<TensorIndex>> members_;
};

class Analyzer {
  public:
    Analyzer(const Graph& g, Mode mode) : g_(g), sets_(g.tensors.size()) {
        lv_.mode = mode;
        size_t n = g.tensors.size();
        lv_.active.assign(n, false);
        lv_.tensor_life.assign(n, Lifetime{});
        lv_.storage_of.assign(n, kNone);
        lv_.offset_in_storage.assign(n, 0);
    }

    Liveness run() {
        build_schedule();
        mark_active();
        compute_lifetimes();
        group_views_and_alias_groups();
        apply_in_place_writes();
        build_storages();
        return std::move(lv_);
    }

  private:
    void build_schedule() {
        step_.assign(g_.nodes.size(), kNone);
        for (NodeIndex n : g_.execution_order) {
            if (!runs_in_mode(g_.nodes[n].phase, lv_.mode)) continue;
            step_[n] = static_cast<uint32_t>(lv_.schedule.size());
            lv_.schedule.push_back(n);
        }
        horizon_ = std::max<uint32_t>(lv_.steps(), 1);
    }

    // A tensor exists in this mode when a scheduled node touches it, when it is a parameter,
    // or when an active view needs it as its base storage.
    void mark_active() {
        for (NodeIndex n : lv_.schedule) {
            for (TensorIndex t : g_.nodes[n].inputs)
                lv_.active[t] = true;
            for (TensorIndex t : g_.nodes[n].outputs)
                lv_.active[t] = true;
        }
        for (size_t t = 0; t < g_.tensors.size(); ++t)
            if (g_.tensors[t].role == Role::Parameter && g_.tensors[t].producer == kNone)
                lv_.active[t] = true;
        for (size_t t = 0; t < g_.tensors.size(); ++t)
            for (TensorIndex v = static_cast<TensorIndex>(t); lv_.active[v] && g_.tensors[v].view;)
                v = g_.tensors[v].view->base, lv_.active[v] = true;
    }

    uint32_t last_consumer_step(TensorIndex t) const {
        uint32_t last = kNone;
        for (NodeIndex c : g_.tensors[t].consumers)
            if (step_[c] != kNone) last = (last == kNone) ? step_[c] : std::max(last, step_[c]);
        return last;
    }

    void compute_lifetimes() {
        for (size_t i = 0; i < g_.tensors.size(); ++i) {
            if (!lv_.active[i]) continue;
            const Tensor& t = g_.tensors[i];
            Lifetime& life = lv_.tensor_life[i];
            bool produced = t.producer != kNone && step_[t.producer] != kNone;
            life.begin = produced ? step_[t.producer] : 0;
            uint32_t last = last_consumer_step(static_cast<TensorIndex>(i));
            life.end = last == kNone ? life.begin + 1 : last + 1;
            bool retained = is_persistent(t.role) || t.role == Role::Output ||
                            (t.saved_for_backward && lv_.mode == Mode::Forward);
            if (retained) life.end = horizon_;
            life.end = std::max(life.end, life.begin + 1);
        }
    }

    void group_views_and_alias_groups() {
        std::vector<std::pair<std::string_view, TensorIndex>> grouped;
        for (size_t i = 0; i < g_.tensors.size(); ++i) {
            if (!lv_.active[i]) continue;
            const Tensor& t = g_.tensors[i];
            if (t.view) {
                sets_.unite(static_cast<TensorIndex>(i), t.view->base);
                lv_.offset_in_storage[i] = view_offset(static_cast<TensorIndex>(i));
            }
            if (!t.alias_group.empty()) grouped.emplace_back(t.alias_group, i);
        }
        std::sort(grouped.begin(), grouped.end());
        for (size_t i = 1; i < grouped.size(); ++i)
            if (grouped[i].first == grouped[i - 1].first)
                sets_.unite(grouped[i].second, grouped[i - 1].second);
    }

    // Byte offset of a view inside the storage of its ultimate base (views of views add up).
    uint64_t view_offset(TensorIndex t) const {
        uint64_t off = 0;
        for (; g_.tensors[t].view; t = g_.tensors[t].view->base)
            off = checked_add(off, g_.tensors[t].view->byte_offset,
                              fmt::format("tensor '{}'.view.byte_offset", g_.tensors[t].id));
        return off;
    }

    // Seed II.G: an in-place write shares its target's storage only when no other member of
    // that storage is live at the writing step (alias refcount 1), the target is not saved for
    // backward, and the writing node is the target's last reader. Requests are handled in
    // schedule order so chains of in-place ops collapse into one storage.
    void apply_in_place_writes() {
        for (NodeIndex n : lv_.schedule) {
            for (TensorIndex out : g_.nodes[n].outputs) {
                TensorIndex target = g_.tensors[out].in_place_of;
                if (target == kNone) continue;
                std::string why = in_place_refusal(out, target, step_[n]);
                if (why.empty()) {
                    sets_.unite(out, target);
                    continue;
                }
                lv_.notes.push_back(fmt::format(
                    "in-place write of '{}' over '{}' refused ({}): planned as a separate buffer",
                    g_.tensors[out].id, g_.tensors[target].id, why));
            }
        }
    }

    std::string in_place_refusal(TensorIndex out, TensorIndex target, uint32_t step) {
        const Tensor& t = g_.tensors[target];
        if (t.saved_for_backward && lv_.mode != Mode::Inference)
            return "target is saved_for_backward";
        if (last_consumer_step(target) != step) return "target is read after the writing node";
        if (g_.tensors[out].view) return "the output is a view";
        TensorIndex root = sets_.find(target);
        for (TensorIndex m : sets_.members_of_root(root)) {
            if (m == target || !lv_.active[m]) continue;
            if (lv_.tensor_life[m].end > step)
                return fmt::format("'{}' shares its storage and is still live", g_.tensors[m].id);
        }
        if (sets_.find(out) != out || sets_.members_of_root(out).size() != 1)
            return "the output already shares storage with other tensors";
        return {};
    }

    void build_storages() {
        std::vector<uint32_t> storage_of_root(g_.tensors.size(), kNone);
        for (size_t i = 0; i < g_.tensors.size(); ++i) {
            if (!lv_.active[i]) continue;
            TensorIndex root = sets_.find(static_cast<TensorIndex>(i));
            if (storage_of_root[root] == kNone) {
                storage_of_root[root] = static_cast<uint32_t>(lv_.storages.size());
                lv_.storages.push_back(make_storage(root));
            }
            lv_.storage_of[i] = storage_of_root[root];
        }
    }

    Storage make_storage(TensorIndex root) {
        Storage s;
        for (TensorIndex m : sets_.members_of_root(root))
            if (lv_.active[m]) s.members.push_back(m);
        std::sort(s.members.begin(), s.members.end());
        s.life = lv_.tensor_life[s.members.front()];
        for (TensorIndex m : s.members) {
            const Tensor& t = g_.tensors[m];
            uint64_t extent = checked_add(lv_.offset_in_storage[m], t.bytes,
                                          fmt::format("tensor '{}' view extent", t.id));
            s.bytes = std::max(s.bytes, extent);
            s.alignment = std::max(s.alignment, t.alignment);
            s.life.begin = std::min(s.life.begin, lv_.tensor_life[m].begin);
            s.life.end = std::max(s.life.end, lv_.tensor_life[m].end);
            if (!t.view && (s.root == kNone || t.bytes > g_.tensors[s.root].bytes)) s.root = m;
            if (t.pinned_offset) pin_storage(s, t, lv_.offset_in_storage[m]);
        }
        if (s.root == kNone) s.root = s.members.front();
        return s;
    }

    void pin_storage(Storage& s, const Tensor& t, uint64_t offset_in_storage) {
        std::string where = fmt::format("tensor '{}'.offset", t.id);
        if (*t.pinned_offset < offset_in_storage)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("pinned offset {} lies below the start of its base storage (view "
                             "offset {})",
                             *t.pinned_offset, offset_in_storage));
        uint64_t base = *t.pinned_offset - offset_in_storage;
        if (s.pinned_offset && *s.pinned_offset != base)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("pins its shared storage at {}, another member pins it at {}", base,
                             *s.pinned_offset));
        s.pinned_offset = base;
    }

    const Graph& g_;
    Liveness lv_;
    StorageSets sets_;
    std::vector<uint32_t> step_; // per node: step in the schedule, kNone when not run
    uint32_t horizon_ = 1;
};

} // namespace

Liveness analyze_liveness(const Graph& g, Mode mode) {
    return Analyzer(g, mode).run();
}

} // namespace tmmu
