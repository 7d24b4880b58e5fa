#include "liveness/activation_retention.h"

#include <algorithm>
#include <limits>

namespace tmmu {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                        : a + b;
}

uint32_t backward_start(const Graph& g, const Liveness& lv) {
    if (lv.mode == Mode::Forward) return lv.steps();
    if (lv.mode != Mode::Training) return kNone;
    const auto first = std::find_if(lv.schedule.begin(), lv.schedule.end(), [&](NodeIndex n) {
        return g.nodes[n].phase == Phase::Backward;
    });
    return first == lv.schedule.end() ? kNone : uint32_t(first - lv.schedule.begin());
}

bool forward_activation(const Graph& g, const Storage& s) {
    const Tensor& root = g.tensors[s.root];
    return root.role == Role::Activation && root.producer != kNone &&
           g.nodes[root.producer].phase == Phase::Forward;
}

bool retained(const Graph& g, const Liveness& lv, const Storage& s, uint32_t start) {
    if (start == kNone) return false;
    if (lv.mode == Mode::Forward)
        return std::any_of(s.members.begin(), s.members.end(),
                           [&](TensorIndex t) { return g.tensors[t].saved_for_backward; });
    return s.life.begin < start && s.life.end > start;
}

} // namespace

ActivationRetention activation_retention(const Graph& g, const Liveness& lv) {
    ActivationRetention r;
    const uint32_t start = r.backward_start = backward_start(g, lv);
    for (const Storage& s : lv.storages) {
        if (!forward_activation(g, s)) continue;
        r.forward_bytes = saturating_add(r.forward_bytes, s.bytes);
        ++r.forward_storages;
        if (!retained(g, lv, s, start)) continue;
        r.retained_bytes = saturating_add(r.retained_bytes, s.bytes);
        ++r.retained_storages;
    }
    return r;
}

} // namespace tmmu
