#pragma once
// Greedy generation on the CPU backend, what `tmmu run` does: each sequence's prompt is
// prefilled into its own slot, then all sequences decode together, one batched step per token,
// each taking the argmax of its logits.
#include "backends/cpu/cpu_program.h"
#include "core/digest.h"
#include "core/progress.h"
#include "models/transformer_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::cpu {

struct GenerateRequest {
    uint32_t batch = 1;              // sequences, one slot each
    std::vector<int32_t> prompt_ids; // every sequence's prompt; empty: seeded random ids
    uint32_t prompt_tokens = 16;     // length of the seeded prompts
    uint32_t decode_tokens = 32;
    uint64_t seed = 1;        // weights and seeded prompts
    std::string weights_path; // a safetensors file instead of seeded weights
    uint32_t max_seq = 0;     // KV-cache positions per slot; 0: prompt + decode tokens
    bool counters = false;
    bool check_memory = false; // MemoryCheck on every step (memory_check.h)
    RegisterLayout layout = RegisterLayout::Planned;
};

struct GenerateResult {
    std::vector<std::vector<int32_t>> prompt_ids, generated_ids; // per sequence
    double prefill_seconds = 0, decode_seconds = 0;
    std::vector<double> step_seconds; // per decode step (all sequences together)
    DispatchCounters prefill_counters, decode_counters;
    Digest logits_hash{}; // SHA-256 over every logits row used, in order: the parity fingerprint
    uint64_t prefill_register_bytes = 0, decode_register_bytes = 0;
    uint64_t kv_cache_bytes = 0, weight_bytes = 0;
};

// `n` token ids below `vocab` from a fixed generator: the same seed, the same prompt.
std::vector<int32_t> seeded_prompt(uint32_t n, uint64_t vocab, uint64_t seed);

// INVALID_ARGUMENT for an empty prompt, a prompt id outside the vocabulary, 0 sequences, or a
// sequence longer than the model's positions; CANCELLED between steps once asked.
GenerateResult generate(const TransformerConfig& config, const GenerateRequest& request,
                        const Progress& progress);

} // namespace tmmu::cpu
