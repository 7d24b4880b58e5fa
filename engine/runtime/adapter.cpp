#include "runtime/adapter.h"

namespace tmmu::runtime {

AdapterCapabilities uniform_capabilities(AdapterCapability capability) {
    AdapterCapabilities c{};
    for (Opcode op : kAllOpcodes)
        c[uint8_t(op)] = capability;
    return c;
}

std::vector<BoundInstruction>
bind_instructions(const ExecutionPlan& plan, const AdapterTable& table, char* arena,
                  std::span<const uint64_t> offsets,
                  const std::function<const void*(WeightRef)>& weight_at,
                  const std::function<StateBinding(uint8_t)>& state_at) {
    std::vector<BoundInstruction> bound;
    for (const Instruction& insn : plan.instructions) {
        BoundInstruction b{table[uint8_t(insn.opcode)], uint8_t(insn.opcode), {}, {}, {}};
        for (RegisterRef r : insn.inputs)
            b.inputs.push_back(arena + offsets[r.id]);
        for (WeightRef w : insn.weights)
            b.weights.push_back(weight_at(w));
        b.operands.inputs = b.inputs;
        b.operands.weights = b.weights;
        b.operands.output = arena + offsets[insn.outputs[0].id];
        b.operands.params = &plan.params[insn.param_block];
        if (insn.state_block != kNoStateBlock) {
            const StateBinding state = state_at(insn.state_block);
            b.operands.state = state.base;
            b.operands.state_stride = state.stride;
            b.operands.state_bytes = plan.states[insn.state_block].size_bytes;
        }
        bound.push_back(std::move(b));
    }
    return bound;
}

} // namespace tmmu::runtime
