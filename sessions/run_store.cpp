#include "run_store.h"

#include "sqlite_util.h"

#include "core/failure.h"
#include "encoding/sha256.h"

#include <fmt/format.h>

namespace tmmu::sessions {
namespace {

constexpr const char* kRunColumns =
    "id, created, title, backend, device, model, logits_hash, program_version, record_json, seal";

// The title is sealed too: runs have no edit command, so any change is not ours.
std::string run_seal(const RunSummary& s, const std::string& program_version,
                     const std::string& record_json) {
    Sha256 h;
    for (const std::string* field : {&s.created, &s.title, &s.backend, &s.device, &s.model,
                                     &s.logits_hash, &program_version, &record_json}) {
        const uint64_t n = field->size(); // length-prefixed: fields cannot run into each other
        h.update(reinterpret_cast<const uint8_t*>(&n), sizeof n);
        h.update(reinterpret_cast<const uint8_t*>(field->data()), n);
    }
    return to_hex(h.finish());
}

RunSummary read_summary(const Stmt& s) {
    return {s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6), {}};
}

// Why the row cannot be trusted, or "".
std::string run_problem(const RunSummary& s, const std::string& version, const std::string& json,
                        const std::string& seal) {
    if (run_seal(s, version, json) != seal)
        return "the run's stored fields do not match their seal";
    return {};
}

} // namespace

int64_t record_run(SessionStore& store, const runtime::RunRecord& run, const std::string& title) {
    RunSummary s{0,
                 utc_now_iso8601(),
                 title,
                 run.backend,
                 run.device,
                 run.model,
                 to_hex(run.result.logits_hash),
                 {}};
    const std::string json = runtime::run_record_json(run), version = TMMU_VERSION;
    Transaction tx(store.handle(), store.path());
    Stmt insert(store.handle(), store.path(),
                "INSERT INTO runs(created, title, backend, device, model, logits_hash, "
                "program_version, record_json, seal) VALUES(?,?,?,?,?,?,?,?,?)");
    insert.bind(1, s.created).bind(2, s.title).bind(3, s.backend).bind(4, s.device);
    insert.bind(5, s.model).bind(6, s.logits_hash).bind(7, version).bind(8, json);
    insert.bind(9, run_seal(s, version, json));
    insert.step();
    const int64_t id = sqlite3_last_insert_rowid(store.handle());
    tx.commit();
    return id;
}

std::vector<RunSummary> list_runs(const SessionStore& store, size_t limit) {
    std::string sql =
        fmt::format("SELECT {} FROM runs ORDER BY created DESC, id DESC", kRunColumns);
    if (limit) sql += fmt::format(" LIMIT {}", limit);
    Stmt s(store.handle(), store.path(), sql.c_str());
    std::vector<RunSummary> out;
    while (s.step()) {
        out.push_back(read_summary(s));
        out.back().altered_reason = run_problem(out.back(), s.text(7), s.text(8), s.text(9));
    }
    return out;
}

StoredRun load_run(const SessionStore& store, int64_t id) {
    const std::string where = fmt::format("{}: run {}", store.path(), id);
    Stmt s(store.handle(), where,
           fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns).c_str());
    s.bind(1, id);
    if (!s.step()) fail(FailureCode::InvalidArgument, where, "no such run (see session runs)");
    StoredRun run{read_summary(s), s.text(7), std::nullopt, false};
    const std::string json = s.text(8);
    run.summary.altered_reason = run_problem(run.summary, run.program_version, json, s.text(9));
    try {
        run.record = runtime::parse_run_record(json, where);
    } catch (const Failure& f) {
        if (run.summary.altered_reason.empty())
            run.summary.altered_reason =
                fmt::format("the stored run does not parse: {}", f.message());
    }
    run.altered = !run.summary.altered_reason.empty();
    return run;
}

} // namespace tmmu::sessions
