#pragma once
// A second forward pass, written for the tests from the model families' definitions (Hugging
// Face GPT-2 and Llama), deliberately naive: double precision, the whole sequence recomputed
// for every step, no KV cache, nothing shared with engine/backends. The CPU backend's parity
// gate compares with it.
#include "models/transformer_config.h"
#include "runtime/execution_plan.h"
#include "runtime/weights.h"

#include <cstdint>
#include <vector>

namespace tmmu::test {

// Logits of every position of `tokens`, [tokens.size()][vocab]. Weights are looked up by their
// Hugging Face names in `plan`.
std::vector<std::vector<double>> naive_logits(const TransformerConfig& config,
                                              const runtime::ExecutionPlan& plan,
                                              const runtime::WeightStore& weights,
                                              const std::vector<int32_t>& tokens);

} // namespace tmmu::test
