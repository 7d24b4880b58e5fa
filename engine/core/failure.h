#pragma once
// Named failure codes. Every bad input ends in a Failure carrying one of these codes plus
// "where" (which tensor, node, field, file:line) and a message saying what was expected.
#include <stdexcept>
#include <string>
#include <string_view>

namespace tmmu {

enum class FailureCode {
    // The seed's allocator codes (UML_OS.TMMU.PrepareMemory_v2, section 0.K).
    InvalidIrShapes,    // malformed IR: bad field, dangling reference, bad shape or dtype
    LivenessCycle,      // the dataflow graph or the given execution order has a cycle
    AddressCollision,   // two tensors alive at once overlap in an arena (corrupt plan)
    AllocationOverflow, // size or offset arithmetic overflows uint64
    ArenaTooSmall,      // a plan does not fit its arena's capacity
    AlignmentViolation, // an offset or pinned placement breaks its alignment
    // Codes for failures outside the allocator proper.
    IoError,           // a file cannot be read or written
    InvalidArgument,   // a command-line or API argument is wrong
    CorruptCheckpoint, // a CBOR checkpoint is malformed or its hash does not match
    Cancelled,         // the caller cancelled long-running work
};

std::string_view failure_code_name(FailureCode code);

class Failure : public std::runtime_error {
  public:
    Failure(FailureCode code, std::string where, std::string message);
    FailureCode code() const { return code_; }
    const std::string& where() const { return where_; }
    const std::string& message() const { return message_; }

  private:
    FailureCode code_;
    std::string where_;
    std::string message_;
};

[[noreturn]] void fail(FailureCode code, std::string where, std::string message);

} // namespace tmmu
