#include "runtime/adapter_memory.h"

#include <algorithm>

namespace tmmu::runtime {

uint64_t kv_cache_positions(const AttentionParams& p, uint64_t bytes) {
    return bytes / (2 * sizeof(float) * p.n_kv_heads * p.head_dim);
}

uint64_t workspace_floats(const ExecutionPlan& plan, const Instruction& insn, uint64_t rows) {
    const ParamBlock& b = plan.params[insn.param_block];
    switch (insn.opcode) {
    case Opcode::GeluMlp:
    case Opcode::Swiglu:
        return 2 * rows * param_view<MlpParams>(b).inner;
    case Opcode::MultiheadAttention: {
        const auto p = param_view<AttentionParams>(b);
        const uint64_t q = uint64_t(p.n_heads) * p.head_dim,
                       kv = uint64_t(p.n_kv_heads) * p.head_dim;
        return rows * (2 * q + 2 * kv) + p.max_positions;
    }
    default:
        return 0;
    }
}

uint64_t plan_workspace_floats(const ExecutionPlan& plan) {
    uint64_t most = 0;
    for (const Instruction& insn : plan.instructions)
        most = std::max(most, workspace_floats(plan, insn, plan.rows));
    return most;
}

} // namespace tmmu::runtime
