#include "runtime/param_block.h"

#include "core/failure.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tmmu::runtime {

namespace {

template <class P>
constexpr ParamLayout layout_of() {
    return {P::kVersion, uint16_t(sizeof(P))};
}

// The scaling's numbers as rope_frequency() needs them: a known kind, a positive factor, and
// for llama3 a trained context and a high factor above the low one (the blend divides by their
// difference). Fields a kind does not use, and the reserved ones, are zero, so two blocks that
// rotate alike are equal (same_rotation compares them).
template <class Bad>
void check_rope_scaling(const AttentionParams& p, const Bad& bad) {
    const bool llama3_fields =
        p.rope_low_freq_factor != 0 || p.rope_high_freq_factor != 0 || p.rope_original_positions;
    if (p.reserved != 0) bad("the reserved field is not zero");
    if (p.rope_scaling == 0 && (p.rope_factor != 0 || llama3_fields))
        bad("RoPE scaling numbers without a scaling kind");
    if (p.rope_scaling == 1 && llama3_fields) bad("linear RoPE scaling with llama3's numbers");
    if (p.rope_scaling == 0) return;
    if (p.rope_scaling > 2) bad(fmt::format("unknown RoPE scaling kind {}", p.rope_scaling));
    if (!(p.rope_factor > 0) || !std::isfinite(p.rope_factor))
        bad(fmt::format("RoPE scaling factor {} is not a positive number", p.rope_factor));
    if (p.rope_scaling == 2 && (p.rope_original_positions == 0 || !(p.rope_low_freq_factor > 0) ||
                                !(p.rope_high_freq_factor > p.rope_low_freq_factor) ||
                                !std::isfinite(p.rope_high_freq_factor)))
        bad(fmt::format("llama3 RoPE scaling needs a trained context and 0 < low_freq_factor < "
                        "high_freq_factor, got {}, {} and {}",
                        p.rope_original_positions, p.rope_low_freq_factor,
                        p.rope_high_freq_factor));
}

} // namespace

ParamLayout param_layout(Opcode op) {
    switch (op) {
    case Opcode::RmsNorm:
    case Opcode::LayerNorm:
        return layout_of<NormParams>();
    case Opcode::MultiheadAttention:
        return layout_of<AttentionParams>();
    case Opcode::Swiglu:
    case Opcode::GeluMlp:
        return layout_of<MlpParams>();
    case Opcode::Embedding:
        return layout_of<EmbeddingParams>();
    case Opcode::ResidualAdd:
        return layout_of<ResidualParams>();
    case Opcode::LmHead:
        return layout_of<LmHeadParams>();
    }
    fail(FailureCode::InvalidParamBlockAbi, "opcode",
         fmt::format("opcode {} has no parameter layout", int(op)));
}

void check_param_block(const ParamBlock& b, Opcode op, std::string_view where) {
    auto bad = [&](const std::string& message) {
        fail(FailureCode::InvalidParamBlockAbi, std::string(where), message);
    };
    if (b.opcode != op)
        bad(fmt::format("written for {}, used by a {} instruction", opcode_name(b.opcode),
                        opcode_name(op)));
    const ParamLayout want = param_layout(op);
    if (b.version != want.version)
        bad(fmt::format("version {}, this build reads {} version {}", b.version, opcode_name(op),
                        want.version));
    if (b.size != want.size)
        bad(fmt::format("{} payload bytes, {} version {} has {}", b.size, opcode_name(op),
                        want.version, want.size));
    if (std::any_of(b.data.begin() + b.size, b.data.end(), [](uint8_t x) { return x != 0; }))
        bad("bytes past the payload are not zero");
    if (op != Opcode::MultiheadAttention) return;
    const auto p = param_view<AttentionParams>(b);
    if ((p.flags & AttentionParams::kQkvBias) && !(p.flags & AttentionParams::kSeparateProjections))
        bad("q/k/v biases without separate projections (the fused matrix has its own bias)");
    check_rope_scaling(p, bad);
}

} // namespace tmmu::runtime
