#pragma once
// The Vulkan backend's memory checks (runtime/memory_check.h says what they are), on the
// device: recorded into the step's command buffer around every instruction (guards filled
// before it writes, fingerprints checked before it reads, poison filled after its inputs die),
// with the first finding written to a small host-visible report that the host reads after the
// step. The step runs to its end either way; the finding names the instruction where it
// happened.
#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_kernels.h"
#include "runtime/memory_check.h"

#include <span>

namespace tmmu::vulkan {

class DeviceMemoryCheck {
  public:
    // `offset`: each register's data offset in `arena`, with kGuardBytes free on both sides.
    DeviceMemoryCheck(VulkanContext& context, const runtime::CompiledPlan& plan,
                      std::span<const uint64_t> offset, const Buffer& arena);

    // Recorded at the start of a step, once the plan's input is in the arena.
    void start(CommandBuffer& commands, Recorder& recorder);
    void before(uint32_t instruction, CommandBuffer& commands, Recorder& recorder);
    void after(uint32_t instruction, CommandBuffer& commands, Recorder& recorder);
    // After the step has run: ADDRESS_COLLISION naming the first finding, if any.
    void finish() const;

  private:
    void check(Recorder& recorder, runtime::RegisterRef r, uint32_t instruction, CheckOp op);

    const runtime::CompiledPlan& plan_;
    std::span<const uint64_t> offset_;
    const Buffer& arena_;
    runtime::MemoryCheckReport report_;
    Buffer prints_, findings_; // findings_: one runtime::DeviceCheckFinding, host-visible
};

} // namespace tmmu::vulkan
