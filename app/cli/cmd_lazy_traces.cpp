// `tmmu lazy traces` and `tmmu lazy replay`: lazy program traces recorded by `tmmu lazy run
// --record` (sessions/lazy_store.h).
#include "commands.h"

#include "lazy_store.h"

#include "core/failure.h"
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
    return j.dump(2) + "\n";
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

// What differs between the recorded and the replayed run, or "identical ...".
std::string verdict(const sessions::LazyReplay& r) {
    if (r.same)
        return r.recorded_failure.empty() ? "identical: the same trace hash"
                                          : "identical: the same trace hash and the same error";
    if (r.recorded_hash != r.replayed_hash && r.recorded_failure != r.replayed_failure)
        return "DIFFERENT: the trace hashes and the errors differ";
    return r.recorded_hash != r.replayed_hash ? "DIFFERENT: the trace hashes differ"
                                              : "DIFFERENT: the errors differ";
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
    if (stored.altered)
        fmt::print(stderr,
                   "tmmu: warning: lazy trace {} is ALTERED ({}); replaying what is stored\n", s.id,
                   s.altered_reason);
    fmt::print("replay of lazy trace {} ({}{}{}{}) with tmmu {} (recorded with {})\n", s.id,
               s.program, s.eager ? ", eager" : "",
               s.checkpoint == lazy::CheckpointPolicy::Keep ? ", checkpoints kept" : "",
               s.compile ? ", compiled" : "", TMMU_VERSION, stored.program_version);
    const sessions::LazyReplay r = sessions::replay_lazy_trace(stored);
    const lazy::EngineStats& now = r.run.stats;
    fmt::print("recorded  {}\n", trace_line(r.recorded_hash, s.events, s.plans, s.steps));
    fmt::print("replayed  {}\n", trace_line(r.replayed_hash, now.events, now.plans, now.steps));
    if (!r.recorded_failure.empty() || !r.replayed_failure.empty())
        fmt::print("recorded  error: {}\nreplayed  error: {}\n",
                   r.recorded_failure.empty() ? "none" : r.recorded_failure,
                   r.replayed_failure.empty() ? "none" : r.replayed_failure);
    fmt::print("{}\n", verdict(r));
    if (!r.first_difference.empty()) fmt::print("first difference: {}\n", r.first_difference);
    if (stored.altered) {
        fmt::print("integrity ALTERED: {}\n", s.altered_reason);
        return failure_exit_status(FailureCode::CorruptCheckpoint);
    }
    return r.same ? 0 : 1;
}

} // namespace tmmu::cli
