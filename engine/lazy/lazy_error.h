#pragma once
// The token/effect engine's error taxonomy (seed 004, section 16) as named errors. Each is a
// Failure with code LAZY_ENGINE_ERROR whose message starts with the spec's error name, so the
// CLI exits with one status for "the program broke a rule" and people read which rule.
#include "core/failure.h"

#include <string>
#include <string_view>

namespace tmmu::lazy {

// Every name of the spec is here; a few are never raised, because what they guard against cannot
// happen in this engine: InputSignatureMismatch, StateSlotAliasMismatch, CompiledIllegalLocAccess
// and NullStateSlot (a call whose signature changed stages a new variant; there are no bound
// state slots), CheckpointDeterminism (random draws are keyed, so a replay draws the same
// values), CheckpointPendingLocMaterialize (a materializing store is never replayed; the spec
// lets it fold into CheckpointImpureRegion), NonReentrantBackward (nothing runs inside a
// backward that could call another) and CompiledExecution (a failure inside a compiled call is
// reported as the same failure outside one would be, KernelExecution for an unnamed one).
enum class LazyError {
    // 16.1 staging/compile
    HostReadInCompile,
    AsyncInCompile,
    InvalidTraceTensorEscape,
    InputSignatureMismatch,
    StateSlotAliasMismatch,
    CompiledIllegalLocAccess,
    // 16.2 coercion and API misuse
    TensorHostCoercion,
    DisposedTensor,
    // 16.3 state/loc
    MissingExternalState,
    InvalidatedLoc,
    InvalidatedGrad,
    SavedTensorModified,
    NullStateSlot,
    // 16.4 checkpoint
    CheckpointImpureRegion,
    CheckpointDeterminism,
    CheckpointReentrancy,
    CheckpointCompiledNotPure,
    CheckpointCompiledAutoExternalize,
    CheckpointPendingLocMaterialize,
    // 16.5 autograd/backward
    BackwardGraphFreed,
    NonReentrantBackward,
    // 16.6 execution / failure / serialization
    KernelExecution,
    CompiledExecution,
    EngineBusy,
    PoisonedEngine,
};

// "SavedTensorModifiedError", ... as the spec spells them.
std::string_view lazy_error_name(LazyError e);

class LazyFailure : public Failure {
  public:
    LazyFailure(LazyError kind, std::string where, const std::string& message);
    LazyError kind() const { return kind_; }

  private:
    LazyError kind_;
};

[[noreturn]] void raise(LazyError kind, std::string where, const std::string& message);

} // namespace tmmu::lazy
