// Recorded model runs in the sessions database: round trip, listing, integrity (a row changed
// behind tmmu's back loads as altered, naming why), and unknown ids refused.
#include "run_store.h"
#include "session_store.h"
#include "sql_test_util.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::sessions;

namespace {

using tmmu::test::sql;

constexpr const char* kTinyLlama = R"({"model_type":"llama","hidden_size":32,
    "num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":2,
    "intermediate_size":48,"vocab_size":53,"max_position_embeddings":32})";

runtime::RunRecord tiny_run(uint64_t seed) {
    runtime::RunRequest r;
    r.prompt_tokens = 3;
    r.decode_tokens = 4;
    r.seed = seed;
    r.counters = true;
    return test::cpu_run(kTinyLlama, r);
}

} // namespace

class TestRunStore : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string db(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

  private slots:
    void recordListLoadRoundTrip() {
        SessionStore store(db("runs.db"));
        const runtime::RunRecord first = tiny_run(1), second = tiny_run(2);
        const int64_t a = record_run(store, first, "first run");
        const int64_t b = record_run(store, second, "");
        const std::vector<RunSummary> list = list_runs(store);
        QCOMPARE(list.size(), size_t(2));
        QCOMPARE(list[0].id, b); // newest first
        QCOMPARE(list[1].title, std::string("first run"));
        QCOMPARE(list[1].model, std::string("tiny"));
        QCOMPARE(list[1].logits_hash, to_hex(first.result.logits_hash));
        QVERIFY(list[1].altered_reason.empty());
        QCOMPARE(list_runs(store, 1).size(), size_t(1));
        const StoredRun loaded = load_run(store, a);
        QVERIFY2(!loaded.altered, loaded.summary.altered_reason.c_str());
        QVERIFY(loaded.record.has_value());
        QCOMPARE(runtime::run_record_json(*loaded.record), runtime::run_record_json(first));
        QCOMPARE(loaded.program_version, std::string(TMMU_VERSION));
        QCOMPARE(store.count(), size_t(0)); // runs are not planning sessions
    }

    void changedRowsLoadAsAltered() {
        SessionStore store(db("altered.db"));
        const int64_t id = record_run(store, tiny_run(1), "t");
        sql(store, "UPDATE runs SET title = 'edited behind our back'");
        QCOMPARE(list_runs(store)[0].altered_reason,
                 std::string("the run's stored fields do not match their seal"));
        QVERIFY(load_run(store, id).altered);

        const int64_t other = record_run(store, tiny_run(3), "t");
        sql(store, "UPDATE runs SET record_json = replace(record_json, '\"seed\": 3', "
                   "'\"seed\": 4') WHERE id = 2");
        const StoredRun changed = load_run(store, other);
        QVERIFY(changed.altered);
        QVERIFY(changed.record.has_value()); // still readable: shown, marked, never trusted

        const int64_t broken = record_run(store, tiny_run(5), "t");
        sql(store, "UPDATE runs SET record_json = '{' WHERE id = 3");
        const StoredRun unreadable = load_run(store, broken);
        QVERIFY(unreadable.altered);
        QVERIFY(!unreadable.record.has_value());
    }

    void unknownIdsAreRefused() {
        SessionStore store(db("empty.db"));
        TMMU_EXPECT_FAILURE(load_run(store, 42), FailureCode::InvalidArgument);
    }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "test_run_store.moc"
