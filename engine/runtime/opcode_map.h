#pragma once
// The one place that says which runtime macro-op each graph operator belongs to (seed 002,
// A9.5): an inference graph's nodes, grouped by this map, are the compiled plan's instructions.
// Exhaustiveness is checked at compile time: every operator in models' kInferenceOperators has
// exactly one entry, and every entry names one of them.
#include "ir/graph.h"
#include "models/transformer_graph.h"
#include "runtime/opcode.h"

#include <string_view>
#include <vector>

namespace tmmu::runtime {

struct OperatorMapping {
    std::string_view op;
    Opcode opcode;
    // A projection (matmul) belongs to the macro-op it sits in: that of the node producing its
    // input when that node is inside a macro-op (merge_heads, gelu, mul), else that of a node
    // consuming its output (split_qkv, rope, split_heads, gelu, silu, mul); with neither, it is
    // the lm head (fed by the final norm, feeding nothing). `opcode` is that fallback.
    bool joins_neighbour = false;
};

inline constexpr OperatorMapping kOperatorMap[] = {
    {"embedding", Opcode::Embedding},
    {"add_position_embedding", Opcode::Embedding},
    {"layernorm", Opcode::LayerNorm},
    {"rmsnorm", Opcode::RmsNorm},
    {"matmul", Opcode::LmHead, true},
    {"split_qkv", Opcode::MultiheadAttention},
    {"split_heads", Opcode::MultiheadAttention},
    {"rope", Opcode::MultiheadAttention},
    {"attention_scores", Opcode::MultiheadAttention},
    {"causal_softmax", Opcode::MultiheadAttention},
    {"attention_values", Opcode::MultiheadAttention},
    {"merge_heads", Opcode::MultiheadAttention},
    {"gelu", Opcode::GeluMlp},
    {"silu", Opcode::Swiglu},
    {"mul", Opcode::Swiglu},
    {"add", Opcode::ResidualAdd},
};

constexpr size_t mappings_of(std::string_view op) {
    size_t n = 0;
    for (const OperatorMapping& m : kOperatorMap)
        n += m.op == op;
    return n;
}

constexpr bool every_operator_maps_once() {
    for (std::string_view op : kInferenceOperators)
        if (mappings_of(op) != 1) return false;
    for (const OperatorMapping& m : kOperatorMap) {
        bool known = false;
        for (std::string_view op : kInferenceOperators)
            known |= op == m.op;
        if (!known) return false;
    }
    return true;
}
static_assert(every_operator_maps_once(),
              "an inference operator has no macro-op, or two, or the map names an unknown one");

// The macro-op of every node of an inference graph, in g.nodes order. INVALID_ARGUMENT for a
// node whose operator is not an inference operator (a training graph's backward, a loss).
std::vector<Opcode> macro_ops(const Graph& g);

} // namespace tmmu::runtime
