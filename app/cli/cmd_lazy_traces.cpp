// `tmmu lazy traces`, `replay`, `diff` and `export`: lazy program traces recorded by `tmmu lazy
// run --record` (sessions/lazy_store.h).
#include "commands.h"

#include "interrupt.h"
#include "lazy_store.h"
#include "lazy_trace_diff.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "core/units.h"
#include "io/file_io.h"

#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tmmu::cli {

const char* const kLazyTracesHelp =
    R"(usage: tmmu lazy traces [--limit N] [--json OUT|-] [--sessions PATH]

Lists the lazy program traces `tmmu lazy run --record` stored, newest first: id, when, trace
events, the trace hash's first 12 digits, the program (and title), and "ok" or the error that
stopped the run. A row changed behind tmmu's back (every field is sealed when recorded) is
marked "ALTERED: why".

options:
  --limit N         the newest N only (N >= 1; all without --limit)
  --json OUT|-      write the listing as JSON (resources/docs/outputs.md) to OUT or stdout
  --sessions PATH   sessions database (default $XDG_DATA_HOME/tmmu/sessions.db, else
                    ~/.local/share/tmmu/sessions.db)
)";

const char* const kLazyReplayHelp = R"(usage: tmmu lazy replay ID [--sessions PATH]

Runs a recorded lazy program again from the text stored with it (eager, with checkpoints
kept, or compiled, when it was recorded so) on a fresh engine, and prints the recorded and the
replayed trace hash, counters and error, then "identical" or what differs; when the traces
differ, the first event (or plan) where they part and its fields that changed.

Exit status: 0 when the trace hash and the error (or none) are the same, 1 when they differ;
18 CORRUPT_CHECKPOINT when the row was changed behind tmmu's back (it is replayed anyway, and
the comparison printed); 2 for an unknown ID; 16 IO_ERROR when there is no
sessions database.
)";

const char* const kLazyDiffHelp = R"(usage: tmmu lazy diff A B [--sessions PATH]

Compares two recorded lazy traces without running anything: each one's program, trace hash,
counters and error, then "identical" or what differs, and the first event (or plan) where the
traces part with its fields that changed ("op was \"tanh\", is \"sigmoid\"": was in A, is in B).
Two runs of one program give identical traces; a program edited between recordings shows where
its trace first changed.

Exit status: 0 when the trace hashes and the errors (or none) are the same, 1 when they
differ; 18 CORRUPT_CHECKPOINT when either row was changed behind tmmu's back (compared anyway);
2 for an unknown ID; 16 IO_ERROR when there is no sessions database.
)";

const char* const kLazyExportHelp = R"(usage: tmmu lazy export ID [--out FILE|-] [--sessions PATH]

Writes a recorded lazy trace as the JSON `tmmu lazy run --trace` writes (every event and plan
record; resources/docs/outputs.md), exactly as it was recorded, to FILE or standard output
(the default). A run that broke a rule of the engine is recorded with its trace up to the
error, which `--trace` does not write: export is where that trace can be had.

Exit status: 0 written; 18 CORRUPT_CHECKPOINT when the row was changed behind tmmu's back
(nothing is written: the stored trace is not what ran); 2 for an unknown ID; 16 IO_ERROR.
)";

