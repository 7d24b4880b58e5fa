#pragma once
// Physical memory for a compiled plan's registers, through the planner (seed 002, A4 stage 2,
// done with seed 000's machinery): each register becomes a buffer live from its producer to its
// last reader, the offset strategies pack them into one arena (one device allocation, every
// register bound at base + offset), and the planner's slot colouring gives the seed's
// register -> physical buffer mapping for backends that want separate buffers.
#include "plan/planner.h"
#include "runtime/execution_plan.h"
#include "runtime/run_record.h"

#include <cstdint>

namespace tmmu::runtime {

// Register buffers start on this boundary: a cache line, and wide enough for any SIMD load.
inline constexpr uint64_t kRegisterAlignment = 64;

struct PhysicalSpec {
    uint64_t size = 0;
    uint64_t align = kRegisterAlignment;
};

struct PhysicalMapping {
    std::vector<uint16_t> register_to_physical; // register -> physical buffer (its slot)
    uint16_t physical_count = 0; // == peak_registers: colouring intervals needs no more
    std::vector<PhysicalSpec> physical_specs; // per physical buffer: its largest register
};

struct RegisterMemory {
    Plan arena; // one arena (plan_problem's "arena"); its tensors are the registers, by name
    std::vector<uint64_t> offset; // per register: byte offset in the arena
    PhysicalMapping mapping;
    uint64_t arena_bytes = 0;    // the arena's height: what the plan allocates
    uint64_t separate_bytes = 0; // one allocation per register, for comparison
    uint64_t slot_bytes = 0;     // one allocation per physical buffer
};

// Time steps are instructions: register r lives over [producer, last read + 1); plan inputs
// from 0, plan outputs through the end, a register nothing reads at its producer only. So an
// instruction's outputs never share bytes with its inputs. The strategy is options.strategy
// (default auto); every plan is validated as the planner validates any plan.
// With guard_bytes > 0 every register's buffer is that much larger on each side (the CPU
// backend's memory checks put guard bytes there); offsets are still those of the data.
RegisterMemory map_registers(const CompiledPlan& plan, const PlanOptions& options,
                             const Progress& progress, uint64_t guard_bytes = 0);

// Every register's byte offset as a backend binds it: the planner's (map_registers with the
// default options) or, for the planned-vs-unplanned gate, each register its own 64-byte
// aligned bytes in register order. `guard_bytes` as for map_registers.
std::vector<uint64_t> register_offsets(const CompiledPlan& plan, RegisterLayout layout,
                                       uint64_t guard_bytes = 0);
// The arena those offsets need: the end of the last register (plus its guard).
uint64_t register_arena_bytes(const ExecutionPlan& plan, const std::vector<uint64_t>& offsets,
                              uint64_t guard_bytes = 0);

} // namespace tmmu::runtime
