#pragma once
// Plan checkpoints (`tmmu plan --checkpoint`, io/checkpoint.h) opened in the studio: restored and
// validated as `tmmu validate` does, then shown as planned. Plain functions, run as jobs.
#include "planning.h"

#include <string>

namespace tmmu::studio {

// Whether the file is a checkpoint rather than a model, by its first byte (looks_like_checkpoint).
bool looks_like_checkpoint_file(const std::string& path);

// The checkpoint's plan with the mode and strategy it was planned with, and a model that names
// the file but holds nothing to plan again (stored_plan_outcome: re-planning it says so).
// Throws what read_checkpoint_file throws (CORRUPT_CHECKPOINT naming the byte or field, the
// validator's failures).
PlanOutcome read_checkpoint_outcome(const std::string& path);

} // namespace tmmu::studio
