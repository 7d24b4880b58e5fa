#pragma once
// The stable JSON form of a Plan printed by `tmmu plan --json` and read by scripts. Field
// names and meanings are API (resources/docs/outputs.md). Unlike the trace, it carries the
// timing fields (plan_ms) and floating-point ratios, so it is not byte-stable across runs.
#include "plan/plan.h"
#include "plan/replan.h"

#include <nlohmann/json.hpp>
#include <string>

namespace tmmu {

// The most sharing pairs the plan JSON lists per arena: a problem can have pairs in the square
// of its buffers, and a list of millions helps no reader (the count is always whole).
inline constexpr uint64_t kListedSharingPairs = 100'000;

// Pretty-printed (2-space indent), ending in '\n'. The "tensors" array and the "sharing_pairs"
// lists are present only when include_tensors is true; "iterations" only for a run over iterations
// (tmmu plan --iteration), whose last plan `plan` is. Throws Failure(InvalidArgument) when a tensor
// names an arena the plan lacks, or Failure(AllocationOverflow) when the per-arena totals overflow
// uint64. `extra`'s fields (what a caller did with the plan, e.g. tmmu plan --apply's "applied")
// follow the plan's own; null adds none.
std::string plan_to_json(const Plan& plan, bool include_tensors,
                         const std::vector<IterationOutcome>& iterations = {},
                         const nlohmann::ordered_json& extra = nullptr);

// The pieces every JSON that carries a plan is built from (tmmu plan --json, the session export
// and the sessions store), each defined once here.
//
// An arena's capacity: null when unbounded (UINT64_MAX), a number JSON readers that hold
// numbers as doubles would round to 2^64.
nlohmann::ordered_json capacity_json(uint64_t capacity);
// One arena's configuration and metrics: capacity, alignment, strategy, peak_bytes,
// lower_bound, peak_over_bound, slots, max_live, buffers, tensors, reuse_ratio,
// internal_fragmentation (no name and no timing: callers key it).
nlohmann::ordered_json arena_metrics_json(const ArenaPlan& arena);
// [{"arena": name, ...arena_metrics_json}, ...] in arena order.
nlohmann::ordered_json metrics_json(const Plan& plan);
// {"peak_bytes", "lower_bound", "plan_ms"} summed over arenas (plan_totals).
nlohmann::ordered_json totals_json(const Plan& plan);
// {"times": [...], "arenas": {name: {"live_bytes": [...], "high_water": [...]}}}.
nlohmann::ordered_json series_json(const Plan& plan);
// {"rank", "world_size", "roles": [sharded role names]}: the plan's "shard", which the plan
// JSON and the trace header carry only for a rank of a distributed run (not single_rank()).
nlohmann::ordered_json shard_json(const ShardSpec& spec);
// {name: value, ...} in name order: a binding of dynamic dimensions, as the plan's "dims" (which
// the plan JSON and the trace header carry when the model has any) and the iterations' carry it.
nlohmann::ordered_json binding_json(const DimBinding& binding);
// [{"iteration", "dims", "replanned", "old_plan_hash" (replanned only), "plan_hash",
// "plan_dims", "peak_bytes", "replan_key"}, ...]: a run's iterations as decided, as the plan JSON
// and the sessions store carry them.
nlohmann::ordered_json iterations_json(const std::vector<IterationOutcome>& iterations);
// {"forward_bytes", "retained_bytes", "ratio", "forward_buffers", "retained_buffers",
// "backward_start" (null when there is none)}: the plan's "activation_retention", which the plan
// JSON and the session export carry for plans of graphs.
nlohmann::ordered_json retention_json(const ActivationRetention& retention);

} // namespace tmmu
