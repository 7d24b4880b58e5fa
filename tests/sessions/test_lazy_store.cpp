// Recorded lazy program traces in the sessions database: every field round-trips, every bundled
// example replays to the hash it was recorded with (the saved-tensor one to the same error too),
// a row changed behind tmmu's back loads as altered, listing order and limit, unknown ids, and
// a schema 4 database gaining the table without its rows changing.
#include "lazy_store.h"
#include "lazy_trace_diff.h"
#include "session_store.h"
#include "sql_test_util.h"
#include "test_support.h"

#include "lazy/program.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::sessions;

namespace {

using tmmu::test::sql;

const QString kPrograms = QStringLiteral(TMMU_SOURCE_DIR "/resources/programs");

// A bundled program as `tmmu lazy run --record` records it: its text, parsed and run.
struct Recorded {
    std::string text;
    lazy::LazyProgram program;
    lazy::ProgramRun run;
};

Recorded run_file(const QString& path, bool eager = false) {
    Recorded r;
    r.text = test::read_file(path.toStdString()).value_or("");
    r.program = lazy::parse_lazy_program(r.text, path.toStdString());
    r.run = lazy::run_lazy_program_to_failure(r.program, lazy::EngineOptions{.eager = eager});
    return r;
}

Recorded run_example(const char* name, bool eager = false) {
    return run_file(kPrograms + "/" + name, eager);
}

int64_t record(SessionStore& store, const Recorded& r, const std::string& title = "") {
    return record_lazy_trace(store, r.program, r.text, r.run, title);
}

// Every row of a table as quoted SQL values, in id order: equal only when nothing changed.
std::vector<std::string> column_names(sqlite3* db, const std::string& table) {
    sqlite3_stmt* columns = nullptr;
    sqlite3_prepare_v2(db, ("SELECT * FROM " + table).c_str(), -1, &columns, nullptr);
    std::vector<std::string> names;
    for (int i = 0; columns && i < sqlite3_column_count(columns); ++i)
        names.emplace_back(sqlite3_column_name(columns, i));
    sqlite3_finalize(columns);
    return names;
}

// Every row of `columns` (default: all the table has now), quoted, in rowid order.
std::string table_dump(sqlite3* db, const std::string& table,
                       std::vector<std::string> columns = {}) {
    if (columns.empty()) columns = column_names(db, table);
    std::string row_sql = "SELECT ''";
    for (const std::string& column : columns)
        row_sql += " || quote(\"" + column + "\") || ','";
    sqlite3_stmt* rows = nullptr;
    sqlite3_prepare_v2(db, (row_sql + " FROM " + table + " ORDER BY rowid").c_str(), -1, &rows,
                       nullptr);
    std::string out;
    while (rows && sqlite3_step(rows) == SQLITE_ROW)
        out += reinterpret_cast<const char*>(sqlite3_column_text(rows, 0)) + std::string("\n");
    sqlite3_finalize(rows);
    return out;
}

} // namespace

