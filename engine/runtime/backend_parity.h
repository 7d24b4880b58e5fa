#pragma once
// One backend against another, step by step (seed 002, "Correctness"): the reference runs the
// request, then the candidate runs it teacher-forced on the reference's tokens, so every step
// of both sees the same inputs and their logits can be compared however far apart their
// argmaxes drift.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::runtime {

struct StepAgreement {
    double nmse = 0;   // sum (candidate - reference)^2 / sum reference^2 over the step's rows
    uint32_t rows = 0; // logits rows the step gave (prefill: the prompt's last)
    uint32_t same_argmax = 0; // rows whose argmax is the reference's
};

struct BackendParity {
    std::vector<StepAgreement> steps; // as RunResult::steps lists them
    double worst_nmse = 0;
    size_t worst_step = 0;
    uint32_t rows = 0, same_argmax = 0; // over all steps
    RunResult reference, candidate;

    // The gate of issue 13: worst NMSE at most `max_nmse` and at most `allowed_misses` rows
    // whose argmax differs.
    bool passes(double max_nmse, uint32_t allowed_misses) const;
};

BackendParity compare_backends(const TransformerConfig& config, const RunRequest& request,
                               const ExecutorFactory& reference, const ExecutorFactory& candidate,
                               const Progress& progress);

// "worst NMSE 3.1e-12 at step 7 (decode), argmax 64/64 rows"
std::string describe(const BackendParity& parity);

} // namespace tmmu::runtime
