#pragma once
// Plans verified by execution (issues 12 and 13): what every backend's memory checks lay down
// and how they name what they find. With checks on, every register has kGuardBytes of
// kGuardByte on both sides, each register's bytes are fingerprinted when its producer has
// written them and checked whenever an instruction reads it, and a register is filled with
// kPoisonByte the moment its last reader is done. A plan that lets one register overwrite
// another that is still live, a liveness that ends a register too early, and an adapter that
// writes past its output are all caught at the instruction where they happen, named with the
// register and the byte range, as ADDRESS_COLLISION. The CPU backend checks on the host; the
// GPU backends check on the device and read the first finding back after the step.
#include "runtime/execution_plan.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tmmu::runtime {

inline constexpr uint64_t kGuardBytes = 64;
inline constexpr uint8_t kGuardByte = 0xFD;  // bytes around every register
inline constexpr uint8_t kPoisonByte = 0xFF; // a dead register's bytes (f32: NaN)

// The first finding of a GPU backend's checks in a step, as its check kernel writes it.
struct DeviceCheckFinding {
    uint32_t code = 0; // 0: nothing found, 1: a register changed since written, 2: a guard changed
    uint32_t instruction = 0, reg = 0;
    uint32_t word = 0;  // code 2: the guard word (0-15 before the register, 16-31 after it)
    uint32_t value = 0; // code 2: what the word holds
};

// The failures memory checks raise, worded the same on every backend. `offset` is each
// register's data offset in the arena, as the backend bound it.
class MemoryCheckReport {
  public:
    MemoryCheckReport(const CompiledPlan& plan, std::span<const uint64_t> offset);

    // Registers poisoned after `instruction` (its LivenessMap kill set).
    std::vector<uint16_t> dies_after(uint32_t instruction) const;
    // Instruction `reader` found register r changed since its producer wrote it: names what
    // changed it, walking back from the reader (an output that meets its bytes, or a register
    // poisoned as dead whose bytes meet them).
    [[noreturn]] void overwritten(uint32_t reader, RegisterRef r) const;
    // Instruction `writer` changed the guard byte at arena offset `byte` beside its output r.
    [[noreturn]] void guard_changed(uint32_t writer, RegisterRef r, uint64_t byte) const;
    // The failure a device finding names, if there is one (code 0: returns).
    void raise(const DeviceCheckFinding& found) const;

  private:
    std::string where(uint32_t instruction) const;
    std::string describe(uint16_t reg) const;

    const CompiledPlan& plan_;
    std::span<const uint64_t> offset_;
    std::vector<uint32_t> producer_; // per register: its producing instruction (host: max)
};

} // namespace tmmu::runtime
