// Small commands: validate, gen, strategies.
#include "commands.h"

#include "core/failure.h"
#include "core/units.h"
#include "encoding/sha256.h"
#include "io/checkpoint.h"
#include "io/file_io.h"
#include "ir/ir_json.h"
#include "liveness/liveness.h"
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#include "plan/strategy.h"

#include "runtime/plan_json.h"
#include <algorithm>

#include <cstdio>
#include <fmt/format.h>

namespace tmmu::cli {
namespace {

constexpr const char* kValidateHelp = R"(usage: tmmu validate FILE [--mode M] [--batch N --seq N]

Checks FILE and prints what it holds, or one line naming the failure code and where.
  - a plan checkpoint (CBOR, from `tmmu plan --checkpoint`): decoded, its plan hash recomputed
    and every arena re-checked by the independent validator;
  - a model (IR JSON, transformer config, offset-assignment CSV): loaded, validated, and its
    liveness analysed in the given mode (default training);
  - a runtime execution plan (JSON, from `tmmu compile --json`): every reference, register
    producer, view and parameter block checked as the runtime checks it at load.
--mode applies to model graphs, --batch and --seq to transformer configs; given for anything
else (a checkpoint, a CSV problem) they are a usage error (exit 2).
)";

constexpr const char* kGenHelp =
    R"(usage: tmmu gen gpt2|llama|mistral|qwen2 CONFIG --out FILE [--batch N] [--seq N] [--mode M]

Expands a GPT-2, Llama, Mistral or Qwen2 config.json into a native IR JSON graph at operator
granularity (llama also takes Mistral and Qwen2 configs, the Llama family).
  --mode M     inference | forward | training (default training)
  --batch N    batch size (default 8)
  --seq N      sequence length (default 1024)
  --out FILE   where to write the IR JSON ("-" for stdout)
)";

} // namespace

int cmd_validate(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kValidateHelp, stdout);
        return 0;
    }
    const RequestChoice request_choice = model_request_from(args);
    const ModelRequest& request = request_choice.request;
    std::string path = args.positionals(1, 1)[0];
    const std::string text = read_text_file(path);
    if (runtime::looks_like_plan_json(text)) {
        if (const char* given =
                request_choice.given_mode ? request_choice.given_mode : request_choice.given_shape)
            fail(FailureCode::InvalidArgument, given,
                 "an execution plan is compiled already; --mode, --batch and --seq apply to "
                 "models");
        const runtime::CompiledPlan plan = runtime::load_plan_json(text, path);
        fmt::print("valid execution plan: {}, {}, {}, at most {} live\n", plan.plan.name,
                   count_of(plan.plan.instructions.size(), "instruction"),
                   count_of(plan.plan.registers.size(), "register"), plan.peak_registers);
        for (const runtime::PlanDiagnostic& d : plan.diagnostics)
            fmt::print("warning: {}\n", d.message);
        return 0;
    }
    if (looks_like_checkpoint(text)) {
        if (const char* given =
                request_choice.given_mode ? request_choice.given_mode : request_choice.given_shape)
            fail(FailureCode::InvalidArgument, given,
                 "a checkpoint holds a finished plan; --mode, --batch and --seq apply to models");
        Plan plan = read_checkpoint_file(path);
        fmt::print("valid checkpoint: {} in {}, plan hash {}\n",
                   count_of(plan.tensors.size(), "tensor"), count_of(plan.arenas.size(), "arena"),
                   to_hex(plan.plan_hash));
        return 0;
    }
    LoadedModel model = load_model(path, request);
    check_request_applies(request_choice, model);
    if (model.graph) {
        Liveness lv = analyze_liveness(*model.graph, request.mode);
        fmt::print("valid model: {}\n{} mode: {}, {}\n", model.description, mode_name(request.mode),
                   count_of(lv.steps(), "step"), count_of(lv.storages.size(), "storage"));
        for (const std::string& note : lv.notes)
            fmt::print("note: {}\n", note);
    } else {
        fmt::print("valid problem: {}, lower bound {} bytes\n", model.description,
                   lower_bound_bytes(model.problem->problem));
    }
    return 0;
}

int cmd_gen(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kGenHelp, stdout);
        return 0;
    }
    const ModelRequest request = model_request_from(args).request; // a config: all apply
    auto out = args.value("--out");
    auto pos = args.positionals(2, 2);
    if (!out) fail(FailureCode::InvalidArgument, "--out", "required: where to write the IR JSON");
    TransformerConfig cfg = load_transformer_config(pos[1]);
    if (pos[0] != "gpt2" && pos[0] != "llama" && pos[0] != "mistral" && pos[0] != "qwen2")
        fail(FailureCode::InvalidArgument, pos[0],
             "expected the family gpt2 or llama (or the model type mistral or qwen2)");
    // The family names every config of it; a model type names its own.
    if (pos[0] != family_name(cfg.family) && pos[0] != variant_name(cfg.variant))
        fail(FailureCode::InvalidArgument, pos[1],
             fmt::format("is a {} config, not {}", variant_name(cfg.variant), pos[0]));
    GraphRequest g;
    g.batch = request.batch;
    g.seq = request.seq;
    g.mode = request.mode;
    std::string json = save_ir_json(build_transformer_graph(cfg, g));
    write_output(*out, json + "\n");
    return 0;
}

int cmd_strategies(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs("usage: tmmu strategies\n\nLists the offset strategies `tmmu plan --strategy` "
                   "accepts.\n",
                   stdout);
        return 0;
    }
    args.positionals(0, 0);
    size_t width = 0;
    for (const OffsetStrategy* s : all_strategies())
        width = std::max(width, s->name().size());
    for (const OffsetStrategy* s : all_strategies())
        fmt::print("{:<{}} {}\n", s->name(), width, s->description());
    return 0;
}

} // namespace tmmu::cli
