#pragma once
// The CPU backend's memory checks (runtime/memory_check.h says what they are), on the host:
// guards laid before an instruction writes, fingerprints checked before it reads, poison
// written after its inputs die; a finding stops the step at once.
#include "runtime/memory_check.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tmmu::cpu {

using runtime::kGuardByte;
using runtime::kGuardBytes;
using runtime::kPoisonByte;

class MemoryCheck {
  public:
    // `offset`: each register's data offset in `arena`, with kGuardBytes free on both sides.
    MemoryCheck(const runtime::CompiledPlan& plan, std::span<const uint64_t> offset,
                std::span<uint8_t> arena);

    void start_step();                       // every fingerprint forgotten
    void host_wrote(runtime::RegisterRef r); // a plan input is in place (no guards: host data)
    void before(uint32_t instruction); // its inputs are as their producers left them; guards laid
    void after(uint32_t instruction);  // guards intact; fingerprint outputs; poison the dead

  private:
    uint64_t fingerprint(runtime::RegisterRef r) const;
    void lay_guards(runtime::RegisterRef r);

    const runtime::CompiledPlan& plan_;
    std::span<const uint64_t> offset_;
    std::span<uint8_t> arena_;
    runtime::MemoryCheckReport report_;
    std::vector<uint64_t> print_; // per register: fingerprint once written
};

} // namespace tmmu::cpu
