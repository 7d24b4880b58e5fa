#pragma once
// Whole-plan figures that every front end shows (CLI summary, JSON, trace, sessions, reports,
// studio): totals over the arenas and the plan's time domain. Computed here, once, with
// overflow-checked sums, so no caller adds arenas up on its own.
#include "plan/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tmmu {

// What reuse bought in one arena (seed 003's AllocationPlan figures): the height of the plan that
// gives every buffer bytes of its own, what this plan saves against it, and how many pairs of
// buffers share bytes (at different times: the validator allows nothing else).
struct ArenaReuse {
    uint64_t isolated_bytes = 0; // buffers stacked in offset order, each at its next aligned offset
    uint64_t saved_bytes = 0;    // isolated_bytes - peak_bytes; 0 without sharing
    uint64_t sharing_pairs = 0;  // pairs of buffers whose byte ranges overlap
};

// O(n log n), so not part of plan_totals, which planning calls. Sums saturate at 2^64 - 1 (a plan
// may fit although its buffers together do not).
ArenaReuse arena_reuse(const ArenaPlan& arena);
// The arenas' figures summed, saturating as above.
ArenaReuse plan_reuse(const Plan& plan);
// Seed 003's sharing_pairs, listed: pairs of buffers of the arena whose byte ranges overlap, by
// buffer index (first < second), in the order a sweep over offsets meets them, at most
// `max_pairs` of them (arena_reuse counts them all). The validator allows an overlap only at
// different times, so each pair shares bytes over time. A problem can have pairs in the square
// of its buffers (every buffer over the same bytes), hence the limit: O(n log n + max_pairs).
std::vector<std::pair<uint32_t, uint32_t>> sharing_pairs(const ArenaPlan& arena,
                                                         uint64_t max_pairs);
// The buffers of the arena other than `buffer` whose byte ranges overlap [begin, end) (a
// tensor's own bytes, which for a view are part of its buffer's), ascending. O(n).
std::vector<uint32_t> buffers_sharing_bytes(const ArenaPlan& arena, uint32_t buffer, uint64_t begin,
                                            uint64_t end);

struct PlanTotals {
    uint64_t peak_bytes = 0;  // sum of the arenas' heights
    uint64_t lower_bound = 0; // sum of the arenas' lower bounds
    uint64_t slot_count = 0;  // logical slots over all arenas
    uint64_t buffers = 0;     // storages placed over all arenas
};

// Throws Failure(AllocationOverflow) at "totals.peak_bytes" or "totals.lower_bound" when a sum
// does not fit in 64 bits.
PlanTotals plan_totals(const Plan& plan);

// The least a plan of the arena can be once its buffers are aligned: offsets are multiples of
// the smallest alignment, so of the buffers live together all but the topmost pay their
// padding, which the lower bound does not count (a parameter arena of odd sizes sits above its
// lower bound however it is placed). Never below the lower bound; computed from the arena's
// problem, O(n log n), for display: no stored metric holds it.
uint64_t aligned_bound(const ArenaPlan& a);
// The arenas' aligned bounds added up (what plan_totals' lower_bound is to the lower bounds).
uint64_t aligned_bound(const Plan& plan);

// The numerators of the plan's reuse and fragmentation ratios, which the plan JSON's seed
// metrics and the trace's summary both show: tensors beyond the logical slots they fit in (of
// all tensors), and bytes the arenas' peaks lie above their lower bounds (of the peaks).
uint64_t reused_tensors(const Plan& plan, const PlanTotals& totals);
uint64_t bytes_over_bound(const PlanTotals& totals);

// The role most of an arena's tensors have (ties: the lower role), nothing for an arena without
// tensors. Charts colour an arena with it so arenas match the role colouring of the layouts.
std::optional<Role> dominant_role(const Plan& plan, uint32_t arena);

// Plan time runs over [0, plan_time_end(plan)), at least one unit: the schedule's steps for
// graphs, one past the last lifetime's end for bare offset problems.
uint64_t plan_time_end(const Plan& plan);

// One sentence on plan.retention for people (CLI summary, reports, the studio's tips), e.g.
// "1.50 GiB (50.0%) of the 3.00 GiB the forward pass writes is held into the backward pass at
// step 57 (12 of 40 buffers)"; "" for a plan without it (offset problems, old checkpoints).
std::string retention_text(const Plan& plan);

// Why plan.retention cannot belong to this plan (its mode, its buffers over every arena and,
// when the reader has it, its schedule's length), or "" when it can or there is none: what the
// checkpoint and session-export readers check after reading a plan.
std::string retention_inconsistency(const Plan& plan, bool schedule_known);

} // namespace tmmu
