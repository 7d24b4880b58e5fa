#pragma once
// Expands a TransformerConfig into an operator-granularity IR graph for one mode.
//
// inference: tokens -> ... -> logits (role output). No targets, loss or saved_for_backward.
// forward:   inference plus targets and cross_entropy -> loss (role output); every forward
//            tensor the backward pass reads is marked saved_for_backward. It is exactly the
//            forward part of the training graph: same tensor ids, shapes and marks.
// training:  forward (loss becomes an activation), then backward nodes in reverse layer order
//            (phase backward, every new tensor role gradient) and one optimizer node per
//            parameter (phase optimizer) writing the parameter and its state in place.
//
// Tensor names follow Hugging Face parameter names with an "h<layer>." prefix
// ("h3.attn.c_attn.weight", "h3.self_attn.k_proj.weight"); activations "h3.attn.probs";
// gradients append ".grad". Ids are "t000000".. and "n000000".. in creation order.
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/mode.h"
#include "models/transformer_config.h"

#include <cstdint>
#include <string_view>

namespace tmmu {

// Every operator an inference graph of either family contains. The runtime maps each to the
// macro-op it belongs to (runtime/opcode_map.h), checked at compile time against this list.
inline constexpr std::string_view kInferenceOperators[] = {"embedding",
                                                           "add_position_embedding",
                                                           "layernorm",
                                                           "rmsnorm",
                                                           "matmul",
                                                           "split_qkv",
                                                           "split_heads",
                                                           "rope",
                                                           "attention_scores",
                                                           "causal_softmax",
                                                           "attention_values",
                                                           "merge_heads",
                                                           "gelu",
                                                           "silu",
                                                           "mul",
                                                           "add"};

// The largest batch, sequence length or config dimension the builder takes: it keeps every
// dimension, and small multiples such as 3 * hidden, far inside int64.
inline constexpr uint64_t kMaxTransformerDim = uint64_t{1} << 40;

struct GraphRequest {
    uint64_t batch = 8;
    uint64_t seq = 1024;
    Mode mode = Mode::Training;
    DType dtype = DType::F32; // activations, parameters, gradients and optimizer state
    bool adam = true;         // false: one sgd node per parameter (no optimizer state)
    // Above 0: batch and seq are dynamic dimensions (seed 000 II.H) named "batch" and "seq",
    // with shape envelopes [1, max_batch] and [1, max_positions] and REPLAN_AT_SAFEPOINT, bound
    // at batch and seq, so that a run over iterations can bind them again. 0: fixed shapes.
    uint64_t max_batch = 0;
};

// INVALID_IR_SHAPES for a config whose sizes break the TransformerConfig invariants (a size of
// 0 or past 2^40, heads that do not divide) or with more layers than anything expands (10000):
// what every builder of a config's graph or execution plan checks first.
void check_transformer_config(const TransformerConfig& config);

// Returns a finalized graph (finalize_graph has run). Failures: INVALID_ARGUMENT for batch or
// seq of 0, seq above config.max_positions, a max_batch below batch or above kMaxDynamicDim;
// check_transformer_config's; ALLOCATION_OVERFLOW when a tensor's byte size overflows uint64.
Graph build_transformer_graph(const TransformerConfig& config, const GraphRequest& request);

// Trainable scalars, counting a tied lm head once (GPT-2 small: 124,439,808).
// ALLOCATION_OVERFLOW when the count overflows uint64.
uint64_t parameter_count(const TransformerConfig& config);

} // namespace tmmu
