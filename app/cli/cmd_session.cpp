// `tmmu session ...` and `tmmu plan --record`: the sessions database from the command line.
#include "commands.h"
#include "interrupt.h"

#include "replay.h"
#include "run_store.h"
#include "session_diff.h"
#include "session_iterations.h"
#include "session_store.h"

#include "core/failure.h"
#include "core/units.h"
#include "encoding/sha256.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

namespace tmmu::cli {
namespace {

using namespace tmmu::sessions;

constexpr const char* kHelp = R"(usage: tmmu session COMMAND [options]

Recorded planning runs (sessions) and model runs. `tmmu plan MODEL --record [--title T]
[--tag X]` adds a session, `tmmu run CONFIG --record [--title T]` a model run.

commands:
  list [--search TEXT] [--limit N]   sessions, newest first (the newest N only, N >= 1;
                                     all without --limit); TEXT matches a title substring
                                     or a tag exactly
  show ID                            inputs, metrics and integrity of a session
  replay ID                          plan the stored inputs again and compare with the stored
                                     plan: "identical", or which tensors moved; and
                                     whether the model file changed or is missing since.
                                     A run over iterations (tmmu plan --iteration --record)
                                     runs them again from its first plan's binding and
                                     says whether each was decided as recorded
  delete ID                          remove a session
  edit ID [--title T] [--notes N] [--tag X]... [--clear-tags]
                                     change what a person wrote about a session; --tag
                                     replaces the tag set (the plan and inputs never change)
  diff A B                           the settings that differ (mode, strategy, arena capacity,
                                     alignment, page size, ...), metric deltas per arena,
                                     tensors placed differently, and how each session reached
                                     its plan when that differs (iterations)

Recorded model runs (`tmmu run --record`) have their own ids:
  runs [--limit N]                   recorded runs, newest first (N >= 1, as for list)
  run ID                             what a run asked for and gave, and its integrity
  replay-run ID                      run it again (same config, weights, prompts, settings)
                                     and compare every step's logits: "identical", or the
                                     first step that differs and how

options:
  --sessions PATH   sessions database (default $XDG_DATA_HOME/tmmu/sessions.db, else
                    ~/.local/share/tmmu/sessions.db)

Integrity: every field list, show, replay and export rely on is sealed when the run is
recorded (SHA-256 in the row; title, notes and tags are yours to edit and are not). A row
changed behind tmmu's back is marked ALTERED: list checks the fields it shows (created,
source, mode, strategy, totals; a distributed run's rank and a run's iteration count are
read from the options and iterations, which only show checks); show, replay and export check
everything (the stored plan against its hash and totals, the model text, request, options,
iterations, metrics and version).

Exit status: replay and diff exit 1 when the plans (or a replayed iteration) differ,
replay-run when the runs differ; show and run exit 10 + CORRUPT_CHECKPOINT when the session
or run was altered. A missing database is IO_ERROR for every command here: only
`tmmu plan --record` creates one.
)";

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v)
        out += (out.empty() ? "" : ",") + s;
    return out;
}

int list(const ListQuery& q, const std::string& path) {
    SessionStore store(path, StoreAccess::ExistingOnly);
    const std::vector<SessionSummary> sessions = store.list(q);
    size_t mode_width = 9; // "inference"; wider for a rank of a distributed run
    for (const SessionSummary& s : sessions)
        mode_width = std::max(mode_width, listed_mode(s).size());
    fmt::print("{:>6}  {:<20}  {:<{}}  {:<11}  {:>12}  {:<12}  {}\n", "id", "created", "mode",
               mode_width, "strategy", "peak", "plan hash", "title [tags] source");
    size_t altered = 0;
    for (const SessionSummary& s : sessions) {
        fmt::print("{:>6}  {:<20}  {:<{}}  {:<11}  {:>12}  {:<12}  {}{} {}{}\n", s.id, s.created,
                   listed_mode(s), mode_width, s.strategy, format_bytes(s.peak_bytes),
                   s.plan_hash.substr(0, 12), s.title,
                   s.tags.empty() ? "" : " [" + join(s.tags) + "]", s.source_path,
                   s.altered_reason.empty() ? "" : "  ALTERED");
        altered += !s.altered_reason.empty();
    }
    if (altered)
        fmt::print(stderr,
                   "tmmu: warning: {} marked ALTERED: their listed fields changed after "
                   "recording (tmmu session show ID says more)\n",
                   count_of(altered, "session"));
    return 0;
}

