#pragma once
// What the studio asks the token/effect engine (no Qt): run a lazy program and turn its trace
// into what the views show. The pool's buffers over the trace's events become the plan on
// screen (planned by our planner, event i at plan time i), so the arena, live-range and memory
// views show the same run the token graph does.
#include "planning.h"

#include "lazy/program.h"
#include "lazy/run_comparison.h"
#include "lazy_store.h"

#include <memory>
#include <string>

namespace tmmu::studio {

struct LazyShown {
    std::string path;
    std::string name;
    std::shared_ptr<const lazy::Trace> trace;
    std::vector<lazy::HostRead> reads;
    lazy::EngineStats stats;
    std::string trace_hash;
    std::string failure; // the named error that stopped the program; empty when it ran through
    PlanOutcome buffers; // null plan when the program made no buffer
    // The program with and without checkpointing, compile and fusion (the run shown above is
    // the default one: checkpoints replayed, compile statements compiled).
    std::vector<lazy::ComparedRun> comparison;
    int64_t recorded_id = 0;  // the lazy trace it was recorded as; 0 when not recorded
    std::string record_error; // why recording it failed; the run itself is shown all the same
};

// A recorded lazy trace run again from its stored program (sessions::replay_lazy_trace), shown
// as any program is, with the verdict against the recording.
struct ReplayedLazyTrace {
    sessions::LazyTraceSummary recorded;
    bool altered = false;        // the row does not match its seal (replayed anyway)
    sessions::LazyReplay replay; // program, hashes, errors, first difference; its run is in `shown`
    std::string verdict;         // "identical: the same trace hash", "DIFFERENT: ..."
    LazyShown shown;
};

// Whether the file's first bytes look like a lazy program (format detection by content).
bool looks_like_lazy_program_file(const std::string& path);
// Loads and runs; a malformed file throws Failure, a program that breaks an engine rule comes
// back with its trace up to the error and `failure` set. With `record_to` set (a sessions
// database), the run is recorded there as `tmmu lazy run --record` records it, the file's text
// and all.
LazyShown run_lazy_job(const std::string& path, const Progress& progress,
                       const std::string& record_to = {});

// "#3 mlp-training · 1248 events · ok" (a combo box entry); "ALTERED" or "stopped by an error"
// instead of "ok" when so.
std::string lazy_trace_label(const sessions::LazyTraceSummary& trace);
// The recorded details, a line each: program, how it ran, trace, memory and result.
std::string lazy_trace_details(const sessions::LazyTraceSummary& trace);
// The verdict of a replay, then the recorded and replayed hashes and errors, and where the
// traces part when they do.
std::string lazy_replay_report(const ReplayedLazyTrace& replayed);

// The lazy traces recorded in a sessions database, newest first.
std::vector<sessions::LazyTraceSummary> recorded_lazy_traces(const std::string& sessions_path);
// Throws Failure(InvalidArgument) for an unknown id, and the parse error of a stored program
// that no longer parses (an altered row).
ReplayedLazyTrace replay_lazy_job(const std::string& sessions_path, int64_t id,
                                  const Progress& progress);

} // namespace tmmu::studio
