#include "backends/vulkan/vulkan_memory_check.h"

#include "core/assert.h"

#include <cstring>

namespace tmmu::vulkan {

using namespace tmmu::runtime;

namespace {
constexpr uint32_t kGuardWord = 0x01010101u * kGuardByte;
constexpr uint32_t kPoisonWord = 0x01010101u * kPoisonByte;
} // namespace

DeviceMemoryCheck::DeviceMemoryCheck(VulkanContext& context, const CompiledPlan& plan,
                                     std::span<const uint64_t> offset, const Buffer& arena)
    : plan_(plan), offset_(offset), arena_(arena), report_(plan, offset),
      prints_(context, plan.plan.registers.size() * sizeof(uint64_t), MemoryKind::Device,
              plan.plan.name + " fingerprints"),
      findings_(context, sizeof(DeviceCheckFinding), MemoryKind::Host,
                plan.plan.name + " findings") {
    // Fills and kernels address registers by 4-byte words.
    for (const RegisterDesc& r : plan.plan.registers)
        TMMU_ASSERT(r.view.bytes() % 4 == 0, "registers are whole 4-byte words");
}

void DeviceMemoryCheck::check(Recorder& recorder, RegisterRef r, uint32_t instruction, CheckOp op) {
    memory_check(recorder, arena_.address() + offset_[r.id], prints_.address(), findings_.address(),
                 uint32_t(plan_.plan.registers[r.id].view.bytes() / 4), r.id, instruction, op);
}

void DeviceMemoryCheck::start(CommandBuffer& commands, Recorder& recorder) {
    commands.fill(findings_, 0, sizeof(DeviceCheckFinding), 0);
    commands.full_barrier();
    check(recorder, plan_.plan.plan_inputs[0], 0, CheckOp::Fingerprint);
}

// Guards are laid right before a register is written: while it is dead, its guard bytes may
// belong to another register (the planner packs registers whose lifetimes do not meet).
void DeviceMemoryCheck::before(uint32_t instruction, CommandBuffer& commands, Recorder& recorder) {
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.inputs)
        check(recorder, r, instruction, CheckOp::CheckFingerprint);
    commands.full_barrier();
    for (RegisterRef r : insn.outputs) {
        commands.fill(arena_, offset_[r.id] - kGuardBytes, kGuardBytes, kGuardWord);
        commands.fill(arena_, offset_[r.id] + plan_.plan.registers[r.id].view.bytes(), kGuardBytes,
                      kGuardWord);
    }
    commands.full_barrier();
}

void DeviceMemoryCheck::after(uint32_t instruction, CommandBuffer& commands, Recorder& recorder) {
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.outputs) {
        check(recorder, r, instruction, CheckOp::CheckGuards);
        check(recorder, r, instruction, CheckOp::Fingerprint);
    }
    commands.full_barrier();
    for (uint16_t r : report_.dies_after(instruction))
        commands.fill(arena_, offset_[r], plan_.plan.registers[r].view.bytes(), kPoisonWord);
    commands.full_barrier();
}

void DeviceMemoryCheck::finish() const {
    DeviceCheckFinding found;
    std::memcpy(&found, findings_.mapped(), sizeof(found));
    report_.raise(found);
}

} // namespace tmmu::vulkan
