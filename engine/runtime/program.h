#pragma once
// What a backend gives the backend-neutral run loop (runtime/generate.h). A Program is one
// compiled plan loaded onto a device and run step by step; an Executor owns the memory a run's
// programs share on that device (the weights and every slot's state blocks) and loads programs
// over it, so a prefill and a decode program read and write the same KV caches.
#include "runtime/execution_plan.h"
#include "runtime/run_record.h"
#include "runtime/weights.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tmmu::runtime {

class Program {
  public:
    virtual ~Program() = default;
    // One step over tokens.size() rows (at most the plan's rows): row r is token tokens[r] of
    // slot slots[r] at position positions[r]. Returns the logits, [rows][vocab], in host memory
    // valid until the next call. INVALID_ARGUMENT for a token outside the vocabulary, a slot
    // that does not exist, a position past the KV cache, or more rows than the plan has.
    virtual std::span<const float> run(std::span<const int32_t> tokens,
                                       std::span<const uint32_t> slots,
                                       std::span<const uint32_t> positions) = 0;
    // Adapter calls per opcode (seed 002, A8), off unless asked for.
    virtual void set_counting(bool on) = 0;
    virtual const DispatchCounters& counters() const = 0; // since the program was loaded
    // Device time per instruction, summed over the counted steps (GPU backends); empty where
    // there is none (the CPU) or nothing was counted.
    virtual std::vector<double> instruction_seconds() const { return {}; }
    virtual uint64_t register_bytes() const = 0; // the arena the registers live in
};

class Executor {
  public:
    virtual ~Executor() = default;
    // A plan with the same weights and state blocks as the one the executor was made for (its
    // prefill or decode twin); INVALID_ARGUMENT otherwise.
    virtual std::unique_ptr<Program> load(CompiledPlan plan) = 0;
    virtual std::string device() const = 0; // what RunRecord::device says
    // What the run holds on the device now (its loaded programs included); zeros on the CPU.
    virtual DeviceMemory device_memory() const { return {}; }
    // The bytes the weights take where the backend keeps them (f16 runs: about half the f32
    // bytes); 0: the host store's f32 bytes.
    virtual uint64_t weight_bytes() const { return 0; }
};

// What a step of a loaded plan may ask for: its rows, token ids below `vocab`, slots below
// `slot_count`, positions below `max_seq` (0: no KV cache, no bound).
struct StepLimits {
    uint32_t rows = 0, vocab = 0, slot_count = 0, max_seq = 0;
};
// The plan's limits for a program over `slots` slots (vocab from its embedding, max_seq from
// its first KV-cache block).
StepLimits step_limits(const ExecutionPlan& plan, uint32_t slots);
// Program::run's argument checks, INVALID_ARGUMENT naming the plan and row.
void check_step(const ExecutionPlan& plan, const StepLimits& limits,
                std::span<const int32_t> tokens, std::span<const uint32_t> slots,
                std::span<const uint32_t> positions);

// Makes a backend's executor for a run: `decode` is the run's decode plan (its weights and
// state blocks), `weights` its weights in host memory (the executor keeps or uploads them),
// `request` the run (slots = batch, register layout, memory checks).
using ExecutorFactory = std::function<std::unique_ptr<Executor>(
    const ExecutionPlan& decode, WeightStore weights, const RunRequest& request)>;

} // namespace tmmu::runtime
