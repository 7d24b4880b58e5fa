#pragma once
// The stable JSON form of a Plan printed by `tmmu plan --json` and read by scripts. Field
// names and meanings are API (resources/docs/outputs.md). Unlike the trace, it carries the
// timing fields (plan_ms) and floating-point ratios, so it is not byte-stable across runs.
#include "plan/plan.h"

#include <string>

namespace tmmu {

// Pretty-printed (2-space indent), ending in '\n'. The "tensors" array is present only when
// include_tensors is true. Throws Failure(InvalidArgument) when a tensor names an arena the
// plan lacks, or Failure(AllocationOverflow) when the per-arena totals overflow uint64.
std::string plan_to_json(const Plan& plan, bool include_tensors);

} // namespace tmmu
