#pragma once
// The plan compiler (seed 002, A1): a GPT-2 or Llama decoder, as config.json describes it, in
// runtime macro-ops. One instruction per macro-op (embedding; per layer norm, attention,
// residual add, norm, MLP, residual add; final norm; lm head), weights under their Hugging Face
// names and shapes, one KV-cache state block per layer, then compile_plan's checks and
// liveness. Plans are compiled once at model load.
#include "models/transformer_config.h"
#include "runtime/execution_plan.h"

#include <cstdint>

namespace tmmu::runtime {

struct CompileRequest {
    PlanMode mode = PlanMode::Decode;
    uint32_t rows = 1;    // decode: active slots (one new token each); prefill: prompt tokens
    uint32_t max_seq = 0; // positions each slot's KV cache holds; 0: the model's max_positions
};

// INVALID_ARGUMENT for 0 rows, a max_seq above the model's max_positions or its sliding window,
// or a prefill longer than max_seq; INVALID_IR_SHAPES for a config whose dimensions do not fit the
// runtime's 32-bit view dimensions, or that asks for a computation the kernels do not do
// (TransformerConfig::unrunnable: RoPE scaling, another activation), naming its field.
CompiledPlan compile_transformer(const TransformerConfig& config, const CompileRequest& request);

} // namespace tmmu::runtime
