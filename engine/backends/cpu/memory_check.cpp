#include "backends/cpu/memory_check.h"

#include <cstring>

namespace tmmu::cpu {

using namespace tmmu::runtime;

MemoryCheck::MemoryCheck(const CompiledPlan& plan, std::span<const uint64_t> offset,
                         std::span<uint8_t> arena)
    : plan_(plan), offset_(offset), arena_(arena), report_(plan, offset) {}

uint64_t MemoryCheck::fingerprint(RegisterRef r) const {
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a over the register's bytes
    const uint8_t* b = arena_.data() + offset_[r.id];
    for (uint64_t i = 0; i < plan_.plan.registers[r.id].view.bytes(); ++i)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

// Guards are laid right before a register is written: while it is dead, its guard bytes may
// belong to another register (the planner packs registers whose lifetimes do not meet).
void MemoryCheck::lay_guards(RegisterRef r) {
    uint8_t* data = arena_.data() + offset_[r.id];
    std::memset(data - kGuardBytes, kGuardByte, kGuardBytes);
    std::memset(data + plan_.plan.registers[r.id].view.bytes(), kGuardByte, kGuardBytes);
}

void MemoryCheck::start_step() {
    print_.assign(offset_.size(), 0);
}

void MemoryCheck::host_wrote(RegisterRef r) {
    print_[r.id] = fingerprint(r);
}

void MemoryCheck::before(uint32_t instruction) {
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.inputs)
        if (fingerprint(r) != print_[r.id]) report_.overwritten(instruction, r);
    for (RegisterRef r : insn.outputs)
        lay_guards(r);
}

void MemoryCheck::after(uint32_t instruction) {
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.outputs) {
        const uint8_t* data = arena_.data() + offset_[r.id];
        const uint64_t bytes = plan_.plan.registers[r.id].view.bytes();
        for (const uint8_t* guard : {data - kGuardBytes, data + bytes})
            for (uint64_t i = 0; i < kGuardBytes; ++i)
                if (guard[i] != kGuardByte)
                    report_.guard_changed(instruction, r, uint64_t(guard + i - arena_.data()));
        print_[r.id] = fingerprint(r);
    }
    for (uint16_t r : report_.dies_after(instruction))
        std::memset(arena_.data() + offset_[r], kPoisonByte, plan_.plan.registers[r].view.bytes());
}

} // namespace tmmu::cpu
