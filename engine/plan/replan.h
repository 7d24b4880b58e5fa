#pragma once
// A model with dynamic shapes run over iterations (seed 000, II.H). The plan in force fits
// every iteration whose dimensions are no larger than its binding. An iteration that needs more
// is either refused (replan_policy ABORT: SHAPE_ENVELOPE_VIOLATION) or gets a new plan at the
// safepoint before it, the iteration boundary (REPLAN_AT_SAFEPOINT). The new binding takes, per
// dimension, the larger of the old binding and the iteration's value, so the plan only grows
// and a later smaller iteration never replans. Every iteration must lie inside the envelope.
#include "core/progress.h"
#include "ir/dims_from_probes.h"
#include "ir/dynamic_dims.h"
#include "plan/planner.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tmmu {

struct IterationOutcome {
    uint32_t iteration = 0;
    DimBinding dims;         // as the iteration gave them
    bool replanned = false;  // a new plan was made at the safepoint before this iteration
    Digest old_plan_hash{};  // replanned: the plan it replaced
    DimBinding plan_binding; // the binding of the plan the iteration runs on
    Digest plan_hash{};      // that plan's hash
    uint64_t peak_bytes = 0; // that plan's arenas together
    Digest replan_key{};     // replan_key(graph, plan) of that plan (plan_hash.h)
    bool operator==(const IterationOutcome&) const = default;
};

// "   1  seq=1024                 replanned  35e84fa111292eee     26.50 MiB  (was d395e06d7ef28fc1;
// planned at batch=1, seq=1024)": one iteration as tmmu plan and tmmu session show list it.
std::string iteration_text(const IterationOutcome& i);

// A run over iterations as sessions keep it: the binding of the plan it started from, and every
// iteration in order as it was decided (its dims are what was asked for).
struct IterationHistory {
    DimBinding start;
    std::vector<IterationOutcome> decided;
    bool operator==(const IterationHistory&) const = default;
};

struct ShapeScheduleRun {
    std::vector<IterationOutcome> iterations;
    Graph graph; // bound as the last plan
    Plan plan;   // the plan in force after the last iteration
};

// Runs `iterations` from `first`, the plan of `g` as bound now. on_iteration sees each
// iteration as it is decided (before a later one can fail). Throws, naming "--iteration N":
// SHAPE_ENVELOPE_VIOLATION for an iteration outside the envelope, or one that outgrows the plan
// under ABORT; InvalidArgument for an undeclared name; what finalize_graph throws for shapes at
// which the model does not hold (each iteration's, over the plan's binding, and each new
// binding). A replan that fails throws what plan_graph throws, as it names it. With `build_at`
// (a model whose axes were read from probes), each new plan's binding is checked against the
// model built there (check_built_at) and each iteration's model must fit the plan it runs on
// (check_fits_built_at), each binding once: the probes sample a few bindings only.
ShapeScheduleRun
run_shape_schedule(Graph g, Plan first, Mode mode, const PlanOptions& options,
                   const std::vector<DimBinding>& iterations,
                   const std::function<void(const IterationOutcome&)>& on_iteration,
                   const Progress& progress, const BuildAtBinding& build_at = {});

} // namespace tmmu
