#include "lazy_jobs.h"

#include "core/units.h"
#include "io/dsa_csv.h"
#include "io/file_io.h"
#include "lazy/trace_state.h"
#include "lazy_trace_diff.h"
#include "plan/planner.h"

#include <fmt/format.h>

namespace tmmu::studio {

bool looks_like_lazy_program_file(const std::string& path) {
    return lazy::looks_like_lazy_program(read_file_head(path, 4096));
}

namespace {

// What the views show of a run: its trace, and the pool's buffers planned as one arena.
LazyShown shown_of(const lazy::LazyProgram& program, lazy::ProgramRun run, const std::string& path,
                   const Progress& progress) {
    LazyShown out;
    out.path = path;
    out.name = program.name;
    out.reads = run.reads;
    out.stats = run.stats;
    out.trace_hash = to_hex(run.trace_hash);
    out.failure = run.failure;
    out.comparison = lazy::compare_runs(program, progress);
    const lazy::TraceBuffers buffers = lazy::trace_buffers(run.trace);
    out.trace = std::make_shared<const lazy::Trace>(std::move(run.trace));
    if (buffers.problem.buffers.empty()) return out;
    auto model = std::make_shared<LoadedModel>();
    model->kind = ModelKind::DsaCsv;
    model->path = path;
    model->description = fmt::format("lazy program '{}': {} pool buffers over {} events",
                                     program.name, buffers.ids.size(), out.trace->events.size());
    model->problem = DsaProblem{buffers.problem, buffers.ids, {}};
    out.buffers.plan = std::make_shared<const Plan>(
        plan_problem(buffers.problem, buffers.ids, PlanOptions{}, progress, path));
    out.buffers.model = std::move(model);
    out.buffers.settings.mode = Mode::Training;
    out.buffers.timeUnit = QStringLiteral("event"); // the trace's events, as the token graph's
    return out;
}

} // namespace

LazyShown run_lazy_job(const std::string& path, const Progress& progress,
                       const std::string& record_to) {
    // Read once: a recording stores exactly the text that ran.
    const std::string text = read_text_file(path);
    const lazy::LazyProgram program = lazy::parse_lazy_program(text, path);
    lazy::ProgramRun run = lazy::run_lazy_program_to_failure(program, {}, {}, progress);
    int64_t recorded = 0;
    std::string record_error;
    // A database that cannot take the recording (read-only, locked, full) costs the recording,
    // never the run on screen.
    if (!record_to.empty()) try {
            sessions::SessionStore store(record_to);
            recorded = sessions::record_lazy_trace(store, program, text, run, "");
        } catch (const Failure& f) {
            record_error = f.what();
        }
    LazyShown out = shown_of(program, std::move(run), path, progress);
    out.recorded_id = recorded;
    out.record_error = std::move(record_error);
    return out;
}

std::string lazy_trace_label(const sessions::LazyTraceSummary& t) {
    const std::string result = !t.altered_reason.empty() ? "ALTERED"
                               : t.failure.empty()       ? "ok"
                                                         : "stopped by an error";
    return fmt::format("#{} {}{} · {} · {}", t.id, t.program,
                       t.title.empty() ? "" : fmt::format(" \"{}\"", t.title),
                       count_of(t.events, "event"), result);
}

std::string lazy_trace_details(const sessions::LazyTraceSummary& t) {
    std::string text = fmt::format("lazy trace {}, recorded {}{}\n", t.id, t.created,
                                   t.title.empty() ? "" : fmt::format(" \"{}\"", t.title));
    text += fmt::format("program   {}{}\n", t.program,
                        t.origin.empty() ? "" : fmt::format(" ({})", t.origin));
    text += fmt::format("ran       {}, checkpoint policy {}, {}\n", t.eager ? "eager" : "lazy",
                        lazy::checkpoint_policy_name(t.checkpoint),
                        t.compile ? "compiled" : "compile statements run plainly");
    text += fmt::format("trace     {}, {}, {}\n", count_of(t.events, "event"),
                        count_of(t.plans, "plan"), count_of(t.steps, "step"));
    text += fmt::format("hash      {}\n", t.trace_hash);
    text += fmt::format("memory    pool peak {}, planned peak {}\n",
                        format_bytes(t.pool_peak_bytes), format_bytes(t.planned_peak_bytes));
    text += fmt::format("result    {}\n", t.failure.empty() ? "ran through" : t.failure);
    if (!t.altered_reason.empty()) text += fmt::format("ALTERED   {}\n", t.altered_reason);
    return text;
}

std::string lazy_replay_report(const ReplayedLazyTrace& r) {
    const sessions::LazyTraceSummary& t = r.recorded;
    std::string text = fmt::format("replay of lazy trace {}: {}\n", t.id, r.verdict);
    if (r.altered) text += "the row was changed after recording (replayed anyway)\n";
    text += fmt::format("recorded  {}{}\n", t.trace_hash,
                        t.failure.empty() ? "" : "\n          " + t.failure);
    text += fmt::format(
        "replayed  {}{}\n", r.replay.replayed_hash,
        r.replay.replayed_failure.empty() ? "" : "\n          " + r.replay.replayed_failure);
    if (!r.replay.first_difference.empty())
        text += fmt::format("first difference: {}\n", r.replay.first_difference);
    return text;
}

std::vector<sessions::LazyTraceSummary> recorded_lazy_traces(const std::string& sessions_path) {
    return sessions::list_lazy_traces(sessions::SessionStore(sessions_path));
}

ReplayedLazyTrace replay_lazy_job(const std::string& sessions_path, int64_t id,
                                  const Progress& progress) {
    const sessions::StoredLazyTrace stored =
        sessions::load_lazy_trace(sessions::SessionStore(sessions_path), id);
    ReplayedLazyTrace r;
    r.recorded = stored.summary;
    r.altered = stored.altered;
    r.replay = sessions::replay_lazy_trace(stored, progress);
    r.verdict = sessions::trace_verdict(r.replay.recorded_hash, r.replay.replayed_hash,
                                        r.replay.recorded_failure, r.replay.replayed_failure);
    const std::string where =
        stored.summary.origin.empty() ? fmt::format("lazy trace {}", id) : stored.summary.origin;
    r.shown = shown_of(r.replay.program, std::move(r.replay.run), where, progress);
    return r;
}

} // namespace tmmu::studio
