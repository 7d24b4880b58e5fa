#pragma once
// Greedy generation on the CPU backend, what `tmmu run` does: each sequence's prompt is
// prefilled into its own slot, then all sequences decode together, one batched step per token,
// each taking the argmax of its logits.
#include "backends/cpu/cpu_program.h"
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/run_record.h"

#include <cstdint>
#include <vector>

namespace tmmu::cpu {

// What the CPU backend reports as its device.
inline constexpr const char* kCpuDevice = "f32 reference, one thread";

// `n` token ids below `vocab` from a fixed generator: the same seed, the same prompt.
std::vector<int32_t> seeded_prompt(uint32_t n, uint64_t vocab, uint64_t seed);

// INVALID_ARGUMENT for an empty prompt, a prompt id outside the vocabulary, 0 sequences, no
// token to generate, or a
// sequence longer than the model's positions; CANCELLED between steps once asked. Progress
// reports the fraction of steps done.
runtime::RunResult generate(const TransformerConfig& config, const runtime::RunRequest& request,
                            const Progress& progress);

// Runs a recorded run's config and request again on the CPU backend (the recording must be a
// CPU run: INVALID_ARGUMENT otherwise).
runtime::RunResult replay(const runtime::RunRecord& record, const Progress& progress);

} // namespace tmmu::cpu
