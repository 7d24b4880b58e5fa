#include "backends/cuda/cuda_memory_check.h"

#include "backends/cuda/cuda_kernels.h"

#include <cstring>
#include <cuda_runtime.h>

namespace tmmu::cuda {

using namespace tmmu::runtime;

DeviceMemoryCheck::DeviceMemoryCheck(const CompiledPlan& plan, std::span<const uint64_t> offset,
                                     char* arena)
    : plan_(plan), offset_(offset), arena_(arena), report_(plan, offset),
      prints_(plan.plan.registers.size() * sizeof(uint64_t), plan.plan.name + " fingerprints"),
      findings_(sizeof(DeviceCheckFinding), plan.plan.name + " findings"),
      read_back_(sizeof(DeviceCheckFinding), plan.plan.name + " findings") {}

void DeviceMemoryCheck::check(void* stream, RegisterRef r, uint32_t instruction, uint32_t op) {
    kernels::memory_check(stream, arena_ + offset_[r.id], static_cast<uint64_t*>(prints_.get()),
                          static_cast<uint32_t*>(findings_.get()),
                          uint32_t(plan_.plan.registers[r.id].view.bytes() / 4), r.id, instruction,
                          op);
}

void DeviceMemoryCheck::start(void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    check_cuda(cudaMemsetAsync(findings_.get(), 0, findings_.bytes(), s), "memory check reset");
    check(stream, plan_.plan.plan_inputs[0], 0, 0);
}

// Guards are set right before a register is written: while it is dead, its guard bytes may
// belong to another register (the planner packs registers whose lifetimes do not meet).
void DeviceMemoryCheck::before(uint32_t instruction, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    const Instruction& insn = plan_.plan.instructions[instruction];
    for (RegisterRef r : insn.inputs)
        check(stream, r, instruction, 1);
    for (RegisterRef r : insn.outputs) {
        char* data = arena_ + offset_[r.id];
        check_cuda(cudaMemsetAsync(data - kGuardBytes, kGuardByte, kGuardBytes, s), "guards");
        check_cuda(cudaMemsetAsync(data + plan_.plan.registers[r.id].view.bytes(), kGuardByte,
                                   kGuardBytes, s),
                   "guards");
    }
}

void DeviceMemoryCheck::after(uint32_t instruction, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    for (RegisterRef r : plan_.plan.instructions[instruction].outputs) {
        check(stream, r, instruction, 2);
        check(stream, r, instruction, 0);
    }
    for (uint16_t r : report_.dies_after(instruction))
        check_cuda(cudaMemsetAsync(arena_ + offset_[r], kPoisonByte,
                                   plan_.plan.registers[r].view.bytes(), s),
                   "poison");
}

void DeviceMemoryCheck::end(void* stream) {
    check_cuda(cudaMemcpyAsync(read_back_.get(), findings_.get(), findings_.bytes(),
                               cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)),
               "memory check report");
}

void DeviceMemoryCheck::finish() const {
    DeviceCheckFinding found;
    std::memcpy(&found, read_back_.get(), sizeof(found));
    report_.raise(found);
}

} // namespace tmmu::cuda
