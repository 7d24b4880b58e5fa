#pragma once
// Named failure codes. Every bad input ends in a Failure carrying one of these codes plus
// "where" (which tensor, node, field, file:line) and a message saying what was expected.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tmmu {

// The values are part of the product's interface: `tmmu` exits with 10 + the value (see
// failure_exit_status), scripts and sessions depend on them, and the README lists them. Give a
// new code the next free value; never renumber or reuse one (the static_asserts below pin
// every existing value, so a code inserted in the middle fails to compile).
enum class FailureCode : uint8_t {
    // The seed's allocator codes (UML_OS.TMMU.PrepareMemory_v2, section 0.K).
    InvalidIrShapes = 0,    // malformed IR: bad field, dangling reference, bad shape or dtype
    LivenessCycle = 1,      // the dataflow graph or the given execution order has a cycle
    AddressCollision = 2,   // two tensors alive at once overlap in an arena (corrupt plan)
    AllocationOverflow = 3, // size or offset arithmetic overflows uint64
    ArenaTooSmall = 4,      // a plan does not fit its arena's capacity
    AlignmentViolation = 5, // an offset or pinned placement breaks its alignment
    // Codes for failures outside the allocator proper.
    IoError = 6,           // a file cannot be read or written
    InvalidArgument = 7,   // a command-line or API argument is wrong
    CorruptCheckpoint = 8, // a CBOR checkpoint is malformed or its hash does not match
    Cancelled = 9,         // the caller cancelled long-running work
    // The runtime's load-time contract (seed 002, A9): a plan that breaks it never runs.
    UnsupportedTensorRank = 10, // a register or weight view of rank above 4
    InvalidParamBlockAbi = 11,  // a ParamBlock of the wrong version, opcode, size or alignment
    InvalidExecutionPlan = 12,  // a register without its one producer, a dangling reference
    // A backend's load-time answer to a valid plan (seed 002, A3, A9.4): never a fallback later.
    UnsupportedOpcode = 13, // the backend's adapter table has no entry for an instruction's opcode
    BatchUnsupported = 14,  // more slots per step than an opcode's adapter declares it takes
    // A device's answer while running (CUDA or Vulkan): out of memory, a failed launch.
    DeviceError = 15,
    // A lazy program broke a rule of the token/effect engine (seed 004, section 16); the message
    // starts with the spec's error name (SavedTensorModifiedError, EngineBusyError, ...).
    LazyEngineError = 16,
    // A model's dimension is still unknown after its bindings (an ONNX symbolic or unnamed dim):
    // the message lists every unbound name or input and where it is used.
    UnboundDimension = 17,
    // A plan's arenas together need more bytes than the memory budget allows (seed 000, II.J:
    // a quota failure, and nothing of the plan is written).
    MemoryBudgetExceeded = 18,
    // A dynamic dimension's value lies outside its declared shape envelope, or an iteration's
    // shapes outgrow the plan while the model's replan_policy is ABORT (seed 000, II.H).
    ShapeEnvelopeViolation = 19,
};

static_assert(static_cast<int>(FailureCode::InvalidIrShapes) == 0);
static_assert(static_cast<int>(FailureCode::LivenessCycle) == 1);
static_assert(static_cast<int>(FailureCode::AddressCollision) == 2);
static_assert(static_cast<int>(FailureCode::AllocationOverflow) == 3);
static_assert(static_cast<int>(FailureCode::ArenaTooSmall) == 4);
static_assert(static_cast<int>(FailureCode::AlignmentViolation) == 5);
static_assert(static_cast<int>(FailureCode::IoError) == 6);
static_assert(static_cast<int>(FailureCode::InvalidArgument) == 7);
static_assert(static_cast<int>(FailureCode::CorruptCheckpoint) == 8);
static_assert(static_cast<int>(FailureCode::Cancelled) == 9);
static_assert(static_cast<int>(FailureCode::UnsupportedTensorRank) == 10);
static_assert(static_cast<int>(FailureCode::InvalidParamBlockAbi) == 11);
static_assert(static_cast<int>(FailureCode::InvalidExecutionPlan) == 12);
static_assert(static_cast<int>(FailureCode::UnsupportedOpcode) == 13);
static_assert(static_cast<int>(FailureCode::BatchUnsupported) == 14);
static_assert(static_cast<int>(FailureCode::DeviceError) == 15);
static_assert(static_cast<int>(FailureCode::LazyEngineError) == 16);
static_assert(static_cast<int>(FailureCode::UnboundDimension) == 17);
static_assert(static_cast<int>(FailureCode::MemoryBudgetExceeded) == 18);
static_assert(static_cast<int>(FailureCode::ShapeEnvelopeViolation) == 19);