namespace {

using sessions::LazyTraceSummary;

std::string traces_json(const std::vector<LazyTraceSummary>& traces) {
    using nlohmann::ordered_json;
    auto or_null = [](const std::string& text) {
        return text.empty() ? ordered_json() : ordered_json(text);
    };
    ordered_json rows = ordered_json::array();
    for (const LazyTraceSummary& t : traces)
        rows.push_back({{"id", t.id},
                        {"created", t.created},
                        {"title", t.title},
                        {"program", t.program},
                        {"origin", t.origin},
                        {"eager", t.eager},
                        {"checkpoint_policy", lazy::checkpoint_policy_name(t.checkpoint)},
                        {"compile", t.compile},
                        {"events", t.events},
                        {"plans", t.plans},
                        {"steps", t.steps},
                        {"pool_peak_bytes", t.pool_peak_bytes},
                        {"planned_peak_bytes", t.planned_peak_bytes},
                        {"trace_hash", t.trace_hash},
                        {"failure", or_null(t.failure)},
                        {"altered", or_null(t.altered_reason)}});
    const ordered_json j = {{"format", "tmmu-lazy-traces"}, {"version", 1}, {"traces", rows}};
    return json_text(j, 2) + "\n";
}

void print_traces(const std::vector<LazyTraceSummary>& traces) {
    fmt::print("{:>6}  {:<20}  {:>7}  {:<12}  {}\n", "id", "created", "events", "trace hash",
               "program \"title\": result");
    size_t altered = 0;
    for (const LazyTraceSummary& t : traces) {
        fmt::print("{:>6}  {:<20}  {:>7}  {:<12}  {}{}: {}{}\n", t.id, t.created, t.events,
                   t.trace_hash.substr(0, 12), t.program,
                   t.title.empty() ? "" : fmt::format(" \"{}\"", t.title),
                   t.failure.empty() ? "ok" : t.failure,
                   t.altered_reason.empty() ? "" : "  ALTERED: " + t.altered_reason);
        altered += !t.altered_reason.empty();
    }
    if (altered)
        fmt::print(stderr, "tmmu: warning: {} marked ALTERED: changed after recording\n",
                   count_of(altered, "lazy trace"));
}

// "trace_hash 3f5c... (412 events, 5 plans, 3 steps)"
std::string trace_line(const std::string& hash, uint64_t events, uint64_t plans, uint64_t steps) {
    return fmt::format("trace_hash {} ({}, {}, {})", hash, count_of(events, "event"),
                       count_of(plans, "plan"), count_of(steps, "step"));
}

void warn_if_altered(const sessions::StoredLazyTrace& t, std::string_view doing) {
    if (t.altered)
        fmt::print(stderr, "tmmu: warning: lazy trace {} is ALTERED ({}); {}\n", t.summary.id,
                   t.summary.altered_reason, doing);
}

// How the recorded run ran, as a replay runs it too: "eager, checkpoints kept, compiled", or "".
std::string run_options_text(const LazyTraceSummary& s) {
    std::string how;
    for (auto [on, word] :
         {std::pair(s.eager, "eager"),
          std::pair(s.checkpoint == lazy::CheckpointPolicy::Keep, "checkpoints kept"),
          std::pair(s.compile, "compiled")})
        if (on) how += fmt::format("{}{}", how.empty() ? "" : ", ", word);
    return how;
}

// "program mlp-training \"title\" (eager), recorded 2026-11-27T10:00:00Z with tmmu 0.1.0"
std::string recording_line(const sessions::StoredLazyTrace& t) {
    const LazyTraceSummary& s = t.summary;
    const std::string how = run_options_text(s);
    return fmt::format("program {}{}{}, recorded {} with tmmu {}", s.program,
                       s.title.empty() ? "" : fmt::format(" \"{}\"", s.title),
                       how.empty() ? "" : " (" + how + ")", s.created, t.program_version);
}

} // namespace

int lazy_traces(const std::string& db, size_t limit, const std::optional<std::string>& json_out) {
    const bool to_stdout = sends_one_output_to_stdout({{"--json", json_out}});
    sessions::SessionStore store(db, sessions::StoreAccess::ExistingOnly);
    const std::vector<LazyTraceSummary> traces = sessions::list_lazy_traces(store, limit);
    if (!to_stdout) print_traces(traces);
    if (json_out) write_output(*json_out, traces_json(traces));
    return 0;
}

