#include "runtime/program.h"

#include "core/failure.h"
#include "runtime/adapter_memory.h"

#include <fmt/format.h>

namespace tmmu::runtime {

namespace {

[[noreturn]] void bad_step(const std::string& where, const std::string& message) {
    fail(FailureCode::InvalidArgument, where, message);
}

} // namespace

StepLimits step_limits(const ExecutionPlan& plan, uint32_t slots) {
    StepLimits limits{plan.rows, 0, slots, 0};
    for (const Instruction& insn : plan.instructions) {
        const ParamBlock& b = plan.params[insn.param_block];
        if (insn.opcode == Opcode::Embedding) limits.vocab = param_view<EmbeddingParams>(b).vocab;
        if (insn.state_block != kNoStateBlock && limits.max_seq == 0)
            limits.max_seq = uint32_t(kv_cache_positions(param_view<AttentionParams>(b),
                                                         plan.states[insn.state_block].size_bytes));
    }
    return limits;
}

void check_step(const ExecutionPlan& p, const StepLimits& limits, std::span<const int32_t> tokens,
                std::span<const uint32_t> slots, std::span<const uint32_t> positions) {
    if (tokens.empty() || tokens.size() > limits.rows || slots.size() != tokens.size() ||
        positions.size() != tokens.size())
        bad_step(p.name, fmt::format("a step of {} rows (slots {}, positions {}); the plan runs "
                                     "1 to {}",
                                     tokens.size(), slots.size(), positions.size(), limits.rows));
    for (size_t r = 0; r < tokens.size(); ++r) {
        const std::string where = fmt::format("{} row {}", p.name, r);
        if (tokens[r] < 0 || uint32_t(tokens[r]) >= limits.vocab)
            bad_step(where, fmt::format("token {} is outside the vocabulary of {}", tokens[r],
                                        limits.vocab));
        if (slots[r] >= limits.slot_count)
            bad_step(where,
                     fmt::format("slot {} does not exist ({} slots)", slots[r], limits.slot_count));
        if (limits.max_seq != 0 && positions[r] >= limits.max_seq)
            bad_step(where, fmt::format("position {} is past the KV cache's {} positions",
                                        positions[r], limits.max_seq));
    }
}

} // namespace tmmu::runtime
