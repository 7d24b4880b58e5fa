#pragma once
// Seed 000's activation_retention_ratio: how much of what the forward pass produces is still
// held when the backward pass starts. That is the memory activation checkpointing trades for
// recomputation, so it is the first figure to read when a training plan is too large.
#include "ir/graph.h"
#include "liveness/liveness.h"

#include <cstdint>

namespace tmmu {

// Counted per storage (views and alias-group members share their root's bytes), over the
// storages whose root is an activation written by a forward node of the schedule.
//   training: retained when live at the first backward step (nothing is, without one);
//   forward:  retained when a member is saved_for_backward (held for the backward pass that
//             runs after this one);
//   inference: never retained.
struct ActivationRetention {
    uint64_t forward_bytes = 0;  // forward activations' bytes, summed (saturating at 2^64 - 1)
    uint64_t retained_bytes = 0; // of those, the bytes held into the backward pass
    uint32_t forward_storages = 0;
    uint32_t retained_storages = 0;
    // The step the backward pass starts at: a training schedule's first backward node, the
    // schedule's end in forward mode (its backward pass runs after it); kNone in inference and
    // in a training schedule without backward nodes.
    uint32_t backward_start = kNone;

    double ratio() const { // retained / forward; 0 when the forward pass writes no activation
        return forward_bytes == 0 ? 0.0 : double(retained_bytes) / double(forward_bytes);
    }
    bool operator==(const ActivationRetention&) const = default;
};

ActivationRetention activation_retention(const Graph& g, const Liveness& lv);

} // namespace tmmu
