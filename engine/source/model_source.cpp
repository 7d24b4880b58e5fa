#include "source/model_source.h"

#include "core/failure.h"
#include "core/units.h"
#include "io/checkpoint.h"
#include "io/file_io.h"
#include "ir/dims_from_probes.h"
#include "ir/dynamic_dims.h"
#include "ir/ir_json.h"
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#ifdef TMMU_HAVE_ONNX
#include "onnx/onnx_loader.h"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace tmmu {
namespace {

bool looks_like_csv(std::string_view text) {
    size_t eol = text.find('\n');
    std::string_view header = text.substr(0, eol);
    return header.find(',') != std::string_view::npos && header.find('{') == std::string_view::npos;
}

// A dynamic batch and seq are bound again by iterations: the summary's dims line says where.
std::string describe_config(const TransformerConfig& c, const ModelRequest& r) {
    return fmt::format("{} '{}', {} layers, hidden {}, {} heads, {}batch {}, seq {}",
                       variant_name(c.variant), c.name, c.n_layer, c.hidden, c.n_head,
                       r.max_batch ? "dynamic shapes from " : "", r.batch, r.seq);
}

// An ONNX ModelProto starts with its ir_version field (protobuf tag 0x08, a small varint). ONNX
// files are binary and may be large: only their first bytes are read to detect them.
bool is_onnx_file(const std::string& path) {
    const std::string head = read_file_head(path, 2);
    return head.size() == 2 && uint8_t(head[0]) == 0x08 && uint8_t(head[1]) < 0x80;
}

#ifdef TMMU_HAVE_ONNX
// For a run over iterations: the symbolic dimensions bound by name become dynamic dimensions
// (REPLAN_AT_SAFEPOINT), each from 1 up to its largest value asked for; which axes follow them
// is read from the model loaded again at other values. Dimensions given only through whole
// input shapes stay as bound.
void make_onnx_dynamic(LoadedModel& m, std::shared_ptr<const onnx::OnnxFile> file,
                       const std::string& path, const ModelRequest& request) {
    std::vector<DynamicDim> dims;
    for (const std::string& name : m.annotations.symbolic_dims)
        if (const auto v = request.dims.find(name); v != request.dims.end()) {
            const auto max = request.max_dims.find(name);
            dims.push_back({name, 1,
                            std::max(v->second, max == request.max_dims.end() ? 0 : max->second),
                            v->second});
        }
    if (dims.empty()) return;
    for (const DynamicDim& d : dims)
        if (const std::string why = dim_name_problem(d.name); !why.empty())
            fail(FailureCode::InvalidArgument, "--dim " + d.name,
                 fmt::format("'{}' cannot vary over iterations: {}; --dim alone plans it at one "
                             "value",
                             d.name, why));
    const BuildAtBinding build_at = [file, shapes = request.input_shapes,
                                     aliasing = request.aliasing](const DimBinding& b) {
        try {
            return file->load({b, shapes, aliasing}).graph;
        } catch (const Failure& f) {
            // The base load bound the names this one binds: a shape left unknown here is one
            // the loader could not infer at these values, not a binding the user left out.
            if (f.code() == FailureCode::UnboundDimension &&
                f.message().starts_with(onnx::kUnboundPrefix))
                fail(FailureCode::InvalidIrShapes, f.where(),
                     fmt::format("at {} shapes could not be inferred: {}", binding_text(b),
                                 f.message().substr(onnx::kUnboundPrefix.size())));
            // The loader's refusal of the shapes there (a node that does not hold at them).
            if (f.code() == FailureCode::InvalidIrShapes)
                fail(f.code(), f.where(), fmt::format("at {}: {}", binding_text(b), f.message()));
            fail(f.code(), f.where(),
                 fmt::format("loaded again at {} (a run over iterations checks its shapes "
                             "there): {}",
                             binding_text(b), f.message()));
        }
    };
    make_dims_from_probes(*m.graph, std::move(dims), ReplanPolicy::ReplanAtSafepoint, build_at,
                          path);
    m.annotations.dim_names = dim_annotations(*m.graph).dim_names;
    m.build_at = build_at;
}
#endif

LoadedModel load_onnx_model(const std::string& path, const ModelRequest& request) {
#ifdef TMMU_HAVE_ONNX
    auto file = std::make_shared<const onnx::OnnxFile>(path);
    onnx::OnnxModel o = file->load({request.dims, request.input_shapes, request.aliasing});
    LoadedModel m;
    m.kind = ModelKind::Onnx;
    m.path = path;
    m.description = fmt::format("ONNX '{}' (opset {}, from {}), {}, {}", o.graph.name, o.opset,
                                o.producer.empty() ? "?" : o.producer,
                                count_of(o.graph.tensors.size(), "tensor"),
                                count_of(o.graph.nodes.size(), "node"));
    m.graph = std::move(o.graph);
    m.annotations = std::move(o.annotations);
    if (!request.max_dims.empty()) make_onnx_dynamic(m, std::move(file), path, request);
    return m;
#else
    (void)request;
    fail(FailureCode::InvalidIrShapes, path,
         "an ONNX model, but this build has no ONNX loader (configure with libonnx-dev and "
         "libprotobuf-dev installed)");
#endif
}

} // namespace

