#pragma once
// Mode-aware liveness (UML_OS.Model.AnalyzeLiveness_v1) and storage grouping.
//
// Time is the step index in the mode's schedule. A tensor's lifetime is half-open
// [begin, end): born at its producer's step, dead after its last consumer's step (end = step+1).
// Parameters, optimizer state and inputs are live from step 0; outputs until the last step.
// Tensors that share bytes (views of a base, alias-group members, accepted in-place writes) are
// merged into one Storage whose lifetime is the union of its members': base storage stays
// alive until every member is dead. Storages are what the planner places.
#include "ir/graph.h"
#include "ir/mode.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

struct Lifetime {
    uint32_t begin = 0;
    uint32_t end = 0;
    bool overlaps(const Lifetime& o) const { return begin < o.end && o.begin < end; }
};

struct Storage {
    TensorIndex root = kNone;         // member that owns the bytes (a view's base, group's largest)
    std::vector<TensorIndex> members; // ascending tensor index
    uint64_t bytes = 0;
    uint64_t alignment = 0; // max member alignment; 0 means the arena default
    std::optional<uint64_t> pinned_offset;
    Lifetime life;
};

struct Liveness {
    Mode mode = Mode::Inference;
    std::vector<NodeIndex> schedule;         // nodes this mode runs, in execution order
    std::vector<bool> active;                // per tensor: touched by the schedule (or persistent)
    std::vector<Lifetime> tensor_life;       // per tensor, valid when active
    std::vector<uint32_t> storage_of;        // per tensor, kNone when inactive
    std::vector<uint64_t> offset_in_storage; // per tensor: byte offset of a view inside its storage
    std::vector<Storage> storages;
    std::vector<std::string> notes; // decisions a person may want to know (refused in-place)

    uint32_t steps() const { return static_cast<uint32_t>(schedule.size()); }
};

// O(nodes + edges) plus a union-find over alias relations. Throws Failure on malformed input.
Liveness analyze_liveness(const Graph& g, Mode mode);

} // namespace tmmu
