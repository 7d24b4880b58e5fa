#pragma once
// How a backend executes an instruction (seed 002, A3 and A5): every backend declares a static
// table of 256 adapters indexed by opcode, checked against a plan once when it loads; the
// executor then calls table[opcode] per instruction with the instruction's operands already
// resolved to memory. Adapters are batched: one call covers every row (active slot or prompt
// token), never a host loop over slots.
#include "runtime/execution_plan.h"

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tmmu::runtime {

// What one step runs over. Decode: one row per active slot, each at its own position. Prefill:
// one row per prompt token of one slot, at positions start .. start + rows - 1.
struct ExecutionContext {
    PlanMode mode = PlanMode::Decode;
    uint32_t rows = 0;
    std::span<const uint32_t> slot_of_row;     // which slot's state a row reads and writes
    std::span<const uint32_t> position_of_row; // the row's token position in its sequence
    std::span<float> workspace;                // scratch for one instruction, sized at load
};

// An instruction's operands, resolved: registers and weights to memory, the state block to
// the first slot's block (slot s at state + s * state_stride bytes).
struct Operands {
    std::span<const void* const> inputs;
    void* output = nullptr;
    std::span<const void* const> weights;
    void* state = nullptr;
    uint64_t state_stride = 0;          // bytes from one slot's block to the next
    uint64_t state_bytes = 0;           // one slot's block as its descriptor sizes it
    const ParamBlock* params = nullptr; // checked at load for this opcode
};

using AdapterFn = void (*)(const ExecutionContext&, const Operands&);
using AdapterTable = std::array<AdapterFn, 256>;

// Per opcode, checked when a plan loads (seed A3): a batch above max_batch_size is refused
// then, never handled by a fallback in the token loop.
struct AdapterCapability {
    bool supports_batch = true;
    bool supports_graph_emit = false;
    uint32_t max_batch_size = 0; // 0: no limit
};
using AdapterCapabilities = std::array<AdapterCapability, 256>;

} // namespace tmmu::runtime
