#include "commands.h"
#include "interrupt.h"
#include "plan_apply.h"

#include "core/units.h"
#include "encoding/sha256.h"
#include "io/checkpoint.h"
#include "io/file_io.h"
#include "io/plan_json.h"
#include "io/trace.h"
#include "ir/dynamic_dims.h"
#include "plan/plan_hash.h"
#include "plan/plan_summary.h"
#include "plan/replan.h"

#include <cstdio>
#include <fmt/format.h>

namespace tmmu::cli {
namespace {

constexpr const char* kHelp = R"(usage: tmmu plan [MODEL] [options]

Plans the memory of MODEL and prints a summary. MODEL is a native IR JSON file, a GPT-2 or
Llama config.json, an ONNX model, or an offset-assignment CSV (id,lower,upper,size), detected by
content. Without MODEL the bundled default is planned: GPT-2 small, training, batch 8, sequence
1024.

options:
  --mode M             inference | forward | training (default training; "backward" = training);
                       model graphs only
  --batch N --seq N    batch and sequence length, transformer configs only (default 8, 1024)
  --dim NAME=VALUE     an ONNX model's symbolic dimension, or an IR graph's dynamic dimension
                       inside its shape_envelope (default: the dimension's "default", else
                       its max); repeatable
  --iteration NAME=V[,NAME=V...]
                       run an IR graph with a shape_envelope, a transformer config (its
                       dimensions batch, up to the largest asked for, and seq, up to the
                       model's positions; the first plan at --batch and --seq) or an ONNX
                       model (the symbolic dimensions --dim binds, each up to the largest
                       asked for; the first plan at --dim), over iterations of these shapes
                       (repeatable, in order; seed 000 II.H).
                       An iteration that fits the plan in force runs on it; one that needs
                       a larger dimension stops with SHAPE_ENVELOPE_VIOLATION (exit 29) when
                       the model's replan_policy is ABORT, or gets a new plan at the
                       safepoint before it (the iteration boundary) when it is
                       REPLAN_AT_SAFEPOINT: each dimension grows to the larger of the old
                       plan's and the iteration's (a rank's plan, --shard, holds its own
                       shapes only: every other iteration is planned again, as a rank's
                       shares need not shrink with the shapes). The outputs are those
                       of the plan in force after the last iteration; --json adds the
                       iterations, --trace one replan record per replan (old and new plan
                       hash)
  --input-shape IN=AxB an ONNX model's whole input shape, e.g. images=1x3x640x640 (repeatable;
                       for dims an exporter left unknown and unnamed)
  --no-aliasing        an ONNX model's Reshape/Flatten/Squeeze/Unsqueeze/Identity outputs and
                       elementwise results get bytes of their own instead of aliasing their
                       input as ONNX runtimes do (the plan's notes list what aliased)
  --strategy S         slots | ffd | greedy-size | best-fit | tflm-greedy | tflite-arena |
                       xla-spatial | xla-temporal | tvm-size | tvm-conflicts | ort-online |
                       executorch-greedy | multi-order | auto | optimal (default auto; tmmu
                       strategies says what each does; tflm-greedy .. executorch-greedy are
                       the planners of TensorFlow Lite Micro, TensorFlow Lite, XLA, TVM, ONNX
                       Runtime and ExecuTorch with their own tie-breaking, and auto and
                       optimal are never above any of them)
  --budget N|Nms       effort of --strategy optimal: N search nodes (default 400000, which
                       brings the minimalloc suite A-K to its targets; the search stops
                       early once it proves a height minimal; the same N always gives the
                       same plan), or N milliseconds (e.g. 500ms: NOT reproducible, the plan
                       depends on the machine's speed and load)
  --arena NAME=CAPACITY[:ALIGN[:PAGE]]
                       an arena's capacity, alignment and/or page size, e.g.
                       activations=8GiB, activations=8GiB:256, parameters=:4KiB or
                       activations=8GiB::2MiB (repeatable, once per arena; the alignment
                       overrides --align there); a paged arena holds its peak rounded up to
                       whole pages, and only whole pages of its capacity; CSV problems use
                       the arena name "arena"
  --route ROLE=ARENA   put a role's tensors in another arena, e.g. gradient=activations
                       (default arenas: parameters, activations, gradients, optimizer)
  --align N            alignment of every arena in bytes, unless --arena gives its own
                       (default 128; 1 for CSV problems)
  --memory-budget SIZE the most bytes all arenas may commit together (each its peak, in
                       whole pages where it is paged), e.g. 12GiB: a plan
                       over it fails with MEMORY_BUDGET_EXCEEDED (exit 28), naming each
                       arena's committed share (and its peak where it is paged) and the
                       lower bound, and writes no plan (--trace gets the failure record)
  --world-size N       ranks of a distributed run (default 1); the plan is for one of them,
                       and its hash names the rank and world size (seed 000 II.I)
  --rank R             the rank to plan, 0 to N-1 (default 0)
  --shard ROLES        roles split across the ranks: parameter, activation, gradient,
                       optimizer_state (comma-separated). Each tensor's elements, flattened,
                       are cut into N chunks of ceil(E/N) and the rank holds its own
                       (ZeRO/FSDP flat sharding); tensors sharing bytes are cut together,
                       or kept whole when one of them is of a role not sharded. A sharded
                       parameter is gathered whole into a workspace buffer before each
                       forward and backward node that reads it (all_gather nodes); the
                       optimizer updates its shard in place. A parameter gradient is
                       reduce-scattered into its shard as soon as it is complete
                       (reduce_scatter nodes); activation gradients stay whole.
                       Sharded activations are held 1/N per rank, without the buffers of the
                       collectives around them. ZeRO-1: --shard optimizer_state; ZeRO-2:
                       gradient,optimizer_state; ZeRO-3/FSDP: parameter,gradient,
                       optimizer_state
  --replay-token HEX   32-byte replay token (64 hex digits) mixed into the plan hash
  --json OUT|-         write the plan as JSON (resources/docs/outputs.md) to OUT or stdout
  --tensors            include the per-tensor table and the sharing pairs in --json output
  --trace OUT|-        write the allocation trace (JSON lines) to OUT or stdout; a run that
                       fails (loading, planning, applying or writing its outputs) writes its
                       failure record there instead (step, code, operator)
  --checkpoint OUT|-   write the CBOR checkpoint to OUT or stdout
  --apply FILL         apply the plan to host memory as a runtime would (seed 000's ApplyPlan):
                       allocate each arena's committed bytes, bind every tensor to base +
                       offset, fill each in tensor order with zero (literal zeros) or debug
                       or debug:SEED (a seeded pattern fixed by arena offset, so tensors
                       sharing bytes agree), read every tensor back, and commit: the summary
                       prints the bytes written and the state hash, the same in every run of
                       the same plan and fill; --json adds "applied"
  --data-policy P      standard (default), confidential or regulated: the last two refuse a
                       debug fill, as the seed asks (with --apply only)
  --quiet              print nothing but errors
  --record             record the run in the sessions database (see tmmu session --help)
  --title T --tag X    title and tags (repeatable) of the recorded session
  --notes TEXT         free-form notes of the recorded session
  --sessions PATH      sessions database (default $XDG_DATA_HOME/tmmu/sessions.db)

environment:
  TMMU_PLAN_THREADS=N  threads for the passes that best-fit, multi-order, auto and optimal
                       run side by side on problems of more than 2,048 buffers (default: the
                       processors', at most 4); the plan is the same for any N
)";

std::string short_hash(const Digest& d) {
    return to_hex(d).substr(0, 16);
}

std::vector<DimBinding> iterations_from(Args& args) {
    std::vector<DimBinding> out;
    for (const std::string& spec : args.values("--iteration"))
        out.push_back(app::parse_iteration(spec, "--iteration"));
    return out;
}

void print_iteration(const IterationOutcome& i) {
    fmt::print("  {}\n", iteration_text(i));
}

// Before anything is planned: only a graph with dynamic dimensions runs over iterations (an IR
// graph with a shape envelope, a transformer config, an ONNX model with dimensions bound by
// name).
void check_iterations_apply(const LoadedModel& model) {
    if (model.graph && !model.graph->dims.empty()) return;
    fail(FailureCode::InvalidArgument, "--iteration",
         model.kind == ModelKind::Onnx
             ? std::string(model.annotations.symbolic_dims.empty()
                               ? "an ONNX model varies over iterations in its symbolic "
                                 "dimensions, and this one declares none: its shapes are fixed"
                               : "an ONNX model's symbolic dimensions vary over iterations when "
                                 "--dim binds them by name (this model has none bound so)")
             : std::string("applies to IR graphs with a shape_envelope, transformer configs "
                           "and ONNX models with symbolic dimensions only (this model's shapes "
                           "are fixed)"));
}

// Runs the iterations from the first plan; the model and plan become those of the last.
// `decided` gains each iteration as it is decided, so a failure later keeps the earlier ones.
void run_iterations(LoadedModel& model, Plan& plan, Mode mode, const PlanOptions& options,
                    const std::vector<DimBinding>& iterations, bool print,
                    std::vector<IterationOutcome>& decided) {
    if (print)
        fmt::print("iterations replan_policy {}, replan key {}; first plan at {}: {}  {}\n",
                   replan_policy_name(model.graph->replan_policy),
                   short_hash(replan_key(*model.graph, plan)), binding_text(*model.graph),
                   short_hash(plan.plan_hash), format_bytes(plan_totals(plan).peak_bytes));
    ShapeScheduleRun run = run_shape_schedule(
        *model.graph, std::move(plan), mode, options, iterations,
        [print, &decided](const IterationOutcome& i) {
            decided.push_back(i);
            if (print) print_iteration(i);
        },
        interruptible_progress(), model.build_at);
    if (print) fmt::print("\n");
    adopt_schedule_run(model, plan, std::move(run));
}

void print_summary(const LoadedModel& model, const Plan& plan) {
    fmt::print("model      {}\n           {}\n", model.path, model.description);
    // A problem has no schedule: its buffers' times are the file's own.
    if (plan.mode)
        fmt::print("mode       {}   strategy {}   steps {}   tensors {}\n", mode_name(*plan.mode),
                   plan.strategy, plan.execution_order.size(), plan.tensors.size());
    else
        fmt::print("mode       {}   strategy {}   buffers {}\n", mode_name(plan.mode),
                   plan.strategy, plan.tensors.size());
    if (!plan.shard.single_rank()) fmt::print("shard      {}\n", describe_shard_spec(plan.shard));
    if (model.graph && !model.graph->dims.empty())
        fmt::print("dims       {}\n", envelope_text(*model.graph));
    fmt::print("\n{:<12} {:<16} {:>14} {:>14} {:>9} {:>7} {:>8} {:>8} {:>7} {:>9}\n", "arena",
               "strategy", "peak", "lower bound", "over LB", "slots", "max live", "buffers",
               "reuse", "plan ms");
    for (const ArenaPlan& a : plan.arenas) {
        const ArenaMetrics& m = a.metrics;
        fmt::print("{:<12} {:<16} {:>14} {:>14} {:>8.3f}% {:>7} {:>8} {:>8} {:>6.1f}% {:>9.3f}\n",
                   a.config.name, a.strategy, format_bytes(m.peak_bytes),
                   format_bytes(m.lower_bound), (m.peak_over_bound - 1.0) * 100.0, m.slot_count,
                   m.max_live, m.buffers, m.reuse_ratio * 100.0, double(m.plan_ns) / 1e6);
    }
    const PlanTotals totals = plan_totals(plan);
    const uint64_t peak = totals.peak_bytes, bound = totals.lower_bound;
    double over = bound ? (double(peak) / double(bound) - 1.0) * 100.0 : 0.0;
    fmt::print("{:<12} {:<16} {:>14} {:>14} {:>8.3f}%\n", "total", "", format_bytes(peak),
               format_bytes(bound), over);
    for (const ArenaPlan& a : plan.arenas)
        if (const uint64_t least = aligned_bound(a); least > a.metrics.lower_bound)
            fmt::print("aligned    {}: no plan is below {} once its buffers are aligned (the lower "
                       "bound counts no padding); this plan is {}\n",
                       a.config.name, format_bytes(least),
                       a.metrics.peak_bytes <= least
                           ? std::string("at it")
                           : format_bytes(a.metrics.peak_bytes - least) + " above it");
    for (const ArenaPlan& a : plan.arenas)
        if (a.config.page_size != 0)
            fmt::print("pages      {}: {} in pages of {} for its peak of {}\n", a.config.name,
                       format_bytes(a.config.committed_bytes(a.metrics.peak_bytes)),
                       format_bytes(a.config.page_size), format_bytes(a.metrics.peak_bytes));
    const ArenaReuse reuse = plan_reuse(plan);
    fmt::print("\nreuse      saves {} ({:.1f}%) of {} without reuse; {} share{} bytes\n",
               format_bytes(reuse.saved_bytes),
               reuse.isolated_bytes
                   ? 100.0 * double(reuse.saved_bytes) / double(reuse.isolated_bytes)
                   : 0.0,
               format_bytes(reuse.isolated_bytes), count_of(reuse.sharing_pairs, "buffer pair"),
               reuse.sharing_pairs == 1 ? "s" : "");
    if (const std::string retained = retention_text(plan); !retained.empty())
        fmt::print("retention  {}\n", retained);
    fmt::print("\nplan hash  {}\nir hash    {}\n", to_hex(plan.plan_hash), to_hex(plan.ir_hash));
    for (const std::string& note : plan.notes)
        fmt::print("note: {}\n", note);
}

// The plan JSON, with what --apply did when it was asked for.
std::string json_text(const Plan& plan, bool with_tensors, const std::vector<IterationOutcome>& ran,
                      const std::optional<app::AppliedPlan>& applied) {
    nlohmann::ordered_json extra;
    if (applied) extra["applied"] = app::applied_json(*applied);
    return plan_to_json(plan, with_tensors, ran, extra);
}

// A run that failed still writes its trace, ending in the failure record (seed 0.Z); a trace that
// cannot be written is reported beside the failure, which stays the run's outcome.
void write_failure_trace(const Failure& failure, const Digest& replay_token,
                         const std::vector<IterationOutcome>& decided, const std::string& out) {
    try {
        write_output(out, failure_trace_jsonl(failure, replay_token, decided));
    } catch (const Failure& unwritten) {
        fmt::print(stderr, "tmmu: the failure trace was not written: {}\n", unwritten.what());
    }
}

} // namespace

int cmd_plan(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const RequestChoice request_choice = model_request_from(args);
    app::PlanChoices choices = plan_choices_from(args);
    auto json_out = args.value("--json");
    bool with_tensors = args.flag("--tensors");
    auto trace_out = args.value("--trace");
    auto checkpoint_out = args.value("--checkpoint");
    bool quiet = args.flag("--quiet");
    RecordOptions rec = record_options_from(args);
    const std::vector<DimBinding> iterations = iterations_from(args);
    const ModelRequest request = request_over_iterations(request_choice.request, iterations);
    const std::optional<ApplyOptions> apply = apply_options_from(args);
    auto pos = args.positionals(0, 1);
    const bool to_stdout = sends_one_output_to_stdout(
        {{"--json", json_out}, {"--trace", trace_out}, {"--checkpoint", checkpoint_out}});
    std::string path = pos.empty() ? app::default_model_path() : pos[0];

    LoadedModel model;
    PlanOptions options;
    Plan plan;
    std::vector<IterationOutcome> ran;
    DimBinding start; // the binding of the first plan of a run over iterations
    std::optional<app::AppliedPlan> applied;
    try {
        model = load_model(path, request);
        check_request_applies(request_choice, model);
        if (!iterations.empty()) check_iterations_apply(model);
        options = app::make_plan_options(choices, model.kind);
        plan = plan_model(model, request.mode, options, interruptible_progress());
        if (!iterations.empty()) {
            start = binding_of(*model.graph);
            run_iterations(model, plan, request.mode, options, iterations, !quiet && !to_stdout,
                           ran);
        }
        if (apply) applied = app::apply_to_host(plan, *apply, interruptible_progress());
        if (trace_out) write_trace_file(plan, *trace_out, ran);
        if (checkpoint_out) write_checkpoint_file(plan, *checkpoint_out);
        // Last: its "status" says success, so nothing may fail after it is written.
        if (json_out) write_output(*json_out, json_text(plan, with_tensors, ran, applied) + "\n");
    } catch (const Failure& f) {
        // Also after a later output failed: the trace then says the run failed, not how a plan
        // it did not finish writing looked.
        if (trace_out) write_failure_trace(f, choices.replay_token, ran, *trace_out);
        throw;
    }
    // Standard output carries the one output sent there, so the summary steps aside.
    if (!quiet && !to_stdout) {
        print_summary(model, plan);
        if (applied) fmt::print("{}", applied_text(*applied));
    }
    std::optional<IterationHistory> history;
    if (!iterations.empty()) history = IterationHistory{start, ran};
    if (auto id = record_if_asked(rec, model, request, options, plan, std::move(history));
        id && !quiet)
        fmt::print(to_stdout ? stderr : stdout, "recorded session {}\n", *id);
    return 0;
}

} // namespace tmmu::cli
