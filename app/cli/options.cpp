#include "commands.h"

#include "core/failure.h"
#include "io/file_io.h"
#include "models/transformer_graph.h"

#include <fmt/format.h>

namespace tmmu::cli {
namespace {

// --batch or --seq, inside what the transformer graph builder takes.
uint64_t shape_value(std::string_view text, const char* option) {
    const uint64_t v = app::parse_positive(text, option);
    if (v > kMaxTransformerDim)
        fail(FailureCode::InvalidArgument, option,
             fmt::format("{} is more than a transformer graph takes (2^40)", v));
    return v;
}

} // namespace

RequestChoice model_request_from(Args& args) {
    RequestChoice c;
    if (auto m = args.value("--mode")) {
        c.request.mode = app::parse_mode_choice(*m, "--mode");
        c.given_mode = "--mode";
    }
    if (auto b = args.value("--batch")) {
        c.request.batch = shape_value(*b, "--batch");
        c.given_shape = "--batch";
    }
    if (auto s = args.value("--seq")) {
        c.request.seq = shape_value(*s, "--seq");
        c.given_shape = "--seq";
    }
    for (const std::string& d : args.values("--dim")) {
        const auto [name, value] = app::parse_dim_binding(d, "--dim");
        c.request.dims[name] = value;
        c.given_binding = "--dim";
    }
    for (const std::string& s : args.values("--input-shape")) {
        auto [name, shape] = app::parse_input_shape(s, "--input-shape");
        c.request.input_shapes[name] = std::move(shape);
        c.given_binding = "--input-shape";
    }
    if (args.flag("--no-aliasing")) {
        c.request.aliasing = false;
        c.given_binding = "--no-aliasing";
    }
    return c;
}

void check_request_applies(const RequestChoice& c, const LoadedModel& model) {
    const ModelKind kind = model.kind;
    const bool ir_dims = kind == ModelKind::IrJson && model.graph && !model.graph->dims.empty() &&
                         c.given_binding && std::string_view(c.given_binding) == "--dim";
    if (kind != ModelKind::Onnx && c.given_binding && !ir_dims)
        fail(FailureCode::InvalidArgument, c.given_binding,
             std::string_view(c.given_binding) != "--dim"
                 ? "applies to ONNX models only (other models have no symbolic dimensions and "
                   "say their own views and in-place writes)"
             : kind == ModelKind::TransformerConfig
                 ? "applies to ONNX models and IR graphs with a shape_envelope only (a "
                   "transformer config's shapes are --batch and --seq, and --iteration "
                   "batch=N,seq=N varies them)"
                 : "applies to ONNX models and IR graphs with a shape_envelope only (this "
                   "model's shapes are fixed)");
    if (kind == ModelKind::DsaCsv && c.given_mode)
        fail(FailureCode::InvalidArgument, c.given_mode,
             "offset-assignment problems (CSV) have no modes; --mode applies to model graphs");
    if (kind != ModelKind::TransformerConfig && c.given_shape)
        fail(FailureCode::InvalidArgument, c.given_shape,
             fmt::format("applies to transformer configs only (this model is {})",
                         kind == ModelKind::DsaCsv ? "an offset-assignment problem, whose shapes "
                                                     "are fixed"
                         : kind == ModelKind::Onnx
                             ? (model.annotations.symbolic_dims.empty()
                                    ? "an ONNX model without symbolic dimensions, whose shapes are "
                                      "fixed"
                                    : "an ONNX model: --dim binds its symbolic dimensions")
                         : model.graph && !model.graph->dims.empty()
                             ? "an IR graph with a shape_envelope: --dim binds its dimensions"
                             : "an IR graph, whose shapes are fixed"));
}

bool sends_one_output_to_stdout(std::initializer_list<OutputOption> outputs) {
    const char* first = nullptr;
    for (const OutputOption& o : outputs) {
        if (!o.path || !is_stdout_path(*o.path)) continue;
        if (first)
            fail(FailureCode::InvalidArgument, o.name,
                 fmt::format("{} already writes to standard output (-); give one of them a file",
                             first));
        first = o.name;
    }
    return first != nullptr;
}

app::PlanChoices plan_choices_from(Args& args) {
    app::PlanChoices c;
    if (auto s = args.value("--strategy")) c.strategy = app::parse_strategy(*s, "--strategy");
    if (auto budget = args.value("--budget")) app::parse_budget(*budget, c, "--budget");
    if (auto a = args.value("--align")) c.alignment = app::parse_alignment(*a, "--align");
    if (auto m = args.value("--memory-budget"))
        c.memory_budget = app::parse_memory_budget(*m, "--memory-budget");
    for (const std::string& spec : args.values("--arena"))
        c.arenas.push_back(app::parse_arena_setting(spec, "--arena"));
    for (const std::string& spec : args.values("--route"))
        c.routes.push_back(app::parse_route(spec, "--route"));
    if (auto n = args.value("--world-size"))
        c.shard.world_size = app::parse_world_size(*n, "--world-size");
    if (auto r = args.value("--rank")) c.shard.rank = app::parse_rank(*r, "--rank");
    if (auto roles = args.value("--shard"))
        c.shard.roles = app::parse_shard_roles(*roles, "--shard");
    if (auto t = args.value("--replay-token"))
        c.replay_token = digest_from_hex(*t, "--replay-token");
    return c;
}

ConfigFile config_argument(Args& args, const char* command) {
    const auto pos = args.positionals(0, 1);
    ConfigFile f;
    f.path = pos.empty() ? app::default_model_path() : pos[0];
    f.text = read_text_file(f.path);
    if (!looks_like_transformer_config(f.text))
        fail(FailureCode::InvalidArgument, f.path,
             fmt::format("{} takes a GPT-2, Llama, Mistral or Qwen2 config.json", command));
    f.config = parse_transformer_config(f.text, f.path);
    return f;
}

} // namespace tmmu::cli
