#pragma once
// Seed 000's activation_retention_ratio: how much of what the forward pass produces is still
// held when the backward pass starts. That is the memory activation checkpointing trades for
// recomputation, so it is the first figure to read when a training plan is too large.
#include "ir/graph.h"
#include "liveness/liveness.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tmmu {

// Counted per storage (views and alias-group members share bytes, counted once), over the
// storages with a member that is an activation written by a forward node. A storage is
// retained when such a member is held for the backward pass:
//   training: a backward node of the schedule reads it (interleaved phases included);
//   forward:  it is saved_for_backward (the backward pass runs after this schedule);
//   inference, or no backward pass at all: never.
struct ActivationRetention {
    uint64_t forward_bytes = 0;  // forward activations' bytes, summed (saturating at 2^64 - 1)
    uint64_t retained_bytes = 0; // of those, the bytes held into the backward pass
    uint32_t forward_storages = 0;
    uint32_t retained_storages = 0;
    // The step the backward pass starts at: a training schedule's first backward node, the
    // schedule's end in forward mode (its backward pass runs after it); kNone in inference and
    // where the graph has no backward node.
    uint32_t backward_start = kNone;

    double ratio() const { // retained / forward; 0 when the forward pass writes no activation
        return forward_bytes == 0 ? 0.0 : double(retained_bytes) / double(forward_bytes);
    }
    bool operator==(const ActivationRetention&) const = default;
};

ActivationRetention activation_retention(const Graph& g, const Liveness& lv);

// Why a stored retention cannot belong to a plan of this mode, schedule length (when known)
// and buffer count, or "" when it can: the checkpoint and session-export readers refuse it.
std::string retention_inconsistency(const ActivationRetention& r, std::optional<Mode> mode,
                                    std::optional<size_t> steps, size_t buffers);

} // namespace tmmu