class TestLazyStore : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string db(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

  private slots:
    void recordLoadRoundTripsEveryField() {
        SessionStore store(db("round.db"));
        const Recorded r = run_example("mlp-training.json");
        QVERIFY(r.run.failure.empty());
        const int64_t id = record(store, r, "first");
        const StoredLazyTrace t = load_lazy_trace(store, id);
        const LazyTraceSummary& s = t.summary;
        QVERIFY2(!t.altered, s.altered_reason.c_str());
        QCOMPARE(s.id, id);
        QCOMPARE(s.created.size(), size_t(20)); // "2026-11-25T10:40:00Z"
        QCOMPARE(s.title, std::string("first"));
        QCOMPARE(s.program, std::string("mlp-training"));
        QCOMPARE(s.origin, r.program.origin);
        QVERIFY(!s.eager);
        QCOMPARE(s.events, r.run.stats.events);
        QCOMPARE(s.plans, r.run.stats.plans);
        QCOMPARE(s.steps, uint64_t(3));
        QCOMPARE(s.pool_peak_bytes, r.run.stats.pool_peak_bytes);
        QCOMPARE(s.planned_peak_bytes, r.run.stats.planned_peak_bytes);
        QCOMPARE(s.trace_hash, to_hex(r.run.trace_hash));
        QVERIFY(s.failure.empty());
        QCOMPARE(t.program_version, std::string(TMMU_VERSION));
        QCOMPARE(t.program_text, r.text);
        QCOMPARE(t.trace_json, lazy::lazy_trace_json(r.program, r.run));
        QCOMPARE(list_lazy_traces(store)[0].trace_hash, s.trace_hash);
        QCOMPARE(store.count(), size_t(0)); // lazy traces are not planning sessions
    }

    // An eager run is recorded as eager and replayed eager: its plans, and so its hash, differ
    // from the lazy run's.
    // A program file named in Latin-1, titled so too: its JSON trace turns the bytes that are
    // not UTF-8 into U+FFFD instead of throwing (an internal error, and a double free while the
    // record was half built), and the recording replays.
    void namesThatAreNotUtf8AreRecorded() {
        const std::string text =
            test::read_file((kPrograms + "/mlp-dropout.json").toStdString()).value_or("");
        Recorded r;
        r.text = text;
        r.program = lazy::parse_lazy_program(text, "caf\xe9.json");
        r.program.name = "caf\xe9";
        r.run = lazy::run_lazy_program_to_failure(r.program);
        const std::string trace = lazy::lazy_trace_json(r.program, r.run);
        QVERIFY(trace.find("caf\xef\xbf\xbd") != std::string::npos); // U+FFFD
        SessionStore store(db("latin1.db"));
        const int64_t id = record(store, r, "t\xe9");
        const StoredLazyTrace stored = load_lazy_trace(store, id);
        QVERIFY(!stored.altered);
        QCOMPARE(stored.summary.title, std::string("t\xe9"));
        QVERIFY(replay_lazy_trace(stored).same);
    }

    void eagerRunsReplayEager() {
        SessionStore store(db("eager.db"));
        const Recorded lazy_run = run_example("view-mutation.json");
        const Recorded eager_run = run_example("view-mutation.json", true);
        QVERIFY(lazy_run.run.trace_hash != eager_run.run.trace_hash);
        const StoredLazyTrace t = load_lazy_trace(store, record(store, eager_run));
        QVERIFY(t.summary.eager);
        const LazyReplay replay = replay_lazy_trace(t);
        QVERIFY(replay.run.eager);
        QVERIFY(replay.same);
        QCOMPARE(replay.replayed_hash, to_hex(eager_run.run.trace_hash));
    }

    void everyBundledExampleReplaysToItsHash() {
        SessionStore store(db("examples.db"));
        const QStringList files = QDir(kPrograms).entryList({"*.json"}, QDir::Files);
        QVERIFY(files.size() >= 4);
        for (const QString& f : files) {
            const Recorded r = run_file(kPrograms + "/" + f);
            const LazyReplay replay = replay_lazy_trace(load_lazy_trace(store, record(store, r)));
            QVERIFY2(replay.same, qPrintable(f));
            QCOMPARE(replay.recorded_hash, to_hex(r.run.trace_hash));
            QCOMPARE(replay.replayed_hash, replay.recorded_hash);
            QCOMPARE(replay.run.stats.events, r.run.stats.events);
            QCOMPARE(replay.replayed_failure, replay.recorded_failure);
            const bool meant_to_fail = f == "saved-tensor-mutation.json";
            QVERIFY2(replay.recorded_failure.find("SavedTensorModifiedError") !=
                             std::string::npos ||
                         !meant_to_fail,
                     replay.recorded_failure.c_str());
            QCOMPARE(replay.recorded_failure.empty(), !meant_to_fail);
        }
    }

    void alteredRowsLoadAsAltered() {
        SessionStore store(db("altered.db"));
        const Recorded r = run_example("mlp-training.json");
        for (int i = 0; i < 4; ++i)
            record(store, r, "t");
        sql(store.handle(), "UPDATE lazy_traces SET program_text = replace(program_text, "
                            "'\"lr\": 0.1', '\"lr\": 0.2') WHERE id = 1");
        sql(store.handle(),
            "UPDATE lazy_traces SET trace_hash = '00' || substr(trace_hash, 3) WHERE id = 2");
        sql(store.handle(), "UPDATE lazy_traces SET title = 'edited' WHERE id = 3");
        QVERIFY(load_lazy_trace(store, 1).program_text != r.text); // the edit took
        for (int64_t id : {1, 2, 3}) {
            const StoredLazyTrace t = load_lazy_trace(store, id);
            QVERIFY2(t.altered, qPrintable(QString::number(id)));
            QCOMPARE(t.summary.altered_reason,
                     std::string("the lazy trace's stored fields do not match their seal"));
        }
        QVERIFY(!load_lazy_trace(store, 4).altered);
        const std::vector<LazyTraceSummary> list = list_lazy_traces(store);
        QCOMPARE(list.size(), size_t(4));
        QVERIFY(list[0].altered_reason.empty()); // id 4
        QVERIFY(!list[3].altered_reason.empty());
        // A changed hash is replayed all the same, and differs.
        const LazyReplay replay = replay_lazy_trace(load_lazy_trace(store, 2));
        QVERIFY(!replay.same);
        QCOMPARE(replay.replayed_hash, to_hex(r.run.trace_hash));
    }

    void listsNewestFirstWithALimit() {
        SessionStore store(db("list.db"));
        QVERIFY(list_lazy_traces(store).empty());
        const Recorded r = run_example("shared-base.json");
        const int64_t a = record(store, r, "a"), b = record(store, r, "b");
        const int64_t c = record(store, r, "c");
        const std::vector<LazyTraceSummary> all = list_lazy_traces(store);
        QCOMPARE(all.size(), size_t(3));
        QCOMPARE(all[0].id, c);
        QCOMPARE(all[1].id, b);
        QCOMPARE(all[2].id, a);
        QCOMPARE(all[2].title, std::string("a"));
        const std::vector<LazyTraceSummary> newest = list_lazy_traces(store, 2);
        QCOMPARE(newest.size(), size_t(2));
        QCOMPARE(newest[0].id, c);
        QCOMPARE(newest[1].id, b);
    }

    // The first event, else plan, where two traces part; the fields that changed, at most
    // three named; a shorter list; nothing when events and plans agree.
    void traceDifferencesNameTheFirstEntry() {
        const auto trace = [](const std::string& events, const std::string& plans) {
            return R"({"format": "tmmu-lazy-trace", "trace_hash": "ab", "events": [)" + events +
                   R"(], "plans": [)" + plans + "]}";
        };
        const std::string e0 = R"({"index": 0, "key": "g1:n0", "op": "exp", "bytes": 4})";
        const std::string e1 = R"({"index": 1, "key": "g1:n1", "op": "add", "bytes": 8})";
        const std::string p0 = R"({"index": 0, "ops": 2})";
        const std::string base = trace(e0 + "," + e1, p0);
        QCOMPARE(sessions::first_trace_difference(base, base), std::string());
        // Only the hash field differs: not an event's difference.
        std::string rehashed = base;
        rehashed.replace(rehashed.find("\"ab\""), 4, "\"cd\"");
        QCOMPARE(sessions::first_trace_difference(base, rehashed), std::string());
        const std::string e1b = R"({"index": 1, "key": "g1:n1", "op": "mul", "bytes": 8})";
        QCOMPARE(sessions::first_trace_difference(base, trace(e0 + "," + e1b, p0)),
                 std::string(R"(event 1 (g1:n1): op was "add", is "mul")"));
        const std::string e1c =
            R"({"index": 1, "key": "g2:n1", "op": "mul", "bytes": 9, "detail": "x"})";
        QCOMPARE(sessions::first_trace_difference(base, trace(e0 + "," + e1c, p0)),
                 std::string(R"(event 1 (g1:n1): key was "g1:n1", is "g2:n1"; op was "add", )"
                             R"(is "mul"; bytes was 8, is 9 (and 1 more field))"));
        QCOMPARE(sessions::first_trace_difference(base, trace(e0, p0)),
                 std::string("the replay ends after 1 event, the recording has 2"));
        QCOMPARE(sessions::first_trace_difference(base, trace(e0 + "," + e1, "")),
                 std::string("the replay ends after 0 plans, the recording has 1"));
        QCOMPARE(sessions::first_trace_difference(trace(e0, p0), base),
                 std::string("the recording ends after 1 event, the replay has 2"));
        // An entry that is not an object (a row altered behind tmmu's back) is shown whole.
        QCOMPARE(
            sessions::first_trace_difference(trace("[]," + e1, p0), base),
            std::string(R"(event 0: was [], is {"index":0,"key":"g1:n0","op":"exp","bytes":4})"));
        QCOMPARE(sessions::first_trace_difference(base, "{not json"),
                 std::string("the replay is not a lazy trace"));
        // Two recordings (tmmu lazy diff) are named as the caller says.
        const sessions::TraceNames two{"trace 1", "trace 3"};
        QCOMPARE(sessions::first_trace_difference(base, trace(e0, p0), two),
                 std::string("trace 3 ends after 1 event, trace 1 has 2"));
        QCOMPARE(sessions::first_trace_difference("[]", base, two),
                 std::string("trace 1 is not a lazy trace"));
    }

    void unknownIdsAreNamed() {
        SessionStore store(db("empty.db"));
        const auto f = test::capture_failure([&] { load_lazy_trace(store, 42); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::InvalidArgument);
        QVERIFY2(f->where().find("lazy trace 42") != std::string::npos, f->what());
        QVERIFY2(f->message().find("no such lazy trace") != std::string::npos, f->what());
    }

    // A database written by the released schema 4 gains the table (and what later schemas add);
    // its sessions and runs stay byte for byte what they were, columns added since empty.
    void schemaFourDatabaseGainsTheTable() {
        const std::string path = db("schema4.db");
        QVERIFY(QFile::copy(TMMU_SOURCE_DIR "/tests/data/sessions/schema4-8721765.db",
                            QString::fromStdString(path)));
        QFile::setPermissions(QString::fromStdString(path),
                              QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        sqlite3* raw = nullptr;
        QCOMPARE(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
        const std::string sessions = table_dump(raw, "sessions"), runs = table_dump(raw, "runs");
        const std::string tags = table_dump(raw, "session_tags");
        const std::vector<std::string> schema4_columns = column_names(raw, "sessions");
        sqlite3_close(raw);
        QVERIFY(!sessions.empty() && !runs.empty() && !tags.empty());
        SessionStore store(path);
        QCOMPARE(store.schema_version(), kSchemaVersion);
        QVERIFY(list_lazy_traces(store).empty());
        QCOMPARE(table_dump(store.handle(), "sessions", schema4_columns), sessions);
        // Schema 6's file hash and bindings: unknown for rows recorded before.
        const std::string blanks =
            table_dump(store.handle(), "sessions", {"source_sha256", "bindings_json"});
        QCOMPARE(QString::fromStdString(blanks).count(QStringLiteral("'','',")), 3);
        QCOMPARE(table_dump(store.handle(), "runs"), runs);
        QCOMPARE(table_dump(store.handle(), "session_tags"), tags);
        QCOMPARE(record(store, run_example("view-mutation.json")), int64_t(1));
    }
};

QTEST_GUILESS_MAIN(TestLazyStore)
#include "test_lazy_store.moc"
