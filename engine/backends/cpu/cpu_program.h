#pragma once
// A compiled plan bound to CPU memory and run step by step (seed 002, A4 stage 2 and A5):
// registers live in one arena at the offsets the planner gave them (map_registers), weights
// in a WeightStore, per-slot state in SlotStates; every instruction's operands are resolved
// once at load, so a step is a loop of adapter calls with no lookups.
#include "backends/cpu/memory_check.h"
#include "runtime/adapter.h"
#include "runtime/physical_mapping.h"
#include "runtime/program.h"
#include "runtime/run_record.h"
#include "runtime/weights.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tmmu::cpu {

// Every state block of a plan for `slots` slots: one allocation per block, slot s at
// s * stride bytes (64-byte aligned). Programs bind these addresses once, so a slot's memory
// stays in place for the object's life: releasing a slot discards its contents (poisoned,
// marked unallocated) and the next Allocate zero-fills it again when the descriptor asks.
class SlotStates {
  public:
    SlotStates(const runtime::ExecutionPlan& plan, uint32_t slots);
    uint32_t slot_count() const { return slots_; }
    void* base(uint8_t state) { return blocks_[state].data(); }
    uint64_t stride(uint8_t state) const { return strides_[state]; }
    uint64_t bytes(uint8_t state) const { return sizes_[state]; }
    // Whether `plan` has exactly these state blocks (its decode and prefill plans share them).
    bool fits(const runtime::ExecutionPlan& plan) const;

    // Carries out the lifecycle matrix (runtime/state.h) for every block of `slot`; `parent` is
    // the slot a CloneForFork copies from. Returns what it did to the first block, for tests.
    runtime::StateAction apply(runtime::StateEvent event, uint32_t slot, uint32_t parent = 0);
    bool allocated(uint32_t slot) const { return allocated_[slot]; }

  private:
    uint32_t slots_;
    std::vector<std::vector<float>> blocks_;
    std::vector<uint64_t> strides_, sizes_;
    std::vector<runtime::StateDescriptor> descriptors_;
    std::vector<bool> allocated_;
};

class CpuProgram final : public runtime::Program {
  public:
    // Load: the plan's states must be the ones `states` was made for, and `weights` must hold
    // one entry per plan weight (INVALID_ARGUMENT otherwise); the plan is checked against the
    // CPU adapter table (check_backend_supports), which covers every opcode with no batch limit.
    // check_memory: every step runs under MemoryCheck (memory_check.h), slower, for finding plan
    // and adapter bugs.
    CpuProgram(runtime::CompiledPlan plan, const runtime::WeightStore& weights, SlotStates& states,
               runtime::RegisterLayout layout = runtime::RegisterLayout::Planned,
               bool check_memory = false);

    // runtime::Program::run; the logits point into the arena.
    std::span<const float> run(std::span<const int32_t> tokens, std::span<const uint32_t> slots,
                               std::span<const uint32_t> positions) override;

    const runtime::CompiledPlan& plan() const { return plan_; }
    // Adapter calls per opcode (seed 002, A8), off unless asked for: then the step loop does
    // no counting work at all (one predictable branch per call, no atomics anywhere; a step
    // runs on one thread).
    void set_counting(bool on) override { counting_ = on; }
    const runtime::DispatchCounters& counters() const override { return counters_; }
    uint64_t register_bytes() const override { return arena_.size() * sizeof(float); }

  private:
    runtime::CompiledPlan plan_;
    std::vector<uint64_t> offset_; // per register: its byte offset in arena_
    std::vector<float> arena_, workspace_;
    std::unique_ptr<MemoryCheck> check_;
    std::vector<runtime::BoundInstruction> bound_;
    SlotStates& states_;
    runtime::StepLimits limits_;
    bool counting_ = false;
    runtime::DispatchCounters counters_;
};

} // namespace tmmu::cpu
