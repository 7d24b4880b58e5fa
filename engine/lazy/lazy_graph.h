#pragma once
// The lazy graph: values (tensors and effect tokens) and the nodes that make them, each with
// its EventKey (3.4.2). Internal to engine/lazy.
#include "lazy/keyed_rng.h"
#include "lazy/view_meta.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::lazy {

using ValueId = uint64_t;
using NodeId = uint64_t;
using BaseId = uint64_t;
using LocId = uint64_t;
using StorageId = uint64_t;
using AutogradId = uint64_t;
using SavedSlotId = uint64_t;

// The order matters: is_elementwise and is_effect tell the kinds apart by range.
enum class Op : uint8_t {
    // pure tensor ops
    Constant,
    Neg,
    Exp,
    Log,
    Relu,
    Sigmoid,
    Tanh,
    Sqrt,
    Abs,
    Rsqrt,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round, // to nearest, ties to even
    Gelu,  // x * Phi(x), the exact (erf) form
    Silu,  // x * sigmoid(x)
    // derivatives autograd emits, not ops a program names
    Step,     // x > 0 ? 1 : 0 (relu's derivative)
    GeluGrad, // Phi(x) + x * phi(x) (gelu's derivative)
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    Pow,
    Eq, // comparisons give 1 or 0 (f32: the engine has no bool dtype)
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    // derivatives autograd emits: pow's, with PyTorch's zeros where the formula is 0 * inf
    PowGradBase,     // b == 0 ? 0 : b * a^(b - 1)
    PowGradExponent, // a == 0 && b >= 0 ? 0 : a^b * log(a)
    MatMul,
    Sum,
    Mean,
    SumTo,  // reduce a broadcast gradient back to an input's shape
    Expand, // broadcast to a shape
    View,   // gather a strided view into a fresh buffer
    StridedScatter,
    Copy,
    RandUniform, // keyed: its samples depend on Node::rng alone (keyed_rng.h)
    // effects: consume and produce tokens
    AfterAll,
    LocLoad,
    LocStore,
    BaseCommit,
    LocInvalidate,
    PublishSave,
    SavedCheck,
    BackwardJob,
    CompiledCall, // a compiled function's call: its staged subevents run as one (compiled.h)
};
std::string_view op_name(Op op);
bool is_effect(Op op);
// Neg .. PowGradExponent: one output element from the same element of each input (broadcast);
// Neg .. GeluGrad take one input, Add .. PowGradExponent two.
bool is_elementwise(Op op);
bool is_binary(Op op);
// Eq .. Ge: piecewise constant with 0/1 values, so no gradient flows through (not recorded).
bool is_comparison(Op op);
// The elementwise op of this name that a program or the Engine's unary()/binary() may use
// (seed 004 15.1's fusible list, f32); none for another name, or a derivative autograd emits.
std::optional<Op> public_elementwise_op(std::string_view name);

struct Value {
    Shape shape;
    bool token = false;
    NodeId producer = 0;
    uint32_t refs = 0;     // holders: unexecuted consumers, bases, slots, the force in progress
    StorageId storage = 0; // once ready (tensor values)
    bool ready = false;
    int64_t event = -1; // trace event that produced it
};

// EventKey: (graph instance, ir node | synthetic(anchor, tag, index)), compared in that order.
struct EventKey {
    uint64_t instance = 0;
    bool synthetic = false;
    uint32_t node = 0; // ir node index, or the anchor node of a synthetic event
    std::string tag;
    uint32_t index = 0;
    auto operator<=>(const EventKey&) const = default;
    std::string text() const;
};

struct Node {
    Op op = Op::Copy;
    std::vector<ValueId> inputs;  // data and tokens
    std::vector<ValueId> outputs; // data first, then the token
    EventKey key;
    std::string site;
    std::string detail;
    bool done = false;
    // attributes
    std::vector<int64_t> dims;
    bool keepdim = false;
    ViewMeta view;
    Shape shape;             // SumTo / Expand target
    std::vector<float> data; // Constant
    RngKey rng;              // RandUniform
    // effect targets
    LocId loc = 0;
    BaseId base = 0;
    uint64_t mut = 0;
    bool materialize = false;
    uint64_t logical_version = 0;
    SavedSlotId slot = 0;
    uint8_t tombstone = 0;
    uint64_t planned_version = 0; // assigned at plan time in PlanLinearOrder
    uint64_t call = 0;            // CompiledCall: its record (EngineState::calls)
};

} // namespace tmmu::lazy