int lazy_replay(const std::string& db, const std::string& id_text) {
    sessions::SessionStore store(db, sessions::StoreAccess::ExistingOnly);
    const sessions::StoredLazyTrace stored =
        sessions::load_lazy_trace(store, parse_session_id(id_text));
    const LazyTraceSummary& s = stored.summary;
    warn_if_altered(stored, "replaying what is stored");
    const std::string how = run_options_text(s);
    fmt::print("replay of lazy trace {} ({}{}) with tmmu {} (recorded with {})\n", s.id, s.program,
               how.empty() ? "" : ", " + how, TMMU_VERSION, stored.program_version);
    const sessions::LazyReplay r = sessions::replay_lazy_trace(stored, interruptible_progress());
    const lazy::EngineStats& now = r.run.stats;
    fmt::print("recorded  {}\n", trace_line(r.recorded_hash, s.events, s.plans, s.steps));
    fmt::print("replayed  {}\n", trace_line(r.replayed_hash, now.events, now.plans, now.steps));
    if (!r.recorded_failure.empty() || !r.replayed_failure.empty())
        fmt::print("recorded  error: {}\nreplayed  error: {}\n",
                   r.recorded_failure.empty() ? "none" : r.recorded_failure,
                   r.replayed_failure.empty() ? "none" : r.replayed_failure);
    fmt::print("{}\n", sessions::trace_verdict(r.recorded_hash, r.replayed_hash, r.recorded_failure,
                                               r.replayed_failure));
    if (!r.first_difference.empty()) fmt::print("first difference: {}\n", r.first_difference);
    if (stored.altered) {
        fmt::print("integrity ALTERED: {}\n", s.altered_reason);
        return failure_exit_status(FailureCode::CorruptCheckpoint);
    }
    return r.same ? 0 : 1;
}

int lazy_diff(const std::string& db, const std::string& a_text, const std::string& b_text) {
    sessions::SessionStore store(db, sessions::StoreAccess::ExistingOnly);
    const sessions::StoredLazyTrace a = sessions::load_lazy_trace(store, parse_session_id(a_text));
    const sessions::StoredLazyTrace b = sessions::load_lazy_trace(store, parse_session_id(b_text));
    for (const sessions::StoredLazyTrace* t : {&a, &b})
        warn_if_altered(*t, "comparing what is stored");
    for (const sessions::StoredLazyTrace* t : {&a, &b}) {
        const LazyTraceSummary& s = t->summary;
        fmt::print("{:>6}  {}\n        {}\n        error: {}\n", s.id, recording_line(*t),
                   trace_line(s.trace_hash, s.events, s.plans, s.steps),
                   s.failure.empty() ? "none" : s.failure);
    }
    const LazyTraceSummary &x = a.summary, &y = b.summary;
    fmt::print("{}\n", sessions::trace_verdict(x.trace_hash, y.trace_hash, x.failure, y.failure));
    if (x.trace_hash != y.trace_hash) {
        const std::string where = sessions::first_trace_difference(
            a.trace_json, b.trace_json,
            {fmt::format("trace {}", x.id), fmt::format("trace {}", y.id)});
        if (!where.empty()) fmt::print("first difference: {}\n", where);
    }
    if (a.altered || b.altered) return failure_exit_status(FailureCode::CorruptCheckpoint);
    return x.trace_hash == y.trace_hash && x.failure == y.failure ? 0 : 1;
}

int lazy_export(const std::string& db, const std::string& id_text, const std::string& out) {
    sessions::SessionStore store(db, sessions::StoreAccess::ExistingOnly);
    const sessions::StoredLazyTrace t = sessions::load_lazy_trace(store, parse_session_id(id_text));
    if (t.altered)
        fail(FailureCode::CorruptCheckpoint, fmt::format("lazy trace {}", t.summary.id),
             fmt::format("changed after recording ({}); not exported", t.summary.altered_reason));
    write_output(out, t.trace_json);
    if (!is_stdout_path(out))
        fmt::print("wrote lazy trace {} to {} ({})\n", t.summary.id, out,
                   count_of(t.summary.events, "event"));
    return 0;
}

} // namespace tmmu::cli
