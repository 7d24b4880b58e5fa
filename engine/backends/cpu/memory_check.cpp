#include "backends/cpu/memory_check.h"

#include "core/failure.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

constexpr uint32_t kNotYet = std::numeric_limits<uint32_t>::max();

} // namespace

MemoryCheck::MemoryCheck(const CompiledPlan& plan, std::span<const uint64_t> offset,
                         std::span<uint8_t> arena)
    : plan_(plan), offset_(offset), arena_(arena) {
    const ExecutionPlan& p = plan.plan;
    producer_.assign(p.registers.size(), kNotYet);
    for (uint32_t i = 0; i < p.instructions.size(); ++i)
        for (RegisterRef r : p.instructions[i].outputs)
            producer_[r.id] = i;
}

uint64_t MemoryCheck::fingerprint(RegisterRef r) const {
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a over the register's bytes
    const uint8_t* b = arena_.data() + offset_[r.id];
    for (uint64_t i = 0; i < plan_.plan.registers[r.id].view.bytes(); ++i)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

std::string MemoryCheck::where(uint32_t instruction) const {
    return fmt::format("{} instruction {} ({})", plan_.plan.name, instruction,
                       opcode_name(plan_.plan.instructions[instruction].opcode));
}

std::string MemoryCheck::describe(uint16_t reg) const {
    const uint64_t begin = offset_[reg];
    return fmt::format("register {} '{}' [{}, {})", reg, plan_.plan.registers[reg].name, begin,
                       begin + plan_.plan.registers[reg].view.bytes());
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
    poisoned_.clear();
}

void MemoryCheck::host_wrote(RegisterRef r) {
    print_[r.id] = fingerprint(r);
}

// Names what changed the register, walking back from its reader: an instruction whose output
// meets its bytes, or a register poisoned as dead whose bytes meet them (itself: the liveness
// ended it too early; another: the two share bytes while this one is live).
void MemoryCheck::overwritten(uint32_t reader, RegisterRef r) const {
    const ExecutionPlan& p = plan_.plan;
    auto meets = [&](uint16_t other) {
        const uint64_t b = offset_[other], e = b + p.registers[other].view.bytes();
        return b < offset_[r.id] + p.registers[r.id].view.bytes() && offset_[r.id] < e;
    };
    const uint32_t from = producer_[r.id] == kNotYet ? 0 : producer_[r.id];
    std::string cause;
    for (uint32_t j = reader; j-- > from && cause.empty();) {
        for (const auto& [at, dead] : poisoned_)
            if (at == j && meets(dead))
                cause = dead == r.id ? fmt::format("the liveness ended it after instruction {}, "
                                                   "though this instruction still reads it",
                                                   j)
                                     : fmt::format("{} was poisoned as dead after instruction "
                                                   "{} and shares its bytes",
                                                   describe(dead), j);
        const RegisterRef out = p.instructions[j].outputs[0];
        if (cause.empty() && j != from && meets(out.id))
            cause = fmt::format("{} wrote {} over its bytes", where(j), describe(out.id));
    }
    if (cause.empty()) cause = "nothing the plan wrote meets it (a wild write)";
    fail(FailureCode::AddressCollision, where(reader),
         fmt::format("reads {}, which changed after its producer wrote it: {}", describe(r.id),
                     cause));
}

void MemoryCheck::before(uint32_t instruction) {
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.inputs)
        if (fingerprint(r) != print_[r.id]) overwritten(instruction, r);
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
                    fail(FailureCode::AddressCollision, where(instruction),
                         fmt::format("wrote outside its output {}: guard byte at {} changed",
                                     describe(r.id), uint64_t(guard + i - arena_.data())));
        print_[r.id] = fingerprint(r);
    }
    const auto& dies = plan_.liveness.kill_after_instruction[instruction];
    for (size_t r = 0; r < offset_.size(); ++r)
        if ((dies[r / 64] >> (r % 64)) & 1) {
            std::memset(arena_.data() + offset_[r], kPoisonByte,
                        plan_.plan.registers[r].view.bytes());
            poisoned_.emplace_back(instruction, uint16_t(r));
        }
}

} // namespace tmmu::cpu
