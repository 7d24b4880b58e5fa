#include "core/failure.h"

#include <fmt/format.h>

namespace tmmu {

std::string_view failure_code_name(FailureCode code) {
    switch (code) {
    case FailureCode::InvalidIrShapes:
        return "INVALID_IR_SHAPES";
    case FailureCode::LivenessCycle:
        return "LIVENESS_CYCLE";
    case FailureCode::AddressCollision:
        return "ADDRESS_COLLISION";
    case FailureCode::AllocationOverflow:
        return "ALLOCATION_OVERFLOW";
    case FailureCode::ArenaTooSmall:
        return "ARENA_TOO_SMALL";
    case FailureCode::AlignmentViolation:
        return "ALIGNMENT_VIOLATION";
    case FailureCode::IoError:
        return "IO_ERROR";
    case FailureCode::InvalidArgument:
        return "INVALID_ARGUMENT";
    case FailureCode::CorruptCheckpoint:
        return "CORRUPT_CHECKPOINT";
    case FailureCode::Cancelled:
        return "CANCELLED";
    case FailureCode::UnsupportedTensorRank:
        return "UNSUPPORTED_TENSOR_RANK";
    case FailureCode::InvalidParamBlockAbi:
        return "INVALID_PARAM_BLOCK_ABI";
    case FailureCode::InvalidExecutionPlan:
        return "INVALID_EXECUTION_PLAN";
    case FailureCode::UnsupportedOpcode:
        return "UNSUPPORTED_OPCODE";
    case FailureCode::BatchUnsupported:
        return "BATCH_UNSUPPORTED";
    case FailureCode::DeviceError:
        return "DEVICE_ERROR";
    case FailureCode::LazyEngineError:
        return "LAZY_ENGINE_ERROR";
    case FailureCode::UnboundDimension:
        return "UNBOUND_DIMENSION";
    case FailureCode::MemoryBudgetExceeded:
        return "MEMORY_BUDGET_EXCEEDED";
    case FailureCode::ShapeEnvelopeViolation:
        return "SHAPE_ENVELOPE_VIOLATION";
    }
    return "UNKNOWN";
}

Failure::Failure(FailureCode code, std::string where, std::string message,
                 std::optional<uint64_t> step)
    : std::runtime_error(fmt::format("{} at {}: {}", failure_code_name(code), where, message)),
      code_(code), where_(std::move(where)), message_(std::move(message)), step_(step) {}

void fail(FailureCode code, std::string where, std::string message) {
    throw Failure(code, std::move(where), std::move(message));
}

void fail_at_step(FailureCode code, std::string where, std::string message, uint64_t step) {
    throw Failure(code, std::move(where), std::move(message), step);
}

} // namespace tmmu
