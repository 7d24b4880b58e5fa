// End to end: `tmmu lazy run` on the bundled lazy programs and on malformed ones, its JSON and
// trace outputs, the lazy run against the eager reference, and recording traces in a sessions
// database, listing and replaying them.
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

namespace {

using Result = tmmu::test::ProgramRun;
using nlohmann::json;

const QString kPrograms = QStringLiteral(TMMU_SOURCE_DIR "/resources/programs");

Result tmmu_run(const QStringList& args) {
    return tmmu::test::run_program(TMMU_CLI, args);
}

QString program(const char* name) {
    return kPrograms + "/" + name;
}

// The value after "trace_hash " in `tmmu lazy run`'s summary.
QString printed_hash(const QString& out) {
    const qsizetype at = out.indexOf("trace_hash ");
    return at < 0 ? QString() : out.mid(at + 11, 64);
}

json parsed(const QString& text) {
    return json::parse(text.toStdString()); // throws (failing the test) on anything but JSON
}

// `tmmu lazy run PROGRAM [extra] --json -`, parsed; fails the test unless it exits 0.
json run_json(const QString& path, const QStringList& extra = {}) {
    const Result r = tmmu_run(QStringList{"lazy", "run", path, "--json", "-"} + extra);
    if (r.code != 0) qWarning("%s", qPrintable(r.err));
    return r.code == 0 ? parsed(r.out) : json();
}

} // namespace

class TestLazyCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString write(const char* name, const std::string& statements) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return path;
        f.write(QByteArray::fromStdString(
            R"({"format": "tmmu-lazy-program", "version": 1, "program": [)" + statements + "]}"));
        return path;
    }

    // `tmmu lazy run PROGRAM --record` into a fresh database; fails the test unless it exits
    // with `code` and says which trace it recorded.
    QString record(const char* name, const char* db, int code = 0) {
        const QString path = dir_.filePath(db);
        const Result r = tmmu_run(
            {"lazy", "run", program(name), "--record", "--title", "cli", "--sessions", path});
        if (r.code != code || !r.out.contains("recorded as lazy trace 1 in "))
            qWarning("%s%s", qPrintable(r.out), qPrintable(r.err));
        return r.code == code && r.out.contains("recorded as lazy trace 1 in ") ? path : QString();
    }

    // Records `tmmu lazy run PROGRAM OPTIONS` into `db`, replays it (the replay must be
    // identical and say `mode`), and returns the `lazy traces --json` listing; null on failure.
    json record_and_replay(const char* name, const QStringList& options, const QString& db,
                           const char* mode) {
        const Result recorded = tmmu_run(QStringList{"lazy", "run", program(name)} + options +
                                         QStringList{"--record", "--sessions", db});
        if (recorded.code != 0) {
            qWarning("%s", qPrintable(recorded.err));
            return {};
        }
        const Result replay = tmmu_run({"lazy", "replay", "1", "--sessions", db});
        if (replay.code != 0 || !replay.out.contains(mode) || !replay.out.contains("identical")) {
            qWarning("%s%s", qPrintable(replay.out), qPrintable(replay.err));
            return {};
        }
        return parsed(tmmu_run({"lazy", "traces", "--sessions", db, "--json", "-"}).out);
    }

    // Runs `sql` on the database behind tmmu's back; false when SQLite refuses it.
    static bool alter_behind_tmmu(const QString& db, const char* sql) {
        sqlite3* raw = nullptr;
        if (sqlite3_open(db.toUtf8().constData(), &raw) != SQLITE_OK) return false;
        const int rc = sqlite3_exec(raw, sql, nullptr, nullptr, nullptr);
        sqlite3_close(raw);
        return rc == SQLITE_OK;
    }

  private slots:
    void helpTexts() {
        const Result lazy = tmmu_run({"lazy", "--help"});
        QCOMPARE(lazy.code, 0);
        QVERIFY2(lazy.out.startsWith("usage: tmmu lazy"), qPrintable(lazy.out));
        const Result run = tmmu_run({"lazy", "run", "--help"});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.startsWith("usage: tmmu lazy run PROGRAM"), qPrintable(run.out));
        QVERIFY(tmmu_run({"--help"}).out.contains("lazy run PROGRAM"));
        for (const char* command : {"traces", "replay", "diff", "export"}) {
            const Result r = tmmu_run({"lazy", command, "--help"});
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.startsWith(QString("usage: tmmu lazy ") + command), qPrintable(r.out));
        }
        QVERIFY(lazy.out.contains("replay ID"));
        QCOMPARE(tmmu_run({"lazy"}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "walk", program("mlp-training.json")}).code, 2);
    }
    // Every bundled example runs; the saved-tensor one is meant to fail, by name.
    void everyBundledExampleRuns() {
        const QStringList files = QDir(kPrograms).entryList({"*.json"}, QDir::Files);
        QVERIFY(files.size() >= 4);
        for (const QString& f : files) {
            const Result r = tmmu_run({"lazy", "run", kPrograms + "/" + f});
            if (f == "saved-tensor-mutation.json") {
                QCOMPARE(r.code, 26);
                QVERIFY2(r.err.startsWith("tmmu: LAZY_ENGINE_ERROR at program[") &&
                             r.err.contains("SavedTensorModifiedError"),
                         qPrintable(r.err));
                QVERIFY2(r.out.contains("read loss at program[6]"), qPrintable(r.out));
                continue;
            }
            QVERIFY2(r.code == 0, qPrintable(f + ": " + r.err));
            for (const char* line : {"read ", "events ", "pool peak ", "buffers ", "trace_hash "})
                QVERIFY2(r.out.contains(line), qPrintable(f + ": " + r.out));
        }
    }
    void mlpTrainingSummary() {
        const Result r = tmmu_run({"lazy", "run", program("mlp-training.json")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("program mlp-training ("));
        QVERIFY(r.out.contains("read loss at program[8].body[9] (iteration 3): [] = 0.1187"));
        QVERIFY(r.out.contains("steps 3"));
    }
    void jsonFieldsAndStableHash() {
        const json a = run_json(program("mlp-training.json"));
        const json b = run_json(program("mlp-training.json"));
        for (const char* field :
             {"program", "events", "plans", "steps", "pool_peak_bytes", "planned_peak_bytes",
              "buffers_allocated", "buffers_reused", "trace_hash", "reads"})
            QVERIFY2(a.contains(field), field);
        QCOMPARE(a["program"].get<std::string>(), std::string("mlp-training"));
        QCOMPARE(a["trace_hash"].get<std::string>().size(), size_t(64));
        QVERIFY(a["trace_hash"] == b["trace_hash"]);
        QCOMPARE(a["steps"].get<int>(), 3);
        QVERIFY(a["planned_peak_bytes"].get<uint64_t>() > 0);
        QCOMPARE(a["reads"].size(), size_t(5));
        const json& loss = a["reads"][0];
        QCOMPARE(loss["name"].get<std::string>(), std::string("loss"));
        QCOMPARE(loss["site"].get<std::string>(), std::string("program[8].body[9] (iteration 1)"));
        QVERIFY(loss["shape"].empty());
        QCOMPARE(loss["values"].size(), size_t(1));
    }
    // Same kernels, so a lazy run's reads equal the eager reference's bit for bit; the eager
    // run forces after every op, so it has more plans.
    void lazyMatchesEager() {
        for (const char* name :
             {"mlp-training.json", "view-mutation.json", "shared-base.json", "mlp-dropout.json",
              "checkpointed-mlp.json", "transformer-block.json", "compiled-mlp.json",
              "compiled-transformer-block.json", "compiled-checkpointed-mlp.json"}) {
            const json lazy = run_json(program(name));
            const json eager = run_json(program(name), {"--eager"});
            QVERIFY(!lazy.is_null() && !eager.is_null());
            QVERIFY2(lazy["reads"] == eager["reads"], name);
            QVERIFY(eager["eager"].get<bool>());
            QVERIFY(eager["plans"].get<uint64_t>() > lazy["plans"].get<uint64_t>());
        }
    }
    void traceToStdoutIsTheWholeTrace() {
        const json summary = run_json(program("view-mutation.json"));
        const Result r = tmmu_run({"lazy", "run", program("view-mutation.json"), "--trace", "-"});
        QCOMPARE(r.code, 0);
        const json trace = parsed(r.out);
        QCOMPARE(trace["format"].get<std::string>(), std::string("tmmu-lazy-trace"));
        QCOMPARE(trace["events"].size(), summary["events"].get<size_t>());
        QCOMPARE(trace["plans"].size(), summary["plans"].get<size_t>());
        QVERIFY(trace["trace_hash"] == summary["trace_hash"]);
        const json& e = trace["events"][0];
        for (const char* field :
             {"index",     "plan",        "key",        "kind",        "op",
              "site",      "tokens_in",   "tokens_out", "values_in",   "values_out",
              "data_from", "token_from",  "loc",        "loc_version", "loc_logical_version",
              "base",      "base_commit", "storage",    "bytes",       "detail"})
            QVERIFY2(e.contains(field), field);
        bool commits = false;
        for (const json& ev : trace["events"])
            commits = commits || ev["kind"] == "base_commit";
        QVERIFY(commits);
    }
    void oneOutputOnStdout() {
        const Result r =
            tmmu_run({"lazy", "run", program("view-mutation.json"), "--json", "-", "--trace", "-"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--trace"), qPrintable(r.err));
    }
    void recordListReplay() {
        const QString db = record("mlp-training.json", "mlp.db");
        QVERIFY(!db.isEmpty());
        const QString hash =
            printed_hash(tmmu_run({"lazy", "run", program("mlp-training.json")}).out);
        QCOMPARE(hash.size(), 64);
        const Result list = tmmu_run({"lazy", "traces", "--sessions", db});
        QCOMPARE(list.code, 0);
        QVERIFY2(list.out.contains(hash.left(12) + "  mlp-training \"cli\": ok"),
                 qPrintable(list.out));
        const Result replay = tmmu_run({"lazy", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0, qPrintable(replay.out + replay.err));
        QVERIFY2(replay.out.contains("recorded  trace_hash " + hash), qPrintable(replay.out));
        QVERIFY2(replay.out.contains("replayed  trace_hash " + hash), qPrintable(replay.out));
        QVERIFY(replay.out.contains("identical"));
        const json listed =
            parsed(tmmu_run({"lazy", "traces", "--sessions", db, "--json", "-"}).out);
        QCOMPARE(listed["format"].get<std::string>(), std::string("tmmu-lazy-traces"));
        QCOMPARE(listed["traces"].size(), size_t(1));
        QCOMPARE(listed["traces"][0]["trace_hash"].get<std::string>(), hash.toStdString());
        QVERIFY(listed["traces"][0]["failure"].is_null());
        QCOMPARE(tmmu_run({"lazy", "replay", "2", "--sessions", db}).code, 2);
    }
    // The checkpoint policy: with "keep" the bodies run plainly, and the reads are the same bit
    // for bit while the bodies' saved values stay live (a larger arena); a recording keeps the
    // policy, so its replay runs the same way, and changing the stored policy is seen. An
    // unknown policy is a usage error naming the option.
    void checkpointPolicyKeepsTheReads() {
        const json recompute = run_json(program("checkpointed-mlp.json"));
        const json keep =
            run_json(program("checkpointed-mlp.json"), {"--checkpoint-policy", "keep"});
        QVERIFY(!recompute.is_null() && !keep.is_null());
        QVERIFY(recompute["reads"] == keep["reads"]);
        QCOMPARE(recompute["checkpoint_policy"].get<std::string>(), std::string("recompute"));
        QCOMPARE(keep["checkpoint_policy"].get<std::string>(), std::string("keep"));
        QCOMPARE(recompute["checkpoints"].get<uint64_t>(), uint64_t(8)); // 4 blocks, 2 steps
        QCOMPARE(keep["checkpoints"].get<uint64_t>(), uint64_t(0));
        QVERIFY(recompute["recomputed_ops"].get<uint64_t>() > 0);
        QVERIFY(recompute["planned_peak_bytes"].get<uint64_t>() <
                keep["planned_peak_bytes"].get<uint64_t>());
        const Result bad = tmmu_run(
            {"lazy", "run", program("checkpointed-mlp.json"), "--checkpoint-policy", "some"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("--checkpoint-policy: expects recompute or keep"),
                 qPrintable(bad.err));

        const QString db = dir_.filePath("keep.db");
        const json listed = record_and_replay(
            "checkpointed-mlp.json", {"--checkpoint-policy", "keep"}, db, "checkpoints kept");
        QVERIFY(!listed.is_null());
        QCOMPARE(listed["traces"][0]["checkpoint_policy"].get<std::string>(), std::string("keep"));
        QVERIFY(alter_behind_tmmu(db, "UPDATE lazy_traces SET checkpoint_policy = 'recompute'"));
        QVERIFY(tmmu_run({"lazy", "traces", "--sessions", db}).out.contains("ALTERED"));
    }
    // Compiled calls inside checkpointed bodies (10.6: the blocks only read persistent state):
    // the same reads compiled or not, checkpointed or kept, and backward replays the blocks.
    void compiledCallsInsideCheckpointsKeepTheReads() {
        const QString name = program("compiled-checkpointed-mlp.json");
        const json plain = run_json(name);
        const json compiled = run_json(name, {"--compile"});
        const json kept = run_json(name, {"--compile", "--checkpoint-policy", "keep"});
        QVERIFY(!plain.is_null() && !compiled.is_null() && !kept.is_null());
        QVERIFY(compiled["result_hash"] == plain["result_hash"]);
        QVERIFY(kept["result_hash"] == plain["result_hash"]);
        QCOMPARE(compiled["compiled_calls"].get<uint64_t>(), uint64_t(12));
        QCOMPARE(compiled["cache_hits"].get<uint64_t>(), uint64_t(4));
        QCOMPARE(compiled["checkpoints"].get<uint64_t>(), uint64_t(12));
        QVERIFY(compiled["recomputed_ops"] == plain["recomputed_ops"]);
        QVERIFY(compiled["recomputed_ops"].get<uint64_t>() > 0);
        QCOMPARE(kept["recomputed_ops"].get<uint64_t>(), uint64_t(0));
    }
    // --compile (issue 18, item 6): the same result hash with fewer kernels, the cache counted;
    // a recording keeps the flag, so its replay compiles too, and clearing the stored flag is
    // seen. The flag applies to lazy run only.
    void compileKeepsTheResultWithFewerKernels() {
        const json plain = run_json(program("compiled-mlp.json"));
        const json compiled = run_json(program("compiled-mlp.json"), {"--compile"});
        QVERIFY(!plain.is_null() && !compiled.is_null());
        QVERIFY(plain["result_hash"] == compiled["result_hash"]);
        QVERIFY(plain["reads"] == compiled["reads"]);
        QVERIFY(plain["trace_hash"] != compiled["trace_hash"]);
        QVERIFY(!plain["compile"].get<bool>() && compiled["compile"].get<bool>());
        QCOMPARE(plain["compiled_calls"].get<uint64_t>(), uint64_t(0));
        QCOMPARE(compiled["compiled_calls"].get<uint64_t>(), uint64_t(3));
        QCOMPARE(compiled["cache_hits"].get<uint64_t>(), uint64_t(1));
        QCOMPARE(compiled["cache_misses"].get<uint64_t>(), uint64_t(2));
        QVERIFY(compiled["fused_groups"].get<uint64_t>() > 0);
        QVERIFY(compiled["kernels"].get<uint64_t>() < plain["kernels"].get<uint64_t>());
        QCOMPARE(tmmu_run({"lazy", "traces", "--compile"}).code, 2);

        const QString db = dir_.filePath("compiled.db");
        const json listed = record_and_replay("compiled-mlp.json", {"--compile"}, db, "compiled");
        QVERIFY(!listed.is_null());
        QVERIFY(listed["traces"][0]["compile"].get<bool>());
        QVERIFY(alter_behind_tmmu(db, "UPDATE lazy_traces SET compiled = 0"));
        QVERIFY(tmmu_run({"lazy", "traces", "--sessions", db}).out.contains("ALTERED"));
    }
    // A run that breaks a rule is recorded with its error, still exits with it, and replays to
    // the same hash and the same error.
    void failedRunIsRecordedWithItsError() {
        const QString db = record("saved-tensor-mutation.json", "failed.db", 26);
        QVERIFY(!db.isEmpty());
        const Result list = tmmu_run({"lazy", "traces", "--sessions", db});
        QVERIFY2(list.out.contains("saved-tensor-mutation \"cli\": LAZY_ENGINE_ERROR at "
                                   "program[5]: SavedTensorModifiedError"),
                 qPrintable(list.out));
        const Result replay = tmmu_run({"lazy", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0, qPrintable(replay.out + replay.err));
        const QStringList lines = replay.out.split('\n');
        QCOMPARE(lines.filter("error: LAZY_ENGINE_ERROR at program[5]: SavedTensorModified").size(),
                 2);
        QCOMPARE(lines[1].mid(10), lines[2].mid(10)); // recorded and replayed trace_hash
        QVERIFY(replay.out.contains("identical: the same trace hash and the same error"));
    }
    void alteredRowIsReportedByReplay() {
        const QString db = record("shared-base.json", "altered.db");
        QVERIFY(!db.isEmpty());
        QVERIFY(alter_behind_tmmu(
            db, "UPDATE lazy_traces SET trace_hash = '00' || substr(trace_hash, 3)"));
        const Result list = tmmu_run({"lazy", "traces", "--sessions", db});
        QCOMPARE(list.code, 0);
        QVERIFY2(list.out.contains("ALTERED: the lazy trace's stored fields do not match"),
                 qPrintable(list.out));
        const Result replay = tmmu_run({"lazy", "replay", "1", "--sessions", db});
        QCOMPARE(replay.code, 18); // CORRUPT_CHECKPOINT
        QVERIFY2(replay.err.contains("lazy trace 1 is ALTERED"), qPrintable(replay.err));
        QVERIFY2(replay.out.contains("DIFFERENT: the trace hashes differ") &&
                     replay.out.contains("integrity ALTERED: "),
                 qPrintable(replay.out));
        // Only the stored hash changed: the events agree, so no event is blamed.
        QVERIFY2(!replay.out.contains("first difference"), qPrintable(replay.out));
    }
    // A replay whose trace parts from the recording names the first event that differs and
    // how: here the stored program's tanh became a sigmoid behind tmmu's back.
    void differingReplayNamesTheFirstEvent() {
        const QString db = record("shared-base.json", "changed.db");
        QVERIFY(!db.isEmpty());
        QVERIFY(alter_behind_tmmu(db, "UPDATE lazy_traces SET program_text = replace(program_text, "
                                      "'\"op\": \"tanh\"', '\"op\": \"sigmoid\"')"));
        const Result replay = tmmu_run({"lazy", "replay", "1", "--sessions", db});
        QCOMPARE(replay.code, 18); // altered, replayed anyway
        const QStringList lines = replay.out.split('\n').filter("first difference: ");
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].startsWith("first difference: event ") &&
                     lines[0].contains("op was \"tanh\", is \"sigmoid\""),
                 qPrintable(replay.out));
    }
    // Two recordings compare without running anything: the same program gives identical traces;
    // an eager run of it parts at its first event, which diff names. Export writes the stored
    // trace byte for byte as `run --trace` writes it, and refuses a row changed behind tmmu's back.
    void recordedTracesAreComparedAndExported() {
        const QString db = record("shared-base.json", "diff.db");
        QVERIFY(!db.isEmpty());
        const QString shared = program("shared-base.json");
        QCOMPARE(tmmu_run({"lazy", "run", shared, "--record", "--sessions", db}).code, 0);
        QCOMPARE(tmmu_run({"lazy", "run", shared, "--eager", "--record", "--sessions", db}).code,
                 0);
        const Result same = tmmu_run({"lazy", "diff", "1", "2", "--sessions", db});
        QCOMPARE(same.code, 0);
        QVERIFY2(same.out.contains("identical: the same trace hash") &&
                     !same.out.contains("first difference"),
                 qPrintable(same.out));
        const Result eager = tmmu_run({"lazy", "diff", "1", "3", "--sessions", db});
        QCOMPARE(eager.code, 1);
        QVERIFY2(eager.out.contains("program shared-base (eager)") &&
                     eager.out.contains("DIFFERENT: the trace hashes differ") &&
                     eager.out.contains("first difference: event "),
                 qPrintable(eager.out));

        const QString exported = dir_.filePath("exported.json"), traced = dir_.filePath("t.json");
        const Result out = tmmu_run({"lazy", "export", "1", "--out", exported, "--sessions", db});
        QCOMPARE(out.code, 0);
        QVERIFY2(out.out.startsWith("wrote lazy trace 1 to "), qPrintable(out.out));
        QCOMPARE(tmmu_run({"lazy", "run", shared, "--trace", traced}).code, 0);
        const auto trace_text = tmmu::test::read_file(traced.toStdString());
        QVERIFY(trace_text);
        QCOMPARE(tmmu::test::read_file(exported.toStdString()), trace_text);
        QCOMPARE(tmmu_run({"lazy", "export", "2", "--sessions", db}).out.toStdString(),
                 *trace_text); // standard output by default

        QCOMPARE(tmmu_run({"lazy", "diff", "1", "9", "--sessions", db}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "diff", "1", "--sessions", db}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "diff", "1", "2", "--out", exported, "--sessions", db}).code, 2);
        QVERIFY(alter_behind_tmmu(db, "UPDATE lazy_traces SET trace_json = "
                                      "replace(trace_json, 'shared-base', 'other') WHERE id = 2"));
        const Result altered = tmmu_run({"lazy", "export", "2", "--sessions", db});
        QCOMPARE(altered.code, 18); // CORRUPT_CHECKPOINT
        QVERIFY2(altered.out.isEmpty() && altered.err.contains("not exported"),
                 qPrintable(altered.err));
        const Result both = tmmu_run({"lazy", "diff", "1", "2", "--sessions", db});
        QCOMPARE(both.code, 18);
        QVERIFY2(both.err.contains("lazy trace 2 is ALTERED"), qPrintable(both.err));
    }
    void recordOptionsApplyWhereTheyMean() {
        const QString db = dir_.filePath("options.db");
        QCOMPARE(tmmu_run({"lazy", "run", program("shared-base.json"), "--title", "t"}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "run", program("shared-base.json"), "--sessions", db}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "traces", "--eager", "--sessions", db}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "replay", "1", "--limit", "3", "--sessions", db}).code, 2);
        QCOMPARE(tmmu_run({"lazy", "traces", "--sessions", db}).code, 16); // reading creates none
        QVERIFY(!QFile::exists(db));
    }
    void malformedProgramsNameTheStatement() {
        const std::string x = R"({"let": "x", "tensor": {"values": [1, 2, 3]}}, )";
        struct Case {
            const char* file;
            std::string statements;
            int code;
            const char* err;
        } cases[] = {
            {"bad-op.json", x + R"({"let": "y", "op": "frob", "args": ["x"]})", 10,
             "INVALID_IR_SHAPES at " /* path */},
            {"unknown-name.json", x + R"({"let": "y", "op": "add", "args": ["x", "q"]})", 10,
             "program[1].args[1]: unknown tensor \"q\""},
            {"coercion.json",
             x + R"({"repeat": 2, "body": [{"let": "o", "sgd": {"params": ["x"], "lr": "x"}}]})",
             26,
             "LAZY_ENGINE_ERROR at program[1].body[0].sgd.lr (iteration 1): "
             "TensorHostCoercionError"},
            {"shapes.json", x + R"({"let": "y", "op": "matmul", "args": ["x", "x"]})", 10,
             "INVALID_IR_SHAPES at program[1]: "},
        };
        for (const Case& c : cases) {
            const Result r = tmmu_run({"lazy", "run", write(c.file, c.statements)});
            QVERIFY2(r.code == c.code, qPrintable(QString("%1: %2").arg(c.file, r.err)));
            QVERIFY2(r.err.contains(c.err), qPrintable(r.err));
            QCOMPARE(r.err.count('\n'), 1);
        }
        const Result op = tmmu_run({"lazy", "run", dir_.filePath("bad-op.json")});
        QVERIFY2(op.err.contains("program[1].op: unknown op \"frob\""), qPrintable(op.err));
    }
};

QTEST_GUILESS_MAIN(TestLazyCli)
#include "test_lazy_cli.moc"
