#include "runtime/opcode.h"

namespace tmmu::runtime {

std::string_view opcode_name(Opcode op) {
    switch (op) {
    case Opcode::RmsNorm:
        return "rmsnorm";
    case Opcode::MultiheadAttention:
        return "multihead_attention";
    case Opcode::Swiglu:
        return "swiglu";
    case Opcode::Embedding:
        return "embedding";
    case Opcode::ResidualAdd:
        return "residual_add";
    case Opcode::LayerNorm:
        return "layernorm";
    case Opcode::GeluMlp:
        return "gelu_mlp";
    case Opcode::LmHead:
        return "lm_head";
    }
    return "unknown";
}

std::optional<Opcode> parse_opcode(std::string_view name) {
    for (Opcode op : kAllOpcodes)
        if (opcode_name(op) == name) return op;
    return std::nullopt;
}

} // namespace tmmu::runtime
