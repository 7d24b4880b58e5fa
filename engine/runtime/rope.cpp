#include "runtime/rope.h"

#include "core/failure.h"
#include "models/transformer_config.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

namespace tmmu::runtime {
namespace {

// Llama 3: long wavelengths (low frequencies) slow down by the factor, short ones are kept.
double llama3_scaled(double f, const AttentionParams& p) {
    const double original = p.rope_original_positions;
    const double wavelength = 2 * std::numbers::pi / f;
    if (wavelength < original / p.rope_high_freq_factor) return f;
    if (wavelength > original / p.rope_low_freq_factor) return f / p.rope_factor;
    const double smooth = (original / wavelength - p.rope_low_freq_factor) /
                          (p.rope_high_freq_factor - p.rope_low_freq_factor);
    return (1 - smooth) * f / p.rope_factor + smooth * f;
}

} // namespace

double rope_frequency(const AttentionParams& p, uint32_t i) {
    const double f = std::pow(double(p.rope_theta), -2.0 * i / p.head_dim);
    switch (RopeScaling::Kind(p.rope_scaling)) {
    case RopeScaling::Kind::Linear:
        return f / p.rope_factor;
    case RopeScaling::Kind::Llama3:
        return llama3_scaled(f, p);
    case RopeScaling::Kind::None:
        break;
    }
    return f;
}

bool same_rotation(const AttentionParams& a, const AttentionParams& b) {
    return a.rope_theta == b.rope_theta && a.head_dim == b.head_dim &&
           a.rope_scaling == b.rope_scaling && a.rope_factor == b.rope_factor &&
           a.rope_low_freq_factor == b.rope_low_freq_factor &&
           a.rope_high_freq_factor == b.rope_high_freq_factor &&
           a.rope_original_positions == b.rope_original_positions;
}

namespace {

std::vector<float> rope_table(const AttentionParams& rotation, uint32_t positions) {
    const uint32_t half = rotation.head_dim / 2;
    std::vector<double> frequency(half); // once per pair, not per position: a pow each
    for (uint32_t i = 0; i < half; ++i)
        frequency[i] = rope_frequency(rotation, i);
    std::vector<float> table(2 * uint64_t(positions) * half);
    float* sines = table.data() + uint64_t(positions) * half;
    for (uint32_t p = 0; p < positions; ++p)
        for (uint32_t i = 0; i < half; ++i) {
            const double angle = p * frequency[i];
            table[uint64_t(p) * half + i] = float(std::cos(angle));
            sines[uint64_t(p) * half + i] = float(std::sin(angle));
        }
    return table;
}

} // namespace

const RopeTable* find_rope_table(const std::vector<RopeTable>& tables, float theta,
                                 uint32_t head_dim) {
    for (const RopeTable& t : tables)
        if (t.rotation.rope_theta == theta && t.rotation.head_dim == head_dim) return &t;
    return nullptr;
}

RopeTables plan_rope_tables(const ExecutionPlan& plan, uint32_t positions,
                            const std::string& backend) {
    RopeTables out;
    for (const Instruction& insn : plan.instructions) {
        if (insn.opcode != Opcode::MultiheadAttention) continue;
        const auto a = param_view<AttentionParams>(plan.params[insn.param_block]);
        if (a.rope_theta <= 0) continue;
        const RopeTable* known = find_rope_table(out.tables, a.rope_theta, a.head_dim);
        if (known && !same_rotation(known->rotation, a))
            fail(FailureCode::InvalidExecutionPlan, plan.name,
                 fmt::format("two attention instructions rotate by theta {} over heads of {} "
                             "with different RoPE scaling; the {} backend keeps one table per "
                             "theta and head size",
                             a.rope_theta, a.head_dim, backend));
        if (known) continue;
        out.tables.push_back({a, positions, out.values.size() * sizeof(float)});
        const std::vector<float> t = rope_table(a, positions);
        out.values.insert(out.values.end(), t.begin(), t.end());
    }
    return out;
}

} // namespace tmmu::runtime
