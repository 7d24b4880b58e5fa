#pragma once
// PlanMemory: model -> liveness -> arena split -> offset strategy -> validator -> Plan.
#include "core/progress.h"
#include "plan/plan.h"

#include <array>
#include <string>
#include <vector>

namespace tmmu {

// Which arena each role goes to, and the arenas' configs (in display order).
struct ArenaPolicy {
    std::vector<ArenaConfig> arenas;
    std::array<std::string, kRoleCount> arena_of_role; // indexed by Role

    // parameters, activations (inputs, outputs, activations, workspace), gradients, optimizer.
    static ArenaPolicy defaults(uint64_t alignment = 128);
    // Adds or updates an arena's capacity; creates the arena when it is new.
    void set_capacity(const std::string& arena, uint64_t capacity);
    void set_alignment(uint64_t alignment); // every arena's default alignment
    void route(Role role, const std::string& arena);
    const ArenaConfig* find(const std::string& arena) const;
};

struct PlanOptions {
    std::string strategy = "auto";
    uint64_t search_budget = 0; // search nodes of strategy "optimal"; 0: its default budget
    // Milliseconds of search for "optimal" instead of nodes (wins over search_budget when > 0).
    // Not reproducible: the plan depends on the machine's speed and load.
    uint64_t search_budget_ms = 0;
    ArenaPolicy policy = ArenaPolicy::defaults();
    Digest replay_token{};
    // The rank to plan and the roles sharded across ranks (seed 000, II.I; shard_spec.h).
    ShardSpec shard;
    // The most bytes the plan's arenas may commit together (seed 000, II.J's
    // memory_bytes_budget); 0: no budget. A check, not a goal: it never changes the plan, so
    // it is not part of the plan or its hash.
    uint64_t memory_budget = 0;
};

// Plans a finalized graph in a mode. Every arena's solution is validated before returning.
// Throws Failure(MemoryBudgetExceeded) when the bytes the arenas commit (each its peak, in whole
// pages where it is paged) add up to more than options.memory_budget (both planners).
// Throws Failure(Cancelled) once the progress's cancel flag is set, even when a strategy
// stopped early with a plan of its own.
Plan plan_graph(const Graph& g, Mode mode, const PlanOptions& options, const Progress& progress,
                const std::string& source);

// Plans a bare offset-assignment problem (CSV) as one arena named "arena". Buffer ids label
// the plan's tensors. The arena's capacity and alignment come from the policy's first arena
// entry named "arena" when present (unbounded, alignment 1 otherwise).
Plan plan_problem(const OffsetProblem& problem, const std::vector<std::string>& ids,
                  const PlanOptions& options, const Progress& progress, const std::string& source);

} // namespace tmmu
