#include "lazy_store.h"

#include "lazy_trace_diff.h"
#include "session_seal.h"
#include "sqlite_util.h"

#include "core/digest.h"
#include "core/failure.h"

#include <fmt/format.h>

namespace tmmu::sessions {
namespace {

// In read_row's order.
constexpr const char* kLazyColumns =
    "id, created, title, program, origin, eager, trace_hash, events, plans, steps, "
    "pool_peak_bytes, planned_peak_bytes, failure, program_version, program_text, trace_json, "
    "seal, checkpoint_policy, compiled";

// Every field, the title too: traces have no edit command, so any change is not ours. The
// checkpoint policy (schema 7) and compile (schema 8) are sealed only where they are not the
// default, so the rows recorded before them, all "recompute" and uncompiled, keep their seals.
std::string lazy_seal(const StoredLazyTrace& t) {
    const LazyTraceSummary& s = t.summary;
    SealWriter seal("tmmu lazy trace v1");
    if (s.checkpoint != lazy::CheckpointPolicy::Recompute)
        seal.field(lazy::checkpoint_policy_name(s.checkpoint));
    if (s.compile) seal.field("compiled");
    return seal.field(s.created)
        .field(s.title)
        .field(s.program)
        .field(s.origin)
        .number(s.eager ? 1 : 0)
        .field(s.trace_hash)
        .number(s.events)
        .number(s.plans)
        .number(s.steps)
        .number(s.pool_peak_bytes)
        .number(s.planned_peak_bytes)
        .field(s.failure)
        .field(t.program_version)
        .field(t.program_text)
        .field(t.trace_json)
        .finish();
}

// A row with its integrity checked against the seal stored with it.
StoredLazyTrace read_row(const Stmt& s) {
    StoredLazyTrace t;
    LazyTraceSummary& m = t.summary;
    m.id = s.integer(0);
    m.created = s.text(1);
    m.title = s.text(2);
    m.program = s.text(3);
    m.origin = s.text(4);
    m.eager = s.integer(5) != 0;
    m.trace_hash = s.text(6);
    m.events = uint64_t(s.integer(7));
    m.plans = uint64_t(s.integer(8));
    m.steps = uint64_t(s.integer(9));
    m.pool_peak_bytes = uint64_t(s.integer(10));
    m.planned_peak_bytes = uint64_t(s.integer(11));
    m.failure = s.text(12);
    t.program_version = s.text(13);
    t.program_text = s.text(14);
    t.trace_json = s.text(15);
    // A word this build does not know reads as Keep, so the seal tells the row is altered.
    m.checkpoint = lazy::checkpoint_policy_from(s.text(17)).value_or(lazy::CheckpointPolicy::Keep);
    m.compile = s.integer(18) != 0;
    if (lazy_seal(t) != s.text(16))
        m.altered_reason = "the lazy trace's stored fields do not match their seal";
    t.altered = !m.altered_reason.empty();
    return t;
}

} // namespace

int64_t record_lazy_trace(SessionStore& store, const lazy::LazyProgram& program,
                          const std::string& program_text, const lazy::ProgramRun& run,
                          const std::string& title) {
    const lazy::EngineStats& stats = run.stats;
    // Made before the record: GCC 12 destroyed the members an aggregate had built twice when a
    // later initializer threw (a double free), so nothing in it may throw.
    std::string trace_json = lazy::lazy_trace_json(program, run);
    const StoredLazyTrace t{{0,
                             utc_now_iso8601(),
                             title,
                             program.name,
                             program.origin,
                             run.eager,
                             run.checkpoint,
                             run.compile,
                             stats.events,
                             stats.plans,
                             stats.steps,
                             stats.pool_peak_bytes,
                             stats.planned_peak_bytes,
                             to_hex(run.trace_hash),
                             run.failure,
                             {}},
                            TMMU_VERSION,
                            program_text,
                            std::move(trace_json),
                            false};
    const LazyTraceSummary& s = t.summary;
    Transaction tx(store.handle(), store.path());
    Stmt insert(store.handle(), store.path(),
                "INSERT INTO lazy_traces(created, title, program, origin, eager, trace_hash, "
                "events, plans, steps, pool_peak_bytes, planned_peak_bytes, failure, "
                "program_version, program_text, trace_json, seal, checkpoint_policy, compiled) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert.bind(1, s.created).bind(2, s.title).bind(3, s.program).bind(4, s.origin);
    insert.bind(5, int64_t(s.eager)).bind(6, s.trace_hash).bind(7, int64_t(s.events));
    insert.bind(8, int64_t(s.plans)).bind(9, int64_t(s.steps));
    insert.bind(10, int64_t(s.pool_peak_bytes)).bind(11, int64_t(s.planned_peak_bytes));
    insert.bind(12, s.failure).bind(13, t.program_version).bind(14, t.program_text);
    insert.bind(15, t.trace_json).bind(16, lazy_seal(t));
    insert.bind(17, std::string(lazy::checkpoint_policy_name(s.checkpoint)));
    insert.bind(18, int64_t(s.compile));
    insert.step();
    const int64_t id = sqlite3_last_insert_rowid(store.handle());
    tx.commit();
    return id;
}

std::vector<LazyTraceSummary> list_lazy_traces(const SessionStore& store, size_t limit) {
    std::string sql =
        fmt::format("SELECT {} FROM lazy_traces ORDER BY created DESC, id DESC", kLazyColumns);
    if (limit) sql += fmt::format(" LIMIT {}", limit);
    Stmt s(store.handle(), store.path(), sql.c_str());
    std::vector<LazyTraceSummary> out;
    while (s.step())
        out.push_back(read_row(s).summary);
    return out;
}

StoredLazyTrace load_lazy_trace(const SessionStore& store, int64_t id) {
    const std::string where = fmt::format("{}: lazy trace {}", store.path(), id);
    Stmt s(store.handle(), where,
           fmt::format("SELECT {} FROM lazy_traces WHERE id = ?", kLazyColumns).c_str());
    s.bind(1, id);
    if (!s.step())
        fail(FailureCode::InvalidArgument, where, "no such lazy trace (see tmmu lazy traces)");
    return read_row(s);
}

LazyReplay replay_lazy_trace(const StoredLazyTrace& stored, const Progress& progress) {
    const LazyTraceSummary& s = stored.summary;
    // Parsed under the trace's name, so errors point at the stored copy, then given back the
    // name and origin it was recorded with (a program without "name" was named after its file).
    LazyReplay r;
    r.program = lazy::parse_lazy_program(stored.program_text, fmt::format("lazy trace {}", s.id));
    r.program.name = s.program;
    r.program.origin = s.origin;
    r.run = lazy::run_lazy_program_to_failure(
        r.program,
        lazy::EngineOptions{.eager = s.eager, .checkpoint = s.checkpoint, .compile = s.compile}, {},
        progress);
    r.recorded_hash = s.trace_hash;
    r.replayed_hash = to_hex(r.run.trace_hash);
    r.recorded_failure = s.failure;
    r.replayed_failure = r.run.failure;
    r.same = r.recorded_hash == r.replayed_hash && r.recorded_failure == r.replayed_failure;
    if (r.recorded_hash != r.replayed_hash)
        r.first_difference =
            first_trace_difference(stored.trace_json, lazy::lazy_trace_json(r.program, r.run));
    return r;
}

} // namespace tmmu::sessions
