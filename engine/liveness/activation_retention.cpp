#include "liveness/activation_retention.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace tmmu {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                        : a + b;
}

// A backward pass exists when the graph has a backward node or saves a tensor for one.
bool has_backward_pass(const Graph& g) {
    return std::any_of(g.nodes.begin(), g.nodes.end(),
                       [](const Node& n) { return n.phase == Phase::Backward; }) ||
           std::any_of(g.tensors.begin(), g.tensors.end(),
                       [](const Tensor& t) { return t.saved_for_backward; });
}

bool forward_activation(const Graph& g, TensorIndex t) {
    const Tensor& x = g.tensors[t];
    return x.role == Role::Activation && x.producer != kNone &&
           g.nodes[x.producer].phase == Phase::Forward;
}

// Held for the backward pass: read by a backward node of the schedule (training), or saved for
// the backward pass that runs after this schedule (forward). A member's own reads count, not
// its storage's lifetime, which alias groups and must_not_alias widen for other reasons.
bool held_for_backward(const Graph& g, const Liveness& lv, TensorIndex t) {
    if (lv.mode == Mode::Forward) return g.tensors[t].saved_for_backward;
    if (lv.mode != Mode::Training) return false;
    const auto& readers = g.tensors[t].consumers;
    return std::any_of(readers.begin(), readers.end(),
                       [&](NodeIndex n) { return g.nodes[n].phase == Phase::Backward; });
}

uint32_t backward_start(const Graph& g, const Liveness& lv) {
    if (lv.mode == Mode::Forward) return has_backward_pass(g) ? lv.steps() : kNone;
    if (lv.mode != Mode::Training) return kNone;
    const auto first = std::find_if(lv.schedule.begin(), lv.schedule.end(), [&](NodeIndex n) {
        return g.nodes[n].phase == Phase::Backward;
    });
    return first == lv.schedule.end() ? kNone : uint32_t(first - lv.schedule.begin());
}

} // namespace

ActivationRetention activation_retention(const Graph& g, const Liveness& lv) {
    ActivationRetention r;
    r.backward_start = backward_start(g, lv);
    for (const Storage& s : lv.storages) {
        const auto& m = s.members;
        if (std::none_of(m.begin(), m.end(),
                         [&](TensorIndex t) { return forward_activation(g, t); }))
            continue;
        r.forward_bytes = saturating_add(r.forward_bytes, s.bytes);
        ++r.forward_storages;
        if (r.backward_start == kNone || std::none_of(m.begin(), m.end(), [&](TensorIndex t) {
                return forward_activation(g, t) && held_for_backward(g, lv, t);
            }))
            continue;
        r.retained_bytes = saturating_add(r.retained_bytes, s.bytes);
        ++r.retained_storages;
    }
    return r;
}

std::string retention_inconsistency(const ActivationRetention& r, std::optional<Mode> mode,
                                    std::optional<size_t> steps, size_t buffers) {
    if (!mode) return "a plan without a mode (an offset problem) has no activation retention";
    if (r.retained_bytes > r.forward_bytes || r.retained_storages > r.forward_storages)
        return "more activations retained than the forward pass writes";
    if (r.forward_storages > buffers)
        return fmt::format("{} forward buffers in a plan of {} buffers", r.forward_storages,
                           buffers);
    if (r.backward_start == kNone)
        return r.retained_storages == 0 && r.retained_bytes == 0
                   ? ""
                   : "activations retained without a backward pass";
    if (*mode == Mode::Inference) return "an inference plan has no backward pass";
    if (steps && *mode == Mode::Forward && r.backward_start != *steps)
        return fmt::format("a forward plan's backward pass starts after its {} steps, not at {}",
                           *steps, r.backward_start);
    if (steps && *mode == Mode::Training && r.backward_start >= *steps)
        return fmt::format("backward_start {} is outside the schedule of {} steps",
                           r.backward_start, *steps);
    return "";
}

} // namespace tmmu
