#include "runtime/gpu_adapters.h"

#include <cstring>

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

std::vector<bool> half_weights(const ExecutionPlan& plan, WeightPrecision precision) {
    std::vector<bool> half(plan.weights.size(), false);
    if (precision == WeightPrecision::F16)
        for (size_t w = 0; w < plan.weights.size(); ++w)
            half[w] = plan.weights[w].view.rank == 2;
    return half;
}

uint16_t f16_bits(float v) {
    uint32_t f = 0;
    std::memcpy(&f, &v, sizeof f);
    const auto sign = uint16_t((f >> 16) & 0x8000u);
    const uint32_t magnitude = f & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return uint16_t(sign | 0x7E00u);  // NaN stays NaN
    if (magnitude >= 0x477FF000u) return uint16_t(sign | 0x7C00u); // rounds past 65504: inf
    if (magnitude < 0x38800000u) { // below the smallest normal f16: a subnormal (or 0)
        const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - int(magnitude >> 23); // 14 for the smallest normal, more below
        if (shift > 24) return sign;
        const uint32_t kept = mantissa >> shift, rest = mantissa & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        return uint16_t(sign | (kept + (rest > half || (rest == half && (kept & 1)))));
    }
    // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even (a carry
    // into the exponent is the right result).
    const uint32_t rebiased = magnitude - 0x38000000u;
    const uint32_t kept = rebiased >> 13, rest = rebiased & 0x1FFFu;
    return uint16_t(sign | (kept + (rest > 0x1000u || (rest == 0x1000u && (kept & 1)))));
}

PackedWeights pack_weights(const ExecutionPlan& plan, const WeightStore& weights,
                           const std::vector<bool>& half) {
    PackedWeights packed;
    uint64_t at = 0;
    for (size_t w = 0; w < plan.weights.size(); ++w) {
        packed.offset.push_back(at);
        at += (plan.weights[w].view.elements() * (half[w] ? 2 : 4) + 15) / 16 * 16;
    }
    packed.bytes.assign(at, 0);
    for (size_t w = 0; w < plan.weights.size(); ++w) {
        const float* from = weights.data.data() + weights.offset[w];
        uint8_t* to = packed.bytes.data() + packed.offset[w];
        const uint64_t n = plan.weights[w].view.elements();
        if (!half[w]) {
            std::memcpy(to, from, n * sizeof(float));
            continue;
        }
        for (uint64_t i = 0; i < n; ++i) {
            const uint16_t bits = f16_bits(from[i]);
            std::memcpy(to + 2 * i, &bits, sizeof bits);
        }
    }
    return packed;
}

void mark_half_weights(std::vector<BoundInstruction>& bound, const ExecutionPlan& plan,
                       const std::vector<bool>& half) {
    for (size_t i = 0; i < bound.size(); ++i) {
        const std::vector<WeightRef>& weights = plan.instructions[i].weights;
        for (size_t k = 0; k < weights.size(); ++k)
            if (half[weights[k].index]) bound[i].operands.half_weights |= 1u << k;
    }
}

} // namespace tmmu::runtime
