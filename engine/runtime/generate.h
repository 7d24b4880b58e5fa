#pragma once
// Greedy generation on any backend, what `tmmu run` does: each sequence's prompt is prefilled
// into its own slot, then all sequences decode together, one batched step per token, each
// taking the argmax of its logits.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/program.h"
#include "runtime/run_record.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tmmu::runtime {

// `n` token ids below `vocab` from a fixed generator: the same seed, the same prompt.
std::vector<int32_t> seeded_prompt(uint32_t n, uint64_t vocab, uint64_t seed);

// Sees every step's logits rows as the step gives them ([rows][vocab], host memory valid for
// the call only); `step` counts steps in execution order, as RunResult::steps lists them.
using LogitsObserver = std::function<void(size_t step, std::span<const float> rows)>;

struct GenerateHooks {
    LogitsObserver on_logits;
    // Teacher forcing: take every sequence's next token from this run instead of the argmax,
    // so a second backend steps through exactly the tokens of a reference run (its prompts
    // and generated ids must be the request's shape).
    const RunResult* follow = nullptr;
};

// INVALID_ARGUMENT for an empty prompt, a prompt id outside the vocabulary, 0 sequences, no
// token to generate, or a sequence longer than the model's positions; CANCELLED between steps
// once asked. Progress reports the fraction of steps done.
RunResult generate(const TransformerConfig& config, const RunRequest& request,
                   const ExecutorFactory& backend, const Progress& progress,
                   const GenerateHooks& hooks = {});

// A recorded run's config and request again, on the backend `backend` makes (the caller
// checks that it is the one the record names).
RunResult rerun(const RunRecord& record, const ExecutorFactory& backend, const Progress& progress);

} // namespace tmmu::runtime
