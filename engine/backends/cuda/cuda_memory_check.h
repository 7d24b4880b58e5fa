#pragma once
// The CUDA backend's memory checks (runtime/memory_check.h says what they are), on the device:
// enqueued on the step's stream around every instruction (guards set before it writes,
// fingerprints checked before it reads, poison set after its inputs die), with the first
// finding written to a small device report copied to pinned memory at the end of the step. The
// step runs to its end either way; the finding names the instruction where it happened. The
// same design as Vulkan's (vulkan_memory_check.h), whose tests it shares.
#include "backends/cuda/cuda_memory.h"
#include "runtime/memory_check.h"

#include <span>

namespace tmmu::cuda {

class DeviceMemoryCheck {
  public:
    // `offset`: each register's data offset in `arena`, with kGuardBytes free on both sides.
    DeviceMemoryCheck(const runtime::CompiledPlan& plan, std::span<const uint64_t> offset,
                      char* arena);

    void start(void* stream); // once the plan's input is in the arena
    void before(uint32_t instruction, void* stream);
    void after(uint32_t instruction, void* stream);
    void end(void* stream); // copies the report out
    // After the step has finished: ADDRESS_COLLISION naming the first finding, if any.
    void finish() const;

  private:
    void check(void* stream, runtime::RegisterRef r, uint32_t instruction, uint32_t op);

    const runtime::CompiledPlan& plan_;
    std::span<const uint64_t> offset_;
    char* arena_;
    runtime::MemoryCheckReport report_;
    DeviceBuffer prints_, findings_;
    PinnedBuffer read_back_;
};

} // namespace tmmu::cuda
