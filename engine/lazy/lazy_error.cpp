#include "lazy/lazy_error.h"

#include <fmt/format.h>

namespace tmmu::lazy {

std::string_view lazy_error_name(LazyError e) {
    switch (e) {
    case LazyError::HostReadInCompile:
        return "HostReadInCompileError";
    case LazyError::AsyncInCompile:
        return "AsyncInCompileError";
    case LazyError::InvalidTraceTensorEscape:
        return "InvalidTraceTensorEscapeError";
    case LazyError::InputSignatureMismatch:
        return "InputSignatureMismatchError";
    case LazyError::StateSlotAliasMismatch:
        return "StateSlotAliasMismatchError";
    case LazyError::CompiledIllegalLocAccess:
        return "CompiledIllegalLocAccessError";
    case LazyError::TensorHostCoercion:
        return "TensorHostCoercionError";
    case LazyError::DisposedTensor:
        return "DisposedTensorError";
    case LazyError::MissingExternalState:
        return "MissingExternalStateError";
    case LazyError::InvalidatedLoc:
        return "InvalidatedLocError";
    case LazyError::InvalidatedGrad:
        return "InvalidatedGradError";
    case LazyError::SavedTensorModified:
        return "SavedTensorModifiedError";
    case LazyError::NullStateSlot:
        return "NullStateSlotError";
    case LazyError::CheckpointImpureRegion:
        return "CheckpointImpureRegionError";
    case LazyError::CheckpointDeterminism:
        return "CheckpointDeterminismError";
    case LazyError::CheckpointReentrancy:
        return "CheckpointReentrancyError";
    case LazyError::CheckpointCompiledNotPure:
        return "CheckpointCompiledNotPureError";
    case LazyError::CheckpointCompiledAutoExternalize:
        return "CheckpointCompiledAutoExternalizeError";
    case LazyError::CheckpointPendingLocMaterialize:
        return "CheckpointPendingLocMaterializeError";
    case LazyError::BackwardGraphFreed:
        return "BackwardGraphFreedError";
    case LazyError::NonReentrantBackward:
        return "NonReentrantBackwardError";
    case LazyError::KernelExecution:
        return "KernelExecutionError";
    case LazyError::CompiledExecution:
        return "CompiledExecutionError";
    case LazyError::EngineBusy:
        return "EngineBusyError";
    case LazyError::PoisonedEngine:
        return "PoisonedEngineError";
    }
    return "UnknownLazyError";
}

LazyFailure::LazyFailure(LazyError kind, std::string where, const std::string& message)
    : Failure(FailureCode::LazyEngineError, std::move(where),
              fmt::format("{}: {}", lazy_error_name(kind), message)),
      kind_(kind) {}

void raise(LazyError kind, std::string where, const std::string& message) {
    throw LazyFailure(kind, std::move(where), message);
}

} // namespace tmmu::lazy
