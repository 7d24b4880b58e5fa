#pragma once
// Every model source the product reads, behind one entry point: native IR JSON, transformer
// configs (GPT-2 / Llama config.json) expanded into a graph, and offset-assignment CSVs.
#include "core/progress.h"
#include "io/dsa_csv.h"
#include "ir/annotations.h"
#include "ir/dims_from_probes.h"
#include "ir/dynamic_dims.h"
#include "ir/graph.h"
#include "plan/planner.h"
#include "plan/replan.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tmmu {

enum class ModelKind { IrJson, TransformerConfig, DsaCsv, Onnx };

struct ModelRequest {
    Mode mode = Mode::Training;
    uint64_t batch = 8;  // transformer configs only
    uint64_t seq = 1024; // transformer configs only
    // ONNX models: symbolic dimensions by name; IR graphs with a shape envelope: dynamic
    // dimensions by name (ignored by graphs of fixed shapes). Whole input shapes: ONNX only.
    std::map<std::string, int64_t> dims{};
    std::map<std::string, std::vector<int64_t>> input_shapes{};
    // ONNX models only: Reshape/Flatten/Squeeze/Unsqueeze/Identity outputs as views of their
    // input and single-consumer elementwise ops in place, as ONNX runtimes do (--no-aliasing).
    bool aliasing = true;
    // Transformer configs only: above 0, batch and seq are dynamic dimensions with batch up to
    // this (GraphRequest::max_batch), for a run over iterations; 0: fixed shapes.
    uint64_t max_batch = 0;
    // ONNX models only: non-empty, the symbolic dimensions bound in `dims` become dynamic, each
    // up to its value here (at least its binding), for a run over iterations.
    std::map<std::string, int64_t> max_dims{};
};

struct LoadedModel {
    ModelKind kind = ModelKind::IrJson;
    std::string path;
    std::string description;    // one line for summaries: "gpt2 'gpt2-small', 12 layers, ..."
    std::optional<Graph> graph; // IR JSON, transformer configs, ONNX
    std::optional<DsaProblem> problem; // CSV
    ModelAnnotations annotations;
    // An ONNX model over iterations: the model built again at a binding, as the probes built
    // it, so each replan's binding can be checked (run_shape_schedule); empty otherwise.
    BuildAtBinding build_at;
};

// The request a run over `iterations` loads a model with: a transformer config gets batch and
// seq as dynamic dimensions, batch up to the largest `asked` or an iteration asks for (seq up to
// the model's positions); an ONNX model gets each symbolic dimension bound by name as a dynamic
// dimension, up to the largest asked for; IR graphs declare their own. Without iterations:
// `asked`.
ModelRequest request_over_iterations(const ModelRequest& asked,
                                     const std::vector<DimBinding>& iterations);

// Detects the kind by content (a CSV header, "format": "tmmu-ir", or config fields).
// Throws IO_ERROR for unreadable files and INVALID_IR_SHAPES for unrecognised content.
LoadedModel load_model(const std::string& path, const ModelRequest& request);

// ONNX models: the inputs and symbolic dims as the file declares them, without binding or
// planning (what a dialog asks the user to bind); empty for other sources. Throws what
// load_model throws for an ONNX file that does not check.
ModelAnnotations declared_inputs(const std::string& path);

// Plans a loaded model: graphs in request.mode, CSV problems as a single arena. The model's own
// notes (an ONNX loader's aliasing and folding) come first in the plan's notes.
Plan plan_model(const LoadedModel& model, Mode mode, const PlanOptions& options,
                const Progress& progress);

// Ends a run over iterations of `model` (run_shape_schedule from its plan): `model` becomes the
// graph bound as the last plan, and `plan` that plan, its notes starting with the model's as
// plan_model's do. The annotations follow the new binding, but an ONNX model keeps its loader's
// (inputs, attributes and notes; the loader named the axes, which hold at every binding).
void adopt_schedule_run(LoadedModel& model, Plan& plan, ShapeScheduleRun run);

} // namespace tmmu
