#include "runtime/rope.h"

#include "models/transformer_config.h"

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

} // namespace tmmu::runtime