int show(const Session& s) {
    const SessionSummary& m = s.summary;
    fmt::print("session    {}\ncreated    {}   tmmu {}\ntitle      {}\ntags       {}\n", m.id,
               m.created, s.program_version, m.title, join(m.tags));
    if (!s.notes.empty()) fmt::print("notes      {}\n", s.notes);
    fmt::print("source     {} ({}, {} bytes stored)\n", m.source_path,
               s.input.is_problem ? "offset problem CSV" : "IR JSON", s.input.model_text.size());
    if (!s.input.source_sha256.empty())
        fmt::print("file hash  SHA-256 {}\n", s.input.source_sha256);
    if (s.input.onnx)
        fmt::print("onnx       {}{}\n", s.input.iterations ? "first plan at " : "",
                   bindings_text(s.input));
    fmt::print("mode       {}   {}   strategy {}\n", m.mode,
               !request_shapes_model(s.input) ? std::string("batch and seq n/a (not a config)")
               // After iterations the plan's shapes are in the dims line.
               : s.input.iterations
                   ? fmt::format("first plan at batch {}   seq {}", s.input.request.batch,
                                 s.input.request.seq)
                   : fmt::format("batch {}   seq {}", s.input.request.batch, s.input.request.seq),
               m.strategy);
    if (!s.input.options.shard.single_rank())
        fmt::print("shard      {}\n", describe_shard_spec(s.input.options.shard));
    if (const std::string dims = stored_envelope_text(s.input); !dims.empty())
        fmt::print("dims       {}\n", dims);
    const std::vector<std::string> iterations = iterations_lines(s.input);
    for (size_t i = 0; i < iterations.size(); ++i)
        fmt::print("{}{}\n", i == 0 ? "iterations " : "           ", iterations[i]);
    fmt::print("ir hash    {}\nplan hash  {}\n", s.ir_hash, m.plan_hash);
    if (s.plan) {
        fmt::print("\n{:<14} {:<12} {:>14} {:>14} {:>8}\n", "arena", "strategy", "peak",
                   "lower bound", "tensors");
        for (const ArenaPlan& a : s.plan->arenas)
            fmt::print("{:<14} {:<12} {:>14} {:>14} {:>8}\n", a.config.name, a.strategy,
                       format_bytes(a.metrics.peak_bytes), format_bytes(a.metrics.lower_bound),
                       a.metrics.tensors);
    }
    if (s.altered) {
        fmt::print("\nintegrity  ALTERED: {}\n", s.altered_reason);
        return failure_exit_status(FailureCode::CorruptCheckpoint);
    }
    fmt::print("\nintegrity  ok (the stored plan decodes and matches its hash; the summary and "
               "inputs match their seals)\n");
    return 0;
}

int list_recorded_runs(const std::string& path, size_t limit) {
    SessionStore store(path, StoreAccess::ExistingOnly);
    fmt::print("{:>6}  {:<20}  {:<8}  {:<16}  {:<12}  {}\n", "id", "created", "backend", "model",
               "logits hash", "title");
    for (const RunSummary& r : list_runs(store, limit))
        fmt::print("{:>6}  {:<20}  {:<8}  {:<16}  {:<12}  {}{}\n", r.id, r.created, r.backend,
                   r.model, r.logits_hash.substr(0, 12), r.title,
                   r.altered_reason.empty() ? "" : "  ALTERED");
    return 0;
}

int show_run(const StoredRun& run) {
    fmt::print("run        {}\ncreated    {}   tmmu {}\ntitle      {}\n", run.summary.id,
               run.summary.created, run.program_version, run.summary.title);
    if (run.record) print_run(*run.record);
    if (run.altered) {
        fmt::print("\nintegrity  ALTERED: {}\n", run.summary.altered_reason);
        return failure_exit_status(FailureCode::CorruptCheckpoint);
    }
    fmt::print("\nintegrity  ok (the stored run matches its seal)\n");
    return 0;
}

int replay_recorded_run(const StoredRun& run) {
    if (!run.record)
        fail(FailureCode::CorruptCheckpoint, fmt::format("run {}", run.summary.id),
             run.summary.altered_reason);
    if (run.altered)
        fmt::print(stderr, "tmmu: warning: run {} is ALTERED ({}); replaying what is stored\n",
                   run.summary.id, run.summary.altered_reason);
    fmt::print("replay of run {} with tmmu {} (recorded with {})\n", run.summary.id, TMMU_VERSION,
               run.program_version);
    return replay_run(*run.record, interruptible_progress());
}

// `edit`'s options, read before the positionals so that Args sees them consumed.
struct EditOptions {
    SessionEdit edit;
    bool any() const { return edit.title || edit.notes || edit.tags; }
};

EditOptions edit_options_from(Args& args) {
    EditOptions o;
    o.edit.title = args.value("--title");
    o.edit.notes = args.value("--notes");
    std::vector<std::string> tags = args.values("--tag");
    bool clear = args.flag("--clear-tags");
    if (clear && !tags.empty())
        fail(FailureCode::InvalidArgument, "--clear-tags", "give either --tag or --clear-tags");
    if (clear || !tags.empty()) o.edit.tags = std::move(tags);
    return o;
}

