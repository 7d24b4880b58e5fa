#include "runtime/gpu_adapters.h"

namespace tmmu::runtime {

std::vector<bool> conv1d_weights(const ExecutionPlan& plan) {
    std::vector<bool> conv1d(plan.weights.size(), false);
    for (const Instruction& insn : plan.instructions) {
        const ParamBlock& b = plan.params[insn.param_block];
        const bool fused_attention =
            insn.opcode == Opcode::MultiheadAttention &&
            !(param_view<AttentionParams>(b).flags & AttentionParams::kSeparateProjections);
        if (fused_attention || insn.opcode == Opcode::GeluMlp) {
            conv1d[insn.weights[0].index] = true; // qkv or fc
            conv1d[insn.weights[2].index] = true; // the output projection
        }
    }
    return conv1d;
}

void transpose_conv1d_weights(const ExecutionPlan& plan, WeightStore& weights) {
    const std::vector<bool> conv1d = conv1d_weights(plan);
    for (size_t w = 0; w < plan.weights.size(); ++w) {
        if (!conv1d[w]) continue;
        const uint32_t in = plan.weights[w].view.shape[0], out = plan.weights[w].view.shape[1];
        float* m = weights.data.data() + weights.offset[w];
        const std::vector<float> copy(m, m + uint64_t(in) * out);
        for (uint32_t i = 0; i < in; ++i)
            for (uint32_t j = 0; j < out; ++j)
                m[uint64_t(j) * in + i] = copy[uint64_t(i) * out + j];
    }
}

} // namespace tmmu::runtime
