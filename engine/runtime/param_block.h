#pragma once
// An instruction's immutable parameters (seed 002, A2 and A9.3): a versioned little-endian
// payload of at most 256 bytes in 8-byte aligned storage, written once by the plan compiler and
// validated once when a plan loads. Adapters then read it through a typed view without parsing,
// allocating or branching on the version in the token loop.
#include "runtime/opcode.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace tmmu::runtime {

inline constexpr size_t kMaxParamBytes = 256;

struct ParamBlock {
    uint8_t version = 0;
    Opcode opcode = Opcode::RmsNorm; // the instruction's opcode, repeated for validation
    uint16_t size = 0;               // payload bytes used, a multiple of 8
    alignas(8) std::array<uint8_t, kMaxParamBytes> data{};

    bool operator==(const ParamBlock&) const = default;
};

// The payloads (attention's is version 2, the others version 1). Fields are 4-byte
// little-endian values in declaration order; each struct is padded to a multiple of 8 (the
// static_asserts below pin the layouts, which are ABI). A layout change is a new kVersion,
// which blocks of the old one then fail to load against.
struct NormParams { // layernorm, rmsnorm
    static constexpr uint8_t kVersion = 1;
    float eps;
    uint32_t width;
};
struct AttentionParams { // multihead_attention
    // 2: RoPE scaling (the rope_* fields after max_positions; version 1 ended there).
    static constexpr uint8_t kVersion = 2;
    static constexpr uint32_t kCausal = 1; // a token attends to itself and earlier tokens only
    // Weights are q, k, v and o projections (Llama: [out, in], no bias); without the flag they
    // are a fused qkv matrix and an output matrix, [in, out] each with a bias (GPT-2 Conv1D).
    static constexpr uint32_t kSeparateProjections = 2;
    // With kSeparateProjections: weights 4, 5 and 6 are q, k and v's biases (Qwen2).
    static constexpr uint32_t kQkvBias = 4;
    uint32_t n_heads, n_kv_heads, head_dim;
    float rope_theta; // 0: no rotary embedding
    uint32_t flags;
    uint32_t max_positions;
    uint32_t rope_scaling;            // a RopeScaling::Kind: 0 none, 1 linear, 2 llama3
    float rope_factor;                // linear and llama3
    float rope_low_freq_factor;       // llama3
    float rope_high_freq_factor;      // llama3 (greater than the low one)
    uint32_t rope_original_positions; // llama3: the context the model was trained on
    uint32_t reserved;
};
struct MlpParams { // gelu_mlp, swiglu
    static constexpr uint8_t kVersion = 1;
    uint32_t width, inner;
};
struct EmbeddingParams { // embedding
    static constexpr uint8_t kVersion = 1;
    uint32_t vocab, width;
    uint32_t positions; // learned position rows; 0: none (positions come from RoPE)
    uint32_t reserved;
};
struct ResidualParams { // residual_add
    static constexpr uint8_t kVersion = 1;
    uint32_t width, reserved;
};
struct LmHeadParams { // lm_head
    static constexpr uint8_t kVersion = 1;
    uint32_t width, vocab;
};
static_assert(sizeof(NormParams) == 8 && sizeof(AttentionParams) == 48 && sizeof(MlpParams) == 8 &&
              sizeof(EmbeddingParams) == 16 && sizeof(ResidualParams) == 8 &&
              sizeof(LmHeadParams) == 8);

// What a valid block of `op` carries: its version and payload size.
struct ParamLayout {
    uint8_t version;
    uint16_t size;
};
ParamLayout param_layout(Opcode op);

// The byte image is the host's, so these are plain copies on the little-endian hosts we build
// for; a big-endian host would need a byte swap here and nowhere else.
static_assert(std::endian::native == std::endian::little, "ParamBlock payloads are little-endian");

template <class P>
ParamBlock make_param_block(Opcode op, const P& payload) {
    static_assert(std::is_trivially_copyable_v<P> && sizeof(P) % 8 == 0 &&
                  sizeof(P) <= kMaxParamBytes);
    ParamBlock b;
    b.version = P::kVersion;
    b.opcode = op;
    b.size = sizeof(P);
    std::memcpy(b.data.data(), &payload, sizeof(P));
    return b;
}

// The typed view an adapter uses; only for a block check_param_block accepted for P's opcode.
template <class P>
P param_view(const ParamBlock& b) {
    P p;
    std::memcpy(&p, b.data.data(), sizeof(P));
    return p;
}

// The load-time check: `b` belongs to an instruction of opcode `op`, has that opcode's version
// and payload size, and nothing past the payload. INVALID_PARAM_BLOCK_ABI naming `where`.
void check_param_block(const ParamBlock& b, Opcode op, std::string_view where);

} // namespace tmmu::runtime
