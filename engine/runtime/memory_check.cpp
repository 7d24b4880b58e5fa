#include "runtime/memory_check.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <limits>

namespace tmmu::runtime {

namespace {
constexpr uint32_t kNotYet = std::numeric_limits<uint32_t>::max();
} // namespace

MemoryCheckReport::MemoryCheckReport(const CompiledPlan& plan, std::span<const uint64_t> offset)
    : plan_(plan), offset_(offset) {
    const ExecutionPlan& p = plan.plan;
    producer_.assign(p.registers.size(), kNotYet);
    for (uint32_t i = 0; i < p.instructions.size(); ++i)
        for (RegisterRef r : p.instructions[i].outputs)
            producer_[r.id] = i;
}

std::vector<uint16_t> MemoryCheckReport::dies_after(uint32_t instruction) const {
    const auto& dies = plan_.liveness.kill_after_instruction[instruction];
    std::vector<uint16_t> out;
    for (size_t r = 0; r < offset_.size(); ++r)
        if ((dies[r / 64] >> (r % 64)) & 1) out.push_back(uint16_t(r));
    return out;
}

std::string MemoryCheckReport::where(uint32_t instruction) const {
    return fmt::format("{} instruction {} ({})", plan_.plan.name, instruction,
                       opcode_name(plan_.plan.instructions[instruction].opcode));
}

std::string MemoryCheckReport::describe(uint16_t reg) const {
    const uint64_t begin = offset_[reg];
    return fmt::format("register {} '{}' [{}, {})", reg, plan_.plan.registers[reg].name, begin,
                       begin + plan_.plan.registers[reg].view.bytes());
}

void MemoryCheckReport::overwritten(uint32_t reader, RegisterRef r) const {
    const ExecutionPlan& p = plan_.plan;
    auto meets = [&](uint16_t other) {
        const uint64_t b = offset_[other], e = b + p.registers[other].view.bytes();
        return b < offset_[r.id] + p.registers[r.id].view.bytes() && offset_[r.id] < e;
    };
    const uint32_t from = producer_[r.id] == kNotYet ? 0 : producer_[r.id];
    std::string cause;
    for (uint32_t j = reader; j-- > from && cause.empty();) {
        for (uint16_t dead : dies_after(j)) // the last one poisoned that meets it
            if (meets(dead))
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

void MemoryCheckReport::guard_changed(uint32_t writer, RegisterRef r, uint64_t byte) const {
    fail(
        FailureCode::AddressCollision, where(writer),
        fmt::format("wrote outside its output {}: guard byte at {} changed", describe(r.id), byte));
}

void MemoryCheckReport::raise(const DeviceCheckFinding& found) const {
    const RegisterRef r{uint16_t(found.reg)};
    if (found.code == 1) overwritten(found.instruction, r);
    if (found.code != 2) return;
    // The guard word's first byte that is not kGuardByte, as an arena offset.
    constexpr uint64_t kGuardWords = kGuardBytes / 4;
    const uint64_t word_at = found.word < kGuardWords
                                 ? offset_[r.id] - kGuardBytes + 4 * uint64_t(found.word)
                                 : offset_[r.id] + plan_.plan.registers[r.id].view.bytes() +
                                       4 * (uint64_t(found.word) - kGuardWords);
    uint64_t byte = 0;
    while (byte < 3 && ((found.value >> (8 * byte)) & 0xFF) == kGuardByte)
        ++byte;
    guard_changed(found.instruction, r, word_at + byte);
}

} // namespace tmmu::runtime
