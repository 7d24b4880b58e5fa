#pragma once
// What the studio asks the engine to do, as plain data and plain functions (no Qt): load a model,
// plan it with the user's settings, and plan it once per strategy for the comparison chart; and
// the outcome of a file that holds a plan without its model.
// MainWindow submits them as jobs to the studio's worker (job_runner.h), off the UI thread.
#include "charts/strategy_chart.h"
#include "plan/replan.h"
#include "plan_choices.h"
#include "source/model_source.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tmmu::studio {

using app::ArenaSettings;
using app::RouteList;

// What loading an ONNX model is asked (ModelRequest's dims, input_shapes and aliasing; the dims
// dialog edits them, --dim, --input-shape and --no-aliasing set them); other models ignore it.
struct DimBindings {
    std::map<std::string, int64_t> dims;                      // symbolic name -> value
    std::map<std::string, std::vector<int64_t>> input_shapes; // input -> whole shape
    bool aliasing = true;

    bool operator==(const DimBindings&) const = default;
};

struct PlanSettings {
    Mode mode = Mode::Training;
    uint64_t batch = 8;  // transformer configs only
    uint64_t seq = 1024; // transformer configs only
    std::string strategy = "auto";
    uint64_t alignment = 0;     // 0: the model kind's default (128 for graphs, 1 for CSV problems)
    ArenaSettings arenas;       // per arena: capacity and/or an alignment over `alignment`
    RouteList routes;           // role -> arena, over the default routes (graphs only)
    uint64_t memory_budget = 0; // all arenas together at most (--memory-budget); 0: none
    ShardSpec shard;            // --world-size, --rank, --shard (graphs only)
    DimBindings bindings;       // ONNX models only

    ModelRequest request() const {
        return ModelRequest{
            mode, batch, seq, bindings.dims, bindings.input_shapes, bindings.aliasing};
    }
};

// Whether a model loaded with `loaded` must be read again for `wanted`: a transformer config's
// graph depends on batch, seq and mode, an ONNX model's on its bindings.
bool load_depends_on_change(ModelKind kind, const PlanSettings& loaded, const PlanSettings& wanted);

// "activations=8GiB:256, gradients=512MiB, parameters=:4KiB" (commas or spaces between entries;
// each as `tmmu plan --arena`). Throws Failure(InvalidArgument) naming the bad entry.
ArenaSettings parse_arena_settings(const std::string& text);
std::string format_arena_settings(const ArenaSettings& settings);
// "workspace=scratch, gradient=activations" (each as `tmmu plan --route`), likewise.
RouteList parse_routes(const std::string& text);
std::string format_routes(const RouteList& routes);

// Engine options for a model kind, validated exactly as `tmmu plan` validates its flags
// (app::make_plan_options).
PlanOptions make_options(const PlanSettings& settings, ModelKind kind);

struct PlanJob {
    std::string path;
    PlanSettings settings;
    // Set: plan this model without reading path again (same file, same load request).
    std::shared_ptr<const LoadedModel> model;
    bool compare = true; // also plan once per strategy for the comparison chart
};

struct PlanOutcome {
    std::shared_ptr<const LoadedModel> model;
    std::shared_ptr<const Plan> plan;
    PlanSettings settings;
    // Set after Plan > Run iterations: the run that ended on this plan, which its session keeps.
    std::optional<IterationHistory> iterations;
    // One unit of the plan's time as the panels name it (PlanContext::setPlan): empty for a
    // model's steps or a CSV problem's times, "event" for a lazy program's pool buffers.
    QString timeUnit;
};

// Loads (unless job.model is set) and plans. Throws Failure.
PlanOutcome run_plan_job(const PlanJob& job, const Progress& progress);

// A plan read from a file that holds no model (a checkpoint, an exported session), ready to be
// shown: settings of its mode and strategy, and a model that names the file and `description`
// but holds nothing to plan again.
PlanOutcome stored_plan_outcome(Plan plan, const std::string& path, std::string description);

// Plans the model once per registered strategy with the same settings. A strategy that fails
// (e.g. ARENA_TOO_SMALL) is reported in its result; cancellation throws Failure(Cancelled).
std::vector<views::StrategyResult> compare_strategies(const LoadedModel& model,
                                                      const PlanSettings& settings,
                                                      const Progress& progress);

} // namespace tmmu::studio
