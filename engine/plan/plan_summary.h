#pragma once
// Whole-plan figures that every front end shows (CLI summary, JSON, trace, sessions, reports,
// studio): totals over the arenas and the plan's time domain. Computed here, once, with
// overflow-checked sums, so no caller adds arenas up on its own.
#include "plan/plan.h"

#include <cstdint>
#include <optional>

namespace tmmu {

struct PlanTotals {
    uint64_t peak_bytes = 0;  // sum of the arenas' heights
    uint64_t lower_bound = 0; // sum of the arenas' lower bounds
    uint64_t slot_count = 0;  // logical slots over all arenas
    uint64_t buffers = 0;     // storages placed over all arenas
};

// Throws Failure(AllocationOverflow) at "totals.peak_bytes" or "totals.lower_bound" when a sum
// does not fit in 64 bits.
PlanTotals plan_totals(const Plan& plan);

// The role most of an arena's tensors have (ties: the lower role), nothing for an arena without
// tensors. Charts colour an arena with it so arenas match the role colouring of the layouts.
std::optional<Role> dominant_role(const Plan& plan, uint32_t arena);

// Plan time runs over [0, plan_time_end(plan)), at least one unit: the schedule's steps for
// graphs, one past the last lifetime's end for bare offset problems.
uint64_t plan_time_end(const Plan& plan);

} // namespace tmmu
