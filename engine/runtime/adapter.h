#pragma once
// How a backend executes an instruction (seed 002, A3 and A5): every backend declares a static
// table of 256 adapters indexed by opcode, checked against a plan once when it loads; the
// executor then calls table[opcode] per instruction with the instruction's operands already
// resolved to memory. Adapters are batched: one call covers every row (active slot or prompt
// token), never a host loop over slots.
#include "runtime/execution_plan.h"

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

namespace tmmu::runtime {

// What one step runs over. Decode: one row per active slot, each at its own position. Prefill:
// one row per prompt token of one slot, at positions start .. start + rows - 1. The spans, like
// every Operands pointer, are in the backend's memory: host memory on the CPU, device memory on
// a GPU (an adapter there passes them to its kernels and never reads them on the host).
struct ExecutionContext {
    PlanMode mode = PlanMode::Decode;
    uint32_t rows = 0;
    std::span<const uint32_t> slot_of_row;     // which slot's state a row reads and writes
    std::span<const uint32_t> position_of_row; // the row's token position in its sequence
    std::span<float> workspace;                // scratch for one instruction, sized at load
    void* queue = nullptr; // where a GPU adapter enqueues its work (CUDA: a CudaQueue)
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
    uint32_t half_weights = 0; // bit i: weights[i] holds f16 values (GPU backends' f16 runs)
    // Set where a GPU backend folded the residual add after this instruction into it
    // (runtime/gpu_fusion.h): added to the output as it is written. Null otherwise.
    const float* output_residual = nullptr;
};

// An operand's memory as the f32 data every v1 adapter takes (host or device pointers alike).
inline const float* input_f32(const Operands& o, size_t i) {
    return static_cast<const float*>(o.inputs[i]);
}
inline const float* weight_f32(const Operands& o, size_t i) {
    return static_cast<const float*>(o.weights[i]);
}
inline bool weight_is_f16(const Operands& o, size_t i) {
    return (o.half_weights >> i) & 1;
}
inline float* output_f32(const Operands& o) {
    return static_cast<float*>(o.output);
}

using AdapterFn = void (*)(const ExecutionContext&, const Operands&);
using AdapterTable = std::array<AdapterFn, 256>;

// Per opcode, checked when a plan loads (seed A3): a batch above max_batch_size is refused
// then, never handled by a fallback in the token loop.
struct AdapterCapability {
    bool supports_batch = true;
    bool supports_graph_emit = false;
    uint32_t max_batch_size = 0;       // 0: no limit
    bool supports_rope_scaling = true; // multihead_attention: AttentionParams::rope_scaling
};
using AdapterCapabilities = std::array<AdapterCapability, 256>;

// A backend's static table from its (opcode, adapter) pairs, every other entry null.
struct AdapterEntry {
    Opcode opcode;
    AdapterFn fn;
};
constexpr AdapterTable make_adapter_table(std::initializer_list<AdapterEntry> entries) {
    AdapterTable t{};
    for (const AdapterEntry& e : entries)
        t[uint8_t(e.opcode)] = e.fn;
    return t;
}
// Whether `table` has an adapter for every opcode of kAllOpcodes (backends static_assert it).
constexpr bool covers_every_opcode(const AdapterTable& table) {
    for (Opcode op : kAllOpcodes)
        if (!table[uint8_t(op)]) return false;
    return true;
}
// `capability` for every opcode of kAllOpcodes, the default (unsupported) elsewhere.
AdapterCapabilities uniform_capabilities(AdapterCapability capability);

// An instruction as a backend's step loop calls it, its operands resolved to memory once at
// load so a step does no lookups. Operands' spans point into `inputs` and `weights`, whose
// buffers stay put when the instruction is moved.
struct BoundInstruction {
    AdapterFn fn = nullptr;
    uint8_t opcode = 0;
    std::vector<const void*> inputs, weights;
    Operands operands;
};
struct StateBinding {
    void* base = nullptr; // the first slot's block
    uint64_t stride = 0;  // bytes from one slot's block to the next
};
// Every instruction of `plan` bound: registers at `arena` + offsets[register], weights and state
// blocks where the backend keeps them.
std::vector<BoundInstruction>
bind_instructions(const ExecutionPlan& plan, const AdapterTable& table, char* arena,
                  std::span<const uint64_t> offsets,
                  const std::function<const void*(WeightRef)>& weight_at,
                  const std::function<StateBinding(uint8_t)>& state_at);

} // namespace tmmu::runtime