// Every code, in value order (tests and docs walk it).
inline constexpr FailureCode kAllFailureCodes[] = {FailureCode::InvalidIrShapes,
                                                   FailureCode::LivenessCycle,
                                                   FailureCode::AddressCollision,
                                                   FailureCode::AllocationOverflow,
                                                   FailureCode::ArenaTooSmall,
                                                   FailureCode::AlignmentViolation,
                                                   FailureCode::IoError,
                                                   FailureCode::InvalidArgument,
                                                   FailureCode::CorruptCheckpoint,
                                                   FailureCode::Cancelled,
                                                   FailureCode::UnsupportedTensorRank,
                                                   FailureCode::InvalidParamBlockAbi,
                                                   FailureCode::InvalidExecutionPlan,
                                                   FailureCode::UnsupportedOpcode,
                                                   FailureCode::BatchUnsupported,
                                                   FailureCode::DeviceError,
                                                   FailureCode::LazyEngineError,
                                                   FailureCode::UnboundDimension,
                                                   FailureCode::MemoryBudgetExceeded,
                                                   FailureCode::ShapeEnvelopeViolation};

// Process exit status for an error that is no Failure: a bug in tmmu, never bad input. Apart
// from 1 (a command's "no": plans differ), 2 (usage) and 10 + code, so scripts can tell it.
inline constexpr int kInternalErrorExitStatus = 3;

// Process exit status for a failure: 2 for a usage error (InvalidArgument), 10 + the code's
// value otherwise, so scripts can tell an arena that is too small from a malformed model.
constexpr int failure_exit_status(FailureCode code) {
    return code == FailureCode::InvalidArgument ? 2 : 10 + static_cast<int>(code);
}

std::string_view failure_code_name(FailureCode code);

class Failure : public std::runtime_error {
  public:
    Failure(FailureCode code, std::string where, std::string message,
            std::optional<uint64_t> step = std::nullopt);
    FailureCode code() const { return code_; }
    const std::string& where() const { return where_; }
    const std::string& message() const { return message_; }
    // The plan's time step the failure is about, where there is one (the first step an arena
    // overflows, the step two tensors collide): a trace's failure record carries it (seed 0.Z).
    const std::optional<uint64_t>& step() const { return step_; }
    // The seed operator that was running ("UML_OS.Model.AnalyzeLiveness_v1", ...), named by the
    // planner as the failure leaves it; empty for failures outside planning (reading a model).
    const std::string& operator_name() const { return operator_; }
    // Names the operator unless an inner one already did (the innermost stage is the one that
    // failed).
    void name_operator(std::string_view op) {
        if (operator_.empty()) operator_ = op;
    }

  private:
    FailureCode code_;
    std::string where_;
    std::string message_;
    std::optional<uint64_t> step_;
    std::string operator_;
};

[[noreturn]] void fail(FailureCode code, std::string where, std::string message);
// A failure about one time step of the plan (Failure::step).
[[noreturn]] void fail_at_step(FailureCode code, std::string where, std::string message,
                               uint64_t step);

} // namespace tmmu
