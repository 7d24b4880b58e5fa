#include "runtime/gpu_fusion.h"

namespace tmmu::runtime {

namespace {

// The adapter of an add folded into the instruction before it: its work is done there.
void folded(const ExecutionContext&, const Operands&) {}

bool ends_in_product(Opcode op) {
    return op == Opcode::MultiheadAttention || op == Opcode::Swiglu || op == Opcode::GeluMlp;
}

// How many times each register is read: by instructions' inputs, and once more as a plan output.
std::vector<uint32_t> read_counts(const ExecutionPlan& plan) {
    std::vector<uint32_t> reads(plan.registers.size(), 0);
    for (const Instruction& insn : plan.instructions)
        for (RegisterRef r : insn.inputs)
            ++reads[r.id];
    for (RegisterRef r : plan.plan_outputs)
        ++reads[r.id];
    return reads;
}

bool same_or_apart(const ExecutionPlan& plan, std::span<const uint64_t> offsets, uint32_t a,
                   uint32_t b) {
    const uint64_t a0 = offsets[a], a1 = a0 + plan.registers[a].view.bytes();
    const uint64_t b0 = offsets[b], b1 = b0 + plan.registers[b].view.bytes();
    return (a0 == b0 && a1 == b1) || a1 <= b0 || b1 <= a0;
}

} // namespace

uint32_t fold_residual_adds(const ExecutionPlan& plan, std::span<const uint64_t> offsets,
                            std::vector<BoundInstruction>& bound) {
    const std::vector<uint32_t> reads = read_counts(plan);
    uint32_t count = 0;
    for (size_t i = 0; i + 1 < plan.instructions.size(); ++i) {
        const Instruction &producer = plan.instructions[i], &add = plan.instructions[i + 1];
        const uint32_t r = producer.outputs[0].id;
        if (!ends_in_product(producer.opcode) || add.opcode != Opcode::ResidualAdd ||
            add.inputs.size() != 2 || reads[r] != 1)
            continue;
        const int mine = add.inputs[0].id == r ? 0 : add.inputs[1].id == r ? 1 : -1;
        if (mine < 0 || !same_or_apart(plan, offsets, add.inputs[1 - mine].id, add.outputs[0].id))
            continue;
        bound[i].operands.output = bound[i + 1].operands.output;
        bound[i].operands.output_residual =
            static_cast<const float*>(bound[i + 1].inputs[1 - mine]);
        bound[i + 1].fn = folded;
        ++count;
    }
    return count;
}

} // namespace tmmu::runtime
