#include "runtime/execution_plan.h"

#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace tmmu::runtime {

std::string_view plan_mode_name(PlanMode mode) {
    return mode == PlanMode::Decode ? "decode" : "prefill";
}

namespace {

constexpr uint32_t kHost = std::numeric_limits<uint32_t>::max(); // produced before instruction 0

[[noreturn]] void invalid(std::string where, std::string message) {
    fail(FailureCode::InvalidExecutionPlan, std::move(where), std::move(message));
}

std::string at_instruction(const ExecutionPlan& p, size_t i) {
    return fmt::format("{} instruction {} ({})", p.name, i, opcode_name(p.instructions[i].opcode));
}

void check_tables(const ExecutionPlan& p) {
    if (p.registers.size() > std::numeric_limits<uint16_t>::max())
        invalid(p.name, fmt::format("{} registers: at most 65535", p.registers.size()));
    if (p.states.size() >= kNoStateBlock)
        invalid(p.name, fmt::format("{} state blocks: at most 254", p.states.size()));
    for (size_t r = 0; r < p.registers.size(); ++r)
        check_view(p.registers[r].view,
                   fmt::format("{} register {} '{}'", p.name, r, p.registers[r].name));
    for (size_t w = 0; w < p.weights.size(); ++w)
        check_view(p.weights[w].view,
                   fmt::format("{} weight {} '{}'", p.name, w, p.weights[w].name));
    for (size_t s = 0; s < p.states.size(); ++s)
        if (p.states[s].id != s || p.states[s].size_bytes == 0)
            invalid(fmt::format("{} state block {}", p.name, s),
                    "expected its own index as id and a size above 0");
}

// Per register: the instruction that writes it (kHost for a plan input).
std::vector<uint32_t> producers(const ExecutionPlan& p) {
    constexpr uint32_t kNone = kHost - 1;
    std::vector<uint32_t> producer(p.registers.size(), kNone);
    auto write = [&](RegisterRef r, uint32_t by, const std::string& where) {
        if (r.id >= p.registers.size())
            invalid(where, fmt::format("register {} does not exist ({} registers)", r.id,
                                       p.registers.size()));
        if (producer[r.id] != kNone)
            invalid(where, fmt::format("register {} '{}' is written a second time", r.id,
                                       p.registers[r.id].name));
        producer[r.id] = by;
    };
    for (RegisterRef r : p.plan_inputs)
        write(r, kHost, p.name + " plan inputs");
    for (uint32_t i = 0; i < p.instructions.size(); ++i) {
        const Instruction& insn = p.instructions[i];
        const std::string where = at_instruction(p, i);
        if (insn.outputs.empty()) invalid(where, "writes no register");
        for (RegisterRef r : insn.inputs) {
            if (r.id >= p.registers.size() || producer[r.id] == kNone)
                invalid(where, fmt::format("reads register {} before anything writes it", r.id));
        }
        for (RegisterRef r : insn.outputs)
            write(r, i, where);
    }
    for (size_t r = 0; r < producer.size(); ++r)
        if (producer[r] == kNone)
            invalid(fmt::format("{} register {} '{}'", p.name, r, p.registers[r].name),
                    "nothing writes it");
    return producer;
}

// The inputs and weights an opcode's adapters read (every backend's alike), from its
// parameters where they vary: an instruction naming fewer would have them read past its lists.
struct OperandCounts {
    size_t inputs, weights;
};
OperandCounts operand_counts(Opcode op, const ParamBlock& b) {
    switch (op) {
    case Opcode::Embedding:
        return {1, param_view<EmbeddingParams>(b).positions != 0 ? 2u : 1u};
    case Opcode::LayerNorm:
        return {1, 2};
    case Opcode::RmsNorm:
    case Opcode::LmHead:
        return {1, 1};
    case Opcode::MultiheadAttention: // four matrices, and q, k and v's biases where flagged
        return {1, (param_view<AttentionParams>(b).flags & AttentionParams::kQkvBias) ? 7u : 4u};
    case Opcode::GeluMlp:
        return {1, 4};
    case Opcode::Swiglu:
        return {1, 3};
    case Opcode::ResidualAdd:
        return {2, 0};
    }
    return {0, 0};
}

void check_operand_counts(const Instruction& insn, const ParamBlock& b, const std::string& where) {
    const OperandCounts want = operand_counts(insn.opcode, b);
    const std::string_view op = opcode_name(insn.opcode);
    if (insn.inputs.size() != want.inputs)
        invalid(where, fmt::format("{} reads {} inputs, it names {}", op, want.inputs,
                                   insn.inputs.size()));
    if (insn.weights.size() != want.weights)
        invalid(where, fmt::format("{} reads {} weights, it names {}", op, want.weights,
                                   insn.weights.size()));
    if (insn.opcode == Opcode::MultiheadAttention && insn.state_block == kNoStateBlock)
        invalid(where, "multihead_attention keeps its keys and values in a state block, it names "
                       "none");
}

void check_references(const ExecutionPlan& p) {
    for (uint32_t i = 0; i < p.instructions.size(); ++i) {
        const Instruction& insn = p.instructions[i];
        const std::string where = at_instruction(p, i);
        for (WeightRef w : insn.weights)
            if (w.index >= p.weights.size())
                invalid(where, fmt::format("weight {} does not resolve ({} weights)", w.index,
                                           p.weights.size()));
        if (insn.state_block != kNoStateBlock && insn.state_block >= p.states.size())
            invalid(where, fmt::format("state block {} does not exist", insn.state_block));
        if (insn.param_block >= p.params.size())
            invalid(where, fmt::format("parameter block {} does not exist", insn.param_block));
        check_param_block(p.params[insn.param_block], insn.opcode,
                          fmt::format("{} parameter block {}", where, insn.param_block));
        check_operand_counts(insn, p.params[insn.param_block], where);
    }
    for (RegisterRef r : p.plan_outputs)
        if (r.id >= p.registers.size())
            invalid(p.name + " plan outputs", fmt::format("register {} does not exist", r.id));
}

LivenessMap liveness_of(const ExecutionPlan& p) {
    LivenessMap lv;
    const uint32_t n = uint32_t(p.instructions.size());
    lv.register_last_read.assign(p.registers.size(), LivenessMap::kNeverRead);
    for (uint32_t i = 0; i < n; ++i)
        for (RegisterRef r : p.instructions[i].inputs)
            lv.register_last_read[r.id] = i; // instructions in order: the last write wins
    for (RegisterRef r : p.plan_outputs)
        lv.register_last_read[r.id] = n;
    const size_t words = (p.registers.size() + 63) / 64;
    lv.kill_after_instruction.assign(n, std::vector<uint64_t>(words, 0));
    for (size_t r = 0; r < p.registers.size(); ++r) {
        const uint32_t last = lv.register_last_read[r];
        if (last < n) lv.kill_after_instruction[last][r / 64] |= uint64_t(1) << (r % 64);
    }
    return lv;
}

// Live from its producer (plan inputs: from the start) through its last read (plan outputs:
// to the end); a register nothing reads lives at its producer only.
uint16_t peak_of(const ExecutionPlan& p, const std::vector<uint32_t>& producer,
                 const LivenessMap& lv) {
    const uint32_t n = uint32_t(p.instructions.size());
    std::vector<int> delta(size_t(n) + 2, 0);
    for (size_t r = 0; r < p.registers.size(); ++r) {
        const uint32_t from = producer[r] == kHost ? 0 : producer[r];
        const uint32_t last = lv.register_last_read[r];
        const uint32_t to = last == LivenessMap::kNeverRead ? from : std::max(from, last);
        ++delta[from];
        --delta[size_t(std::min(to, n)) + 1];
    }
    int live = 0, peak = 0;
    for (int d : delta)
        peak = std::max(peak, live += d);
    return uint16_t(peak);
}

} // namespace

CompiledPlan compile_plan(ExecutionPlan plan) {
    check_tables(plan);
    check_references(plan);
    const std::vector<uint32_t> producer = producers(plan);
    CompiledPlan c;
    c.liveness = liveness_of(plan);
    c.peak_registers = peak_of(plan, producer, c.liveness);
    for (size_t r = 0; r < plan.registers.size(); ++r)
        if (c.liveness.register_last_read[r] == LivenessMap::kNeverRead)
            c.diagnostics.push_back(
                {PlanDiagnostic::Level::Warn,
                 fmt::format("never_read: register {} '{}'", r, plan.registers[r].name)});
    c.plan = std::move(plan);
    return c;
}

} // namespace tmmu::runtime
