// `tmmu lazy run`: a lazy program (tmmu-lazy-program JSON) on the token/effect engine (seed 004),
// and the dispatch of `tmmu lazy traces`, `replay`, `diff` and `export` (cmd_lazy_traces.cpp).
#include "commands.h"

#include "interrupt.h"
#include "lazy_store.h"

#include "core/failure.h"
#include "core/units.h"
#include "io/file_io.h"
#include "lazy/program.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tmmu::cli {
namespace {

using namespace tmmu::lazy;

constexpr const char* kHelp =
    R"(usage: tmmu lazy COMMAND [options]   (tmmu lazy COMMAND --help for details)

Lazy programs: JSON files of statements over named tensors (ops, views, in-place updates,
random draws, backward, reads, mark_step, SGD and AdamW, repeat, tidy, checkpoint, compile) that drive the token/effect engine
(resources/docs/lazy-programs.md; examples in resources/programs).

commands:
  run PROGRAM [--json OUT|-] [--trace OUT|-] [--eager] [--checkpoint-policy P]
      [--compile] [--record [--title T]]
                     run one: its reads, events, plans, steps and memory; --record keeps
                     the trace in the sessions database
  traces [--limit N] [--json OUT|-]
                     recorded traces, newest first
  replay ID          run a recorded program again and compare the trace hashes
  diff A B           compare two recorded traces: hashes, counters, errors, the first event
                     where they part
  export ID [--out FILE|-]
                     write a recorded trace as the JSON of run --trace

options:
  --sessions PATH    sessions database (default $XDG_DATA_HOME/tmmu/sessions.db, else
                     ~/.local/share/tmmu/sessions.db)
)";

constexpr const char* kRunHelp =
    R"help(usage: tmmu lazy run PROGRAM [--json OUT|-] [--trace OUT|-] [--eager]
                     [--checkpoint-policy recompute|keep] [--compile]
                     [--record [--title T] [--sessions PATH]]

Runs a lazy program (tmmu-lazy-program JSON, resources/docs/lazy-programs.md) on a fresh
token/effect engine. Ops only record lazy nodes; work runs when a statement reads a value (only
what that value depends on) or at mark_step (everything pending). Prints each read (name, the
statement that read it, shape, the first values), then the run: trace events, forced plans,
completed steps, the most bytes the buffer pool held against the largest arena our planner
gives any plan the same buffers, buffers allocated and reused, the checkpointed bodies and the
ops their replays made, the kernels run (and with --compile the compiled calls, cache hits and
misses, fused kernels), the trace hash (the same program gives the same hash every run) and
the result hash (every value read; a run with --compile must give the one without).
A run that breaks a rule of the engine prints the same for the trace up to the error.

options:
  --json OUT|-      write the counters, the trace hash and every read as JSON (outputs.md)
  --trace OUT|-     write the whole trace as JSON: every event (keys, tokens, values, locs,
                    versions, buffers, sites) and every plan record (outputs.md)
  --eager           force after every op: the eager reference, whose reads a lazy run must
                    match bit for bit
  --checkpoint-policy recompute|keep
                    what "checkpoint" bodies do with their saved-for-backward values:
                    recompute (default) keeps none and backward replays the body; keep runs
                    the bodies plainly, to compare memory (the reads are the same bit for bit)
  --compile         run "compile" statements as compiled calls: each call stages its body,
                    looks its variant up in the function's cache and runs as one node whose
                    elementwise chains run fused; without it their bodies run plainly (the
                    reads, and the result hash, are the same bit for bit)
  --record          record the program's text and its trace in the sessions database, a run
                    that breaks a rule too (with its error): `tmmu lazy traces` lists them,
                    `tmmu lazy replay ID` runs one again and compares the trace hashes
  --title T         title of the recorded trace
  --sessions PATH   sessions database (default $XDG_DATA_HOME/tmmu/sessions.db, else
                    ~/.local/share/tmmu/sessions.db); recording creates it

Exit status: 0 success; 10 INVALID_IR_SHAPES for a malformed program (bad JSON, an unknown
op or name, a wrong count of arguments, a bad shape), naming the statement and field, e.g.
program[7].body[2].args[1]; 16 IO_ERROR; 26 LAZY_ENGINE_ERROR when the program breaks a rule
of the engine, with the spec's error name first (SavedTensorModifiedError,
TensorHostCoercionError, DisposedTensorError, ...) and the statement, e.g.
"program[9] (iteration 2)". A recorded run that fails is recorded first, then exits the same.
)help";

