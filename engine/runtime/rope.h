#pragma once
// RoPE's rotation frequencies: one function for every backend that computes its angles on the
// host (the CPU adapters, Vulkan's table), so their angles agree bit for bit.
#include "runtime/param_block.h"

#include <cstdint>

namespace tmmu::runtime {

// Pair i's (i < head_dim / 2): theta^(-2i/head_dim), as Hugging Face Llama, then as the params'
// RoPE scaling says. Linear divides every frequency by the factor. Llama3 (transformers'
// _compute_llama3_parameters) divides those whose wavelength 2 pi / f is above
// original / low_freq_factor, keeps those below original / high_freq_factor, and blends the two
// linearly in between. Unscaled, position * f[i] is exactly what the backends computed before
// scaling existed, so plans without it keep their logits bit for bit. Allocates nothing: the
// CPU adapters call it in the token loop.
double rope_frequency(const AttentionParams& p, uint32_t i);

// Whether two attention blocks rotate alike: the same theta, head size and scaling.
bool same_rotation(const AttentionParams& a, const AttentionParams& b);

} // namespace tmmu::runtime
