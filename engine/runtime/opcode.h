#pragma once
// The runtime's instruction set (seed 002, A2): one opcode per macro-operation, a byte that
// indexes every backend's adapter table directly. The values are ABI: plans and ParamBlocks
// carry them, so an opcode is never renumbered and a retired value is never reused.
#include <cstdint>
#include <optional>
#include <string_view>

namespace tmmu::runtime {

enum class Opcode : uint8_t {
    // Macro-ops with the seed's values. 3..6 stay reserved for its moe, mamba_mixer,
    // shortconv and mla_attention, which none of our model families uses.
    RmsNorm = 0,
    MultiheadAttention = 1, // causal mask, grouped-query heads, optional RoPE
    Swiglu = 2,
    Embedding = 7, // token embedding, plus learned positions where the model has them
    // Structural.
    ResidualAdd = 8,
    // 16..19 stay reserved for the seed's vision opcodes. 32..63 are further macro-ops:
    LayerNorm = 32,
    GeluMlp = 33,
    LmHead = 34,
    // 64..127 are reserved for fine-grained primitives; 128..255 are unassigned.
};

inline constexpr Opcode kAllOpcodes[] = {
    Opcode::RmsNorm,     Opcode::MultiheadAttention, Opcode::Swiglu,  Opcode::Embedding,
    Opcode::ResidualAdd, Opcode::LayerNorm,          Opcode::GeluMlp, Opcode::LmHead};

// What a byte value is set aside for (seed 002, A2).
enum class OpcodeRange : uint8_t { Macro, Structural, Vision, FutureMacro, Primitive, Unassigned };
constexpr OpcodeRange opcode_range(uint8_t value) {
    if (value <= 7) return OpcodeRange::Macro;
    if (value <= 15) return OpcodeRange::Structural;
    if (value <= 31) return OpcodeRange::Vision;
    if (value <= 63) return OpcodeRange::FutureMacro;
    if (value <= 127) return OpcodeRange::Primitive;
    return OpcodeRange::Unassigned;
}

constexpr bool is_defined_opcode(uint8_t value) {
    for (Opcode op : kAllOpcodes)
        if (static_cast<uint8_t>(op) == value) return true;
    return false;
}

std::string_view opcode_name(Opcode op); // "rmsnorm", "multihead_attention", ...
std::optional<Opcode> parse_opcode(std::string_view name);

} // namespace tmmu::runtime