ModelAnnotations declared_inputs(const std::string& path) {
#ifdef TMMU_HAVE_ONNX
    if (is_onnx_file(path)) return onnx::declared_inputs(path);
#endif
    (void)path;
    return {};
}

ModelRequest request_over_iterations(const ModelRequest& asked,
                                     const std::vector<DimBinding>& iterations) {
    ModelRequest r = asked;
    if (iterations.empty()) return r;
    r.max_batch = r.batch;
    r.max_dims = r.dims;
    for (const DimBinding& i : iterations) {
        if (const auto b = i.find("batch"); b != i.end() && b->second > 0)
            r.max_batch = std::max(r.max_batch, uint64_t(b->second));
        for (const auto& [name, value] : i)
            if (auto m = r.max_dims.find(name); m != r.max_dims.end())
                m->second = std::max(m->second, value);
    }
    return r;
}

LoadedModel load_model(const std::string& path, const ModelRequest& request) {
    if (is_onnx_file(path)) return load_onnx_model(path, request);
    std::string text = read_text_file(path);
    LoadedModel m;
    m.path = path;
    if (looks_like_ir_json(text)) {
        m.kind = ModelKind::IrJson;
        m.graph = load_ir_string(text, path);
        // request.dims bind a graph's dynamic dimensions; a graph of fixed shapes ignores them,
        // as it does batch and seq (the CLI refuses --dim for it, naming the option).
        if (!m.graph->dims.empty()) bind_dims(*m.graph, request.dims, "--dim");
        m.annotations = dim_annotations(*m.graph);
        m.description = fmt::format("IR '{}', {}, {}", m.graph->name,
                                    count_of(m.graph->tensors.size(), "tensor"),
                                    count_of(m.graph->nodes.size(), "node"));
    } else if (looks_like_transformer_config(text)) {
        m.kind = ModelKind::TransformerConfig;
        TransformerConfig cfg = parse_transformer_config(text, path);
        // max_batch is --batch or an iteration's batch, which parse_iteration keeps in range.
        if (request.max_batch > uint64_t(kMaxDynamicDim))
            fail(FailureCode::InvalidArgument, "--batch",
                 fmt::format("{} is more than a batch that --iteration varies can be ({})",
                             request.max_batch, kMaxDynamicDim));
        GraphRequest g;
        g.batch = request.batch;
        g.seq = request.seq;
        g.max_batch = request.max_batch;
        g.mode = request.mode;
        m.graph = build_transformer_graph(cfg, g);
        m.description = describe_config(cfg, request);
    } else if (looks_like_csv(text)) {
        m.kind = ModelKind::DsaCsv;
        m.problem = parse_dsa_csv(text, path);
        m.description =
            "offset-assignment problem, " + count_of(m.problem->problem.buffers.size(), "buffer");
    } else if (looks_like_checkpoint(text)) {
        fail(FailureCode::InvalidIrShapes, path,
             "a plan checkpoint, not a model: `tmmu validate` checks it, the studio opens it; "
             "plan the model it came from to plan again");
    } else {
        fail(FailureCode::InvalidIrShapes, path,
             "not a model this tool reads: expected native IR JSON (\"format\": \"tmmu-ir\"), a "
             "GPT-2, Llama, Mistral or Qwen2 config.json, an ONNX model, or an offset-assignment "
             "CSV (id,lower,upper,size)");
    }
    return m;
}

Plan plan_model(const LoadedModel& model, Mode mode, const PlanOptions& options,
                const Progress& progress) {
    if (model.graph) {
        Plan plan = plan_graph(*model.graph, mode, options, progress, model.path);
        plan.notes.insert(plan.notes.begin(), model.annotations.notes.begin(),
                          model.annotations.notes.end());
        return plan;
    }
    if (!model.problem)
        fail(FailureCode::InvalidArgument, model.path,
             "holds a plan, not a model (a checkpoint or an exported session): there is nothing "
             "to plan again; open the model it was planned from");
    return plan_problem(model.problem->problem, model.problem->ids, options, progress, model.path);
}

void adopt_schedule_run(LoadedModel& model, Plan& plan, ShapeScheduleRun run) {
    model.graph = std::move(run.graph);
    if (model.kind != ModelKind::Onnx) model.annotations = dim_annotations(*model.graph);
    plan = std::move(run.plan);
    // A replan goes through plan_graph, which knows the graph only: the first plan had them.
    const bool replanned = std::any_of(run.iterations.begin(), run.iterations.end(),
                                       [](const IterationOutcome& i) { return i.replanned; });
    if (replanned)
        plan.notes.insert(plan.notes.begin(), model.annotations.notes.begin(),
                          model.annotations.notes.end());
}

} // namespace tmmu
