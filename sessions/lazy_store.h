#pragma once
// Recorded lazy program traces in the sessions database (table `lazy_traces`): what `tmmu lazy
// run --record` stores, so a trace can be listed and replayed to the same hash. A row holds the
// program's JSON source (a replay needs nothing else), the run's counters, trace hash and the
// error that stopped it, and the whole trace as lazy_trace_json, all sealed with one SHA-256
// when recorded: a row changed behind tmmu's back loads as altered.
#include "session_store.h"

#include "lazy/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::sessions {

struct LazyTraceSummary {
    int64_t id = 0;
    std::string created; // UTC ISO-8601
    std::string title;
    std::string program; // its name
    std::string origin;  // the file it was read from ("" for text)
    bool eager = false;  // run with EngineOptions::eager: a replay runs the same way
    lazy::CheckpointPolicy checkpoint = lazy::CheckpointPolicy::Recompute; // likewise
    bool compile = false; // compile statements ran compiled (--compile); likewise
    uint64_t events = 0, plans = 0, steps = 0;
    uint64_t pool_peak_bytes = 0, planned_peak_bytes = 0;
    std::string trace_hash;     // hex
    std::string failure;        // the error that stopped the run; "" when it ran through
    std::string altered_reason; // empty unless the row does not match its seal
};

struct StoredLazyTrace {
    LazyTraceSummary summary;
    std::string program_version;
    std::string program_text; // the JSON source as recorded
    std::string trace_json;   // lazy_trace_json of the recorded run
    bool altered = false;
};

// A stored program run again on a fresh engine, against what was recorded.
struct LazyReplay {
    std::string recorded_hash, replayed_hash; // hex
    std::string recorded_failure, replayed_failure;
    bool same = false; // the same trace hash and the same failure (or none)
    // The stored program as it ran again: parsed from the stored text, with the name and origin
    // it was recorded with.
    lazy::LazyProgram program;
    // Where the traces part (first_trace_difference), when the hashes differ; "" when they
    // agree, or when only the hashes differ (the events and plans are the same).
    std::string first_difference;
    lazy::ProgramRun run;
};

// `run` is the program's run as run_lazy_program or run_lazy_program_to_failure gave it (a
// failed run is recorded with its trace up to the error); `program_text` is the source
// `program` was parsed from.
int64_t record_lazy_trace(SessionStore& store, const lazy::LazyProgram& program,
                          const std::string& program_text, const lazy::ProgramRun& run,
                          const std::string& title);
// Newest first; limit 0 lists all.
std::vector<LazyTraceSummary> list_lazy_traces(const SessionStore& store, size_t limit = 0);
// InvalidArgument when no trace has this id; integrity is reported in StoredLazyTrace::altered.
StoredLazyTrace load_lazy_trace(const SessionStore& store, int64_t id);
// Parses the stored program text and runs it with run_lazy_program_to_failure, eager and with
// the checkpoint policy the recorded run had. A text that no longer parses (an altered row) fails
// with its parse error. `progress`'s cancel flag stops it between statements.
LazyReplay replay_lazy_trace(const StoredLazyTrace& stored, const Progress& progress = {});

} // namespace tmmu::sessions