int edit(SessionStore& store, int64_t id, const EditOptions& o) {
    if (!o.any())
        fail(FailureCode::InvalidArgument, "session edit",
             "nothing to change: give --title, --notes, --tag or --clear-tags");
    store.edit(id, o.edit);
    fmt::print("updated session {}", id);
    if (o.edit.title) fmt::print(": title '{}'", *o.edit.title);
    if (o.edit.tags) fmt::print("{} tags [{}]", o.edit.title ? "," : ":", join(*o.edit.tags));
    if (o.edit.notes) fmt::print("{} notes changed", o.edit.title || o.edit.tags ? "," : ":");
    fmt::print("\n");
    return 0;
}

} // namespace

std::string sessions_db_path(const std::optional<std::string>& given) {
    return given ? *given : default_sessions_path();
}

int64_t parse_session_id(const std::string& text) {
    const uint64_t id = app::parse_positive(text, "ID");
    if (id > uint64_t(INT64_MAX)) // SQLite row ids are signed 64-bit
        fail(FailureCode::InvalidArgument, "ID", fmt::format("no session has id {}", text));
    return int64_t(id);
}

RecordOptions record_options_from(Args& args) {
    RecordOptions r;
    r.record = args.flag("--record");
    r.title = args.value("--title").value_or("");
    r.notes = args.value("--notes").value_or("");
    r.tags = args.values("--tag");
    sessions::check_tags(r.tags); // before planning, which may take long
    r.sessions = args.value("--sessions");
    if (!r.record && (!r.title.empty() || !r.notes.empty() || !r.tags.empty() || r.sessions))
        fail(FailureCode::InvalidArgument, "--record",
             "--title, --tag, --notes and --sessions only apply with --record");
    return r;
}

std::optional<int64_t> record_if_asked(const RecordOptions& rec, const LoadedModel& model,
                                       const ModelRequest& request, const PlanOptions& options,
                                       const Plan& plan,
                                       std::optional<IterationHistory> iterations) {
    if (!rec.record) return std::nullopt;
    SessionStore store(sessions_db_path(rec.sessions));
    NewSession n{input_from_model(model, request, options), plan, rec.title, rec.notes, rec.tags};
    n.input.iterations = std::move(iterations);
    return store.record(n);
}

int cmd_session(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    std::string path = sessions_db_path(args.value("--sessions"));
    ListQuery q;
    auto search = args.value("--search");
    q.search = search.value_or("");
    q.limit = size_t(args.count("--limit").value_or(0)); // 0: no limit
    EditOptions edits = edit_options_from(args);
    auto pos = args.positionals(1, 3);
    const std::string& sub = pos[0];
    size_t want = sub == "list" || sub == "runs" ? 1 : sub == "diff" ? 3 : 2;
    if (pos.size() != want)
        fail(FailureCode::InvalidArgument, "session " + sub,
             fmt::format("expects {} (see tmmu session --help)", count_of(want - 1, "argument")));
    if (sub == "list") return list(q, path);
    if (sub == "runs" && !search) return list_recorded_runs(path, q.limit);
    if (search || q.limit)
        fail(FailureCode::InvalidArgument, search ? "--search" : "--limit",
             search ? "only applies to list" : "only applies to list and runs");
    if (sub != "edit" && edits.any())
        fail(FailureCode::InvalidArgument, "--title", "--title, --notes and --tag apply to edit");
    static constexpr std::string_view kCommands[] = {"edit", "show", "delete",    "replay",
                                                     "diff", "run",  "replay-run"};
    if (std::find(std::begin(kCommands), std::end(kCommands), sub) == std::end(kCommands))
        fail(FailureCode::InvalidArgument, sub,
             "unknown session command; expected list, show, replay, delete, edit, diff, runs, "
             "run or replay-run");
    SessionStore store(path, StoreAccess::ExistingOnly);
    if (sub == "run") return show_run(load_run(store, parse_session_id(pos[1])));
    if (sub == "replay-run") return replay_recorded_run(load_run(store, parse_session_id(pos[1])));
    if (sub == "edit") return edit(store, parse_session_id(pos[1]), edits);
    if (sub == "show") return show(store.load(parse_session_id(pos[1])));
    if (sub == "delete") {
        int64_t id = parse_session_id(pos[1]);
        if (!store.remove(id))
            fail(FailureCode::InvalidArgument, fmt::format("session {}", id), "no such session");
        fmt::print("deleted session {}\n", id);
        return 0;
    }
    if (sub == "replay") {
        Session s = store.load(parse_session_id(pos[1]));
        ReplayResult r = replay_session(s, interruptible_progress());
        fmt::print("replay of session {} with tmmu {} (recorded with {})\n{}\n{}", s.summary.id,
                   TMMU_VERSION, s.program_version, r.source.line, format_comparison(r.comparison));
        if (r.iterations) fmt::print("iterations {}\n", r.iterations->verdict);
        return r.identical() ? 0 : 1;
    }
    Session a = store.load(parse_session_id(pos[1]));
    Session b = store.load(parse_session_id(pos[2]));
    PlanComparison c = diff_sessions(a, b);
    fmt::print("session {} -> session {}\n{}", a.summary.id, b.summary.id, format_comparison(c));
    return c.identical ? 0 : 1;
}

} // namespace tmmu::cli