// Every option of every lazy command: Args wants them all taken before the positionals.
struct LazyOptions {
    bool help = false;
    std::optional<std::string> json_out, trace_out, title, sessions, checkpoint_policy, out;
    bool eager = false, record = false, compile = false;
    size_t limit = 0;
};

LazyOptions lazy_options_from(Args& args) {
    LazyOptions o;
    o.help = args.flag("--help") || args.flag("-h");
    o.json_out = args.value("--json");
    o.trace_out = args.value("--trace");
    o.out = args.value("--out");
    o.title = args.value("--title");
    o.sessions = args.value("--sessions");
    o.eager = args.flag("--eager");
    o.checkpoint_policy = args.value("--checkpoint-policy");
    o.record = args.flag("--record");
    o.compile = args.flag("--compile");
    o.limit = size_t(args.count("--limit").value_or(0)); // 0: no limit
    return o;
}

// InvalidArgument for an option given to a command it does not apply to.
void check_options_apply(const std::string& command, const LazyOptions& o) {
    const bool run = command == "run", traces = command == "traces";
    auto refuse_unless = [](bool given, bool applies, const char* option, const char* to) {
        if (given && !applies)
            fail(FailureCode::InvalidArgument, option, fmt::format("only applies to {}", to));
    };
    refuse_unless(o.trace_out.has_value(), run, "--trace", "lazy run");
    refuse_unless(o.eager, run, "--eager", "lazy run");
    refuse_unless(o.checkpoint_policy.has_value(), run, "--checkpoint-policy", "lazy run");
    refuse_unless(o.record, run, "--record", "lazy run");
    refuse_unless(o.compile, run, "--compile", "lazy run");
    refuse_unless(o.title.has_value(), run && o.record, "--title", "lazy run --record");
    refuse_unless(o.sessions.has_value(), !run || o.record, "--sessions",
                  "lazy run --record, lazy traces, replay, diff and export");
    refuse_unless(o.out.has_value(), command == "export", "--out", "lazy export");
    refuse_unless(o.json_out.has_value(), run || traces, "--json", "lazy run and lazy traces");
    refuse_unless(o.limit != 0, traces, "--limit", "lazy traces");
}

// "read loss at program[9] (iteration 2): [] = 0.5", the first values of a larger tensor.
std::string read_line(const HostRead& r) {
    constexpr size_t kShown = 6;
    std::vector<std::string> shown;
    for (size_t i = 0; i < std::min(r.values.size(), kShown); ++i)
        shown.push_back(fmt::format("{:.6g}", r.values[i]));
    std::string values = fmt::format("{}", fmt::join(shown, ", "));
    if (r.values.size() > kShown) values += fmt::format(", ... ({} values)", r.values.size());
    return fmt::format("read {} at {}: {} = {}", r.name, r.site, shape_text(r.shape), values);
}

void print_summary(const ProgramRun& run) {
    const EngineStats& s = run.stats;
    fmt::print("events {}, plans {}, steps {}\n", s.events, s.plans, s.steps);
    fmt::print("pool peak {}, planned peak {} (our planner, same buffers)\n",
               format_bytes(s.pool_peak_bytes), format_bytes(s.planned_peak_bytes));
    fmt::print("buffers {} allocated, {} reused\n", s.buffers_allocated, s.buffers_reused);
    if (s.checkpoints > 0)
        fmt::print("checkpoints {}, {} ops recomputed\n", s.checkpoints, s.recomputed_ops);
    fmt::print("kernels {}\n", s.kernels);
    if (s.compiled_calls > 0)
        fmt::print("compiled calls {} (cache {} hits, {} misses), {} fused kernels ran {} ops, "
                   "largest region arena {}\n",
                   s.compiled_calls, s.cache_hits, s.cache_misses, s.fused_groups, s.fused_ops,
                   format_bytes(s.compiled_planned_bytes));
    fmt::print("trace_hash {}\nresult_hash {}\n", to_hex(run.trace_hash), to_hex(run.result_hash));
}

