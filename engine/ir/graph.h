#pragma once
// The model IR: tensors and nodes of a dataflow DAG plus an execution order.
// A Graph is plain data. finalize_graph() (ir/validate.h) checks it and fills the derived
// fields; every Graph handed to liveness or planning has been finalized.
#include "ir/dtype.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

using TensorIndex = uint32_t;
using NodeIndex = uint32_t;
constexpr uint32_t kNone = UINT32_MAX;

enum class Role : uint8_t {
    Parameter,
    Input,
    Output,
    Activation,
    Gradient,
    OptimizerState,
    Workspace
};
// Number of roles: tables indexed by Role are this long (Workspace is the last role).
inline constexpr size_t kRoleCount = static_cast<size_t>(Role::Workspace) + 1;
enum class Phase : uint8_t { Forward, Backward, Optimizer };

std::string_view role_name(Role r); // "parameter", "optimizer_state", ...
std::optional<Role> parse_role(std::string_view s);
std::string_view phase_name(Phase p); // "forward", "backward", "optimizer"
std::optional<Phase> parse_phase(std::string_view s);

// A view aliases bytes [byte_offset, byte_offset + byte_length) of its base tensor's storage.
struct ViewDesc {
    TensorIndex base = kNone;
    uint64_t byte_offset = 0;
    uint64_t byte_length = 0;
    // Seed 000 II.G's stride_desc: the element stride of each axis, for a view whose elements
    // are spread over its base (a transpose, a column slice); empty for a contiguous view. A
    // strided view spans (sum of (extent - 1) * stride + 1) elements, its byte_length.
    std::vector<uint64_t> strides;
};

// A dynamic dimension (seed 000, II.H): shapes may name it instead of giving a number. Its
// shape envelope is [min, max]; a graph is always bound to one value inside it, and that value
// is what its tensors' shapes hold. Planning at the envelope's max gives a plan that fits every
// shape inside the envelope, since a tensor's bytes only grow with its dimensions.
struct DynamicDim {
    std::string name;
    int64_t min = 0;
    int64_t max = 0;
    int64_t value = 0; // the binding: min <= value <= max
};

// What happens when a later iteration's shapes do not fit the plan (seed 000, II.H): stop, or
// plan again at the next safepoint (the iteration boundary before that iteration).
enum class ReplanPolicy : uint8_t { Abort, ReplanAtSafepoint };
std::string_view replan_policy_name(ReplanPolicy p); // "ABORT", "REPLAN_AT_SAFEPOINT"
std::optional<ReplanPolicy> parse_replan_policy(std::string_view s);

// How an axis's size follows the graph's dimensions: `factor` times the product of the values
// of `dims` (indices into Graph::dims), so an axis may be `batch`, `batch*seq` or `4*N`. An axis
// with no dims is fixed. Sizes only grow with each dimension, so a plan made at the envelope's
// max fits every binding inside it. Invariant once finalized: dims ascending, factor >= 1.
struct AxisDims {
    std::vector<uint32_t> dims;
    int64_t factor = 1;

    bool fixed() const { return dims.empty(); }
    bool operator==(const AxisDims&) const = default;
};

struct Tensor {
    std::string id;   // unique; the seed's tie-break orders tensors by id, lexicographically
    std::string name; // human-readable; defaults to id
    std::vector<int64_t> shape; // at the graph's binding where an axis is dynamic
    // Per axis: the dimensions the axis follows. Empty when every axis is fixed.
    std::vector<AxisDims> shape_dims;
    DType dtype = DType::F32;
    Role role = Role::Activation;
    std::string alias_group;         // empty: none. Members share one storage.
    std::optional<ViewDesc> view;    // set: this tensor is a view of view->base
    TensorIndex in_place_of = kNone; // requested in-place write over that tensor
    bool saved_for_backward = false;
    std::vector<TensorIndex> must_not_alias; // never share bytes with these, whatever the time
    uint64_t alignment = 0;                  // 0: the arena's default alignment
    std::optional<uint64_t> pinned_offset;   // fixed offset inside its arena

    // Derived by finalize_graph():
    uint64_t bytes = 0;               // product(shape) * dtype_bytes, overflow-checked
    NodeIndex producer = kNone;       // node writing this tensor; kNone for parameters/inputs
    std::vector<NodeIndex> consumers; // nodes reading it, in execution order

    bool dynamic() const { // some axis follows a dynamic dimension
        for (const AxisDims& a : shape_dims)
            if (!a.fixed()) return true;
        return false;
    }
};

struct Node {
    std::string id;
    std::string opcode;
    std::vector<TensorIndex> inputs;
    std::vector<TensorIndex> outputs;
    Phase phase = Phase::Forward;
};

struct Graph {
    std::string name;
    std::vector<Tensor> tensors;
    std::vector<Node> nodes;
    std::vector<DynamicDim> dims; // empty: every shape is fixed; in name order once finalized
    ReplanPolicy replan_policy = ReplanPolicy::Abort;
    // Node indices in execution order. Empty before finalize_graph() when the source gave no
    // order; then a deterministic topological order is derived (ties by node index).
    std::vector<NodeIndex> execution_order;
    // Derived: step_of[node] = position of the node in execution_order.
    std::vector<uint32_t> step_of;

    TensorIndex find_tensor(std::string_view id) const; // kNone when absent; linear
    uint32_t find_dim(std::string_view name) const;     // kNone when absent; linear
};

} // namespace tmmu
