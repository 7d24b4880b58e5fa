#pragma once
// Plans verified by execution (issue 12): with memory checks on, every register has guard bytes
// on both sides, each register's bytes are fingerprinted when its producer has written them and
// checked whenever an instruction reads it, and a register is filled with poison the moment its
// last reader is done. So a plan that lets one register overwrite another that is still live,
// a liveness that ends a register too early, and an adapter that writes past its output are all
// caught at the instruction where they happen, named with the register and the byte range,
// as ADDRESS_COLLISION; none can pass silently as slightly wrong numbers.
#include "runtime/execution_plan.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tmmu::cpu {

inline constexpr uint64_t kGuardBytes = 64;
inline constexpr uint8_t kGuardByte = 0xFD;  // bytes around every register
inline constexpr uint8_t kPoisonByte = 0xFF; // a dead register's bytes (f32: NaN)

class MemoryCheck {
  public:
    // `offset`: each register's data offset in `arena`, with kGuardBytes free on both sides.
    MemoryCheck(const runtime::CompiledPlan& plan, std::span<const uint64_t> offset,
                std::span<uint8_t> arena);

    void start_step();                       // every fingerprint and poisoning forgotten
    void host_wrote(runtime::RegisterRef r); // a plan input is in place (no guards: host data)
    void before(uint32_t instruction); // its inputs are as their producers left them; guards laid
    void after(uint32_t instruction);  // guards intact; fingerprint outputs; poison the dead

  private:
    uint64_t fingerprint(runtime::RegisterRef r) const;
    void lay_guards(runtime::RegisterRef r);
    std::string where(uint32_t instruction) const;
    std::string describe(uint16_t reg) const;
    [[noreturn]] void overwritten(uint32_t reader, runtime::RegisterRef r) const;

    const runtime::CompiledPlan& plan_;
    std::span<const uint64_t> offset_;
    std::span<uint8_t> arena_;
    std::vector<uint32_t> producer_; // per register: its producing instruction (host: max)
    std::vector<uint64_t> print_;    // per register: fingerprint once written
    std::vector<std::pair<uint32_t, uint16_t>>
        poisoned_; // this step: (after instruction, register)
};

} // namespace tmmu::cpu