// --checkpoint-policy's value; InvalidArgument naming the option for another word.
CheckpointPolicy checkpoint_policy_of(const LazyOptions& o) {
    if (!o.checkpoint_policy) return CheckpointPolicy::Recompute;
    if (const auto p = checkpoint_policy_from(*o.checkpoint_policy)) return *p;
    fail(FailureCode::InvalidArgument, "--checkpoint-policy",
         fmt::format("expects recompute or keep, got '{}'", *o.checkpoint_policy));
}

int lazy_run(const std::string& path, const LazyOptions& o) {
    const EngineOptions options{
        .eager = o.eager, .checkpoint = checkpoint_policy_of(o), .compile = o.compile};
    const bool to_stdout =
        sends_one_output_to_stdout({{"--json", o.json_out}, {"--trace", o.trace_out}});
    // Read once: a recording stores exactly the text that ran.
    const std::string text = read_text_file(path);
    const LazyProgram program = parse_lazy_program(text, path);
    // Reads are printed as they happen: a later failure still shows what came before it.
    ReadCallback on_read;
    if (!to_stdout) {
        fmt::print("program {} ({} statements{}{}{})\n", program.name, program.statement_count,
                   o.eager ? ", eager" : "",
                   options.checkpoint == CheckpointPolicy::Keep ? ", checkpoints kept" : "",
                   o.compile ? ", compiled" : "");
        on_read = [](const HostRead& r) { fmt::print("{}\n", read_line(r)); };
    }
    const ProgramRun run =
        run_lazy_program_to_failure(program, options, on_read, interruptible_progress());
    const bool failed = !run.failure.empty();
    if (!to_stdout) print_summary(run);
    // The outputs describe whole runs only; a failed one's trace is what --record keeps.
    if (o.json_out && !failed) write_output(*o.json_out, program_run_json(program, run));
    if (o.trace_out && !failed) write_output(*o.trace_out, lazy_trace_json(program, run));
    if (o.record) {
        sessions::SessionStore store(sessions_db_path(o.sessions));
        const int64_t id =
            sessions::record_lazy_trace(store, program, text, run, o.title.value_or(""));
        fmt::print(to_stdout ? stderr : stdout, "recorded as lazy trace {} in {}\n", id,
                   store.path());
    }
    if (!failed) return 0;
    fmt::print(stderr, "tmmu: {}\n", run.failure); // as main reports an escaped Failure
    return failure_exit_status(run.failure_code);
}

struct LazyCommand {
    std::string_view name;
    const char* help;
    size_t positionals; // the command's name included
    const char* expects;
};

} // namespace

int cmd_lazy(Args& args) {
    const LazyOptions o = lazy_options_from(args);
    const auto pos = args.positionals(0, 3);
    if (pos.empty() && o.help) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (pos.empty())
        fail(FailureCode::InvalidArgument, "lazy",
             "expects a command: run, traces, replay, diff or export (see tmmu lazy --help)");
    const LazyCommand commands[] = {{"run", kRunHelp, 2, "a PROGRAM file"},
                                    {"traces", kLazyTracesHelp, 1, "no arguments"},
                                    {"replay", kLazyReplayHelp, 2, "a lazy trace ID"},
                                    {"diff", kLazyDiffHelp, 3, "two lazy trace IDs"},
                                    {"export", kLazyExportHelp, 2, "a lazy trace ID"}};
    const auto* c = std::find_if(std::begin(commands), std::end(commands),
                                 [&](const LazyCommand& k) { return k.name == pos[0]; });
    if (c == std::end(commands))
        fail(FailureCode::InvalidArgument, pos[0],
             "unknown lazy command; expected run, traces, replay, diff or export");
    if (o.help) {
        std::fputs(c->help, stdout);
        return 0;
    }
    if (pos.size() != c->positionals)
        fail(FailureCode::InvalidArgument, "lazy " + pos[0],
             fmt::format("expects {} (see tmmu lazy {} --help)", c->expects, pos[0]));
    check_options_apply(pos[0], o);
    if (pos[0] == "traces") return lazy_traces(sessions_db_path(o.sessions), o.limit, o.json_out);
    if (pos[0] == "replay") return lazy_replay(sessions_db_path(o.sessions), pos[1]);
    if (pos[0] == "diff") return lazy_diff(sessions_db_path(o.sessions), pos[1], pos[2]);
    if (pos[0] == "export")
        return lazy_export(sessions_db_path(o.sessions), pos[1], o.out.value_or("-"));
    return lazy_run(pos[1], o);
}

} // namespace tmmu::cli
