// End to end through the tmmu binary: the session commands, and crash safety of
// `tmmu plan --record` killed (SIGKILL) at random moments, many times.
#include "session_store.h"
#include "test_support.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <random>
#include <sqlite3.h>

using namespace tmmu::sessions;

namespace {

const char* kModel = TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json";

QStringList record_args(const QString& db, int i) {
    return {"plan",    kModel,       "--mode", "inference", "--record",
            "--quiet", "--sessions", db,       "--title",   QString("run %1").arg(i)};
}

using Result = tmmu::test::ProgramRun;

Result run_tmmu(const QStringList& args) {
    return tmmu::test::run_program(TMMU_CLI, args, 60000);
}

std::string integrity(sqlite3* db) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
    std::string r = sqlite3_step(st) == SQLITE_ROW
                        ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                        : "no result";
    sqlite3_finalize(st);
    return r;
}

} // namespace

class TestSessionCli : public QObject {
    Q_OBJECT
  private slots:
    void sessionCommands() {
        QTemporaryDir dir;
        QString db = dir.path() + "/cli.db";
        Result r = run_tmmu({"plan", kModel, "--mode", "inference", "--record", "--title", "base",
                             "--tag", "demo", "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("recorded session 1"), qPrintable(r.out));
        QCOMPARE(run_tmmu({"plan", kModel, "--mode", "inference", "--align", "4096", "--record",
                           "--quiet", "--sessions", db})
                     .code,
                 0);
        r = run_tmmu({"session", "list", "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("base [demo]"), qPrintable(r.out));
        r = run_tmmu({"session", "list", "--search", "demo", "--sessions", db});
        QCOMPARE(r.out.count('\n'), 2); // header + session 1
        r = run_tmmu({"session", "show", "1", "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("integrity  ok"), qPrintable(r.out));
        r = run_tmmu({"session", "edit", "1", "--title", "renamed", "--tag", "kept", "--notes",
                      "why", "--sessions", db});
        QCOMPARE(r.code, 0);
        r = run_tmmu({"session", "list", "--search", "kept", "--sessions", db});
        QVERIFY2(r.out.contains("renamed [kept]"), qPrintable(r.out));
        QCOMPARE(run_tmmu({"session", "edit", "1", "--sessions", db}).code, 2); // no change
        QCOMPARE(run_tmmu({"session", "edit", "9", "--title", "t", "--sessions", db}).code, 2);
        QCOMPARE(run_tmmu({"session", "show", "1", "--title", "t", "--sessions", db}).code, 2);
        r = run_tmmu({"session", "replay", "1", "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("identical"), qPrintable(r.out));
        r = run_tmmu({"session", "diff", "1", "2", "--sessions", db});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("tensors moved") && r.out.contains("parameters @") &&
                     !r.out.contains("different models"),
                 qPrintable(r.out));
        QCOMPARE(run_tmmu({"session", "delete", "2", "--sessions", db}).code, 0);
        QCOMPARE(run_tmmu({"session", "show", "2", "--sessions", db}).code, 2);
        QCOMPARE(run_tmmu({"session", "frobnicate", "--sessions", db}).code, 2);
        QCOMPARE(run_tmmu({"plan", kModel, "--title", "x"}).code, 2); // --title needs --record
        {
            // Alter the stored plan behind the store's back: show and replay must refuse it.
            sqlite3* h = nullptr;
            QCOMPARE(sqlite3_open(db.toUtf8().constData(), &h), SQLITE_OK);
            sqlite3_exec(h,
                         "UPDATE sessions SET plan_hash = replace(plan_hash, substr(plan_hash, "
                         "1, 1), 'x') WHERE id = 1",
                         nullptr, nullptr, nullptr);
            sqlite3_close(h);
        }
        r = run_tmmu({"session", "show", "1", "--sessions", db});
        QCOMPARE(r.code, 18); // 10 + CORRUPT_CHECKPOINT
        QVERIFY2(r.out.contains("ALTERED"), qPrintable(r.out));
        QCOMPARE(run_tmmu({"session", "replay", "1", "--sessions", db}).code, 18);
        r = run_tmmu({"session", "--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("replay ID"));
    }

    void foreignFileRefusedByCli() {
        QTemporaryDir dir;
        QString path = dir.path() + "/notes.txt";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("just some text, not a database\n");
        f.close();
        Result r = run_tmmu({"plan", kModel, "--record", "--quiet", "--sessions", path});
        QCOMPARE(r.code, 16); // 10 + IO_ERROR
        QVERIFY2(r.err.contains("not a TMMU sessions database"), qPrintable(r.err));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("just some text, not a database\n"));
    }

    // Options a model cannot use are usage errors, not silently dropped; what a CSV session
    // records is what applied to it (one arena, no batch or sequence length).
    void optionsMeanWhatTheySay() {
        QTemporaryDir dir;
        const QString csv = dir.path() + "/p.csv";
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("id,lower,upper,size\nb1,0,3,40\nb2,1,9,40\n");
        f.close();
        const QString ckpt = dir.path() + "/p.ckpt";
        QCOMPARE(run_tmmu({"plan", csv, "--checkpoint", ckpt, "--quiet"}).code, 0);
        // Each refusal names the option it refuses.
        const QList<QPair<QStringList, QString>> refused = {
            {{"validate", ckpt, "--mode", "training"}, "--mode"},
            {{"validate", ckpt, "--seq", "16"}, "--seq"},
            {{"plan", csv, "--mode", "training"}, "--mode"},
            {{"plan", csv, "--batch", "4"}, "--batch"},
            {{"validate", csv, "--mode", "training"}, "--mode"},
            {{"plan", kModel, "--seq", "4"}, "--seq"},
            {{"plan", kModel, "--budget", "100"}, "--budget"},
            {{"plan", kModel, "--strategy", "slots", "--budget", "5ms"}, "--budget"},
            // Past 24 hours the deadline once overflowed into the past.
            {{"plan", kModel, "--strategy", "optimal", "--budget", "18446744073709551615ms"},
             "--budget"},
            // A limit of 0 is refused, not read as "no limit".
            {{"session", "list", "--limit", "0", "--sessions", dir.path() + "/none.db"}, "--limit"},
            {{"session", "runs", "--limit", "0", "--sessions", dir.path() + "/none.db"}, "--limit"},
            {{"lazy", "traces", "--limit", "0", "--sessions", dir.path() + "/none.db"}, "--limit"}};
        for (const auto& [args, option] : refused) {
            Result r = run_tmmu(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " -> " + r.err));
            QVERIFY2(r.err.contains("INVALID_ARGUMENT at " + option + ":"),
                     qPrintable(args.join(' ') + " -> " + r.err));
        }
        const QString db = dir.path() + "/s.db";
        QCOMPARE(run_tmmu({"plan", csv, "--record", "--quiet", "--sessions", db}).code, 0);
        Result show = run_tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(show.out.contains("batch and seq n/a"), qPrintable(show.out));
        QVERIFY2(show.out.contains("mode       none"), qPrintable(show.out));
        Session s = SessionStore(db.toStdString()).load(1);
        QCOMPARE(s.input.options.policy.arenas.size(), size_t(1));
        QCOMPARE(s.input.request.batch, uint64_t(0));
    }

    // A rank's plan is recorded with its rank and sharding, and replays to the same hash.
    void shardedRunsRecordTheirRank() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/s.db";
        QCOMPARE(run_tmmu({"plan", kModel, "--world-size", "3", "--rank", "2", "--shard",
                           "activation,parameter", "--record", "--quiet", "--sessions", db})
                     .code,
                 0);
        QCOMPARE(run_tmmu({"plan", kModel, "--record", "--quiet", "--sessions", db}).code, 0);
        Result show = run_tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(show.out.contains("shard      rank 2 of 3, sharding parameter and activation"),
                 qPrintable(show.out));
        QVERIFY(!run_tmmu({"session", "show", "2", "--sessions", db}).out.contains("shard"));
        const Session s = SessionStore(db.toStdString()).load(1);
        QCOMPARE(s.input.options.shard,
                 (tmmu::ShardSpec{3, 2, {tmmu::Role::Parameter, tmmu::Role::Activation}}));
        Result replay = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0, qPrintable(replay.out + replay.err));
        // The list names the rank beside the mode; a single-rank plan reads as before.
        Result list = run_tmmu({"session", "list", "--sessions", db});
        QVERIFY2(list.out.contains("  training, rank 2/3  "), qPrintable(list.out));
        QCOMPARE(list.out.count("rank "), 1);
        const std::vector<SessionSummary> listed = SessionStore(db.toStdString()).list({});
        QCOMPARE(listed.size(), size_t(2));
        QCOMPARE(listed_mode(listed[1]), std::string("training, rank 2/3")); // newest first
        QCOMPARE(listed_mode(listed[0]), std::string("training"));
        QCOMPARE(listed_mode(s.summary), std::string("training, rank 2/3"));
        // Options altered into no rank of the world, or into something that is not JSON: the
        // row still lists, without a rank (loading it names the problem).
        const auto alter = [&](const char* options) {
            sqlite3* raw = nullptr;
            QCOMPARE(sqlite3_open(db.toUtf8().constData(), &raw), SQLITE_OK);
            sqlite3_stmt* st = nullptr;
            QCOMPARE(sqlite3_prepare_v2(raw, "UPDATE sessions SET options_json = ?1 WHERE id = 1",
                                        -1, &st, nullptr),
                     SQLITE_OK);
            sqlite3_bind_text(st, 1, options, -1, SQLITE_TRANSIENT);
            QCOMPARE(sqlite3_step(st), SQLITE_DONE);
            sqlite3_finalize(st);
            sqlite3_close(raw);
        };
        for (const char* options :
             {R"({"shard": {"rank": 3, "world_size": 3, "roles": []}})",
              R"({"shard": {"rank": -1, "world_size": 3, "roles": []}})",
              R"({"shard": {"rank": "two", "world_size": 3, "roles": []}})",
              R"({"shard": {"rank": 1, "world_size": 4294967298, "roles": []}})", "{"}) {
            alter(options);
            const std::vector<SessionSummary> altered = SessionStore(db.toStdString()).list({});
            QCOMPARE(altered.size(), size_t(2));
            QVERIFY2(listed_mode(altered[1]) == "training", options);
        }
    }

    // A run over iterations is recorded as the plan in force after the last one: the stored
    // graph is bound there (as each dimension's default), so a replay plans the same again.
    void dynamicShapesRecordTheirLastBinding() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/s.db";
        const QString model =
            QStringLiteral(TMMU_SOURCE_DIR "/resources/models/examples/dynamic_seq.json");
        Result run = run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=128",
                               "--iteration", "seq=512", "--record", "--sessions", db});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const Session s = SessionStore(db.toStdString()).load(1);
        QVERIFY2(s.input.model_text.find(R"("seq": {"min": 1, "max": 2048, "default": 512})") !=
                     std::string::npos,
                 s.input.model_text.c_str());
        Result show = run_tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(show.out.contains("dims       batch=1 of [1, 8], seq=512 of [1, 2048]; "
                                   "replan_policy REPLAN_AT_SAFEPOINT\n"),
                 qPrintable(show.out));
        QCOMPARE(run_tmmu({"plan", kModel, "--record", "--quiet", "--sessions", db}).code, 0);
        QVERIFY(!run_tmmu({"session", "show", "2", "--sessions", db}).out.contains("dims  "));
        Result replay = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0 && replay.out.contains("identical"),
                 qPrintable(replay.out + replay.err));
        QVERIFY(s.plan);
        QVERIFY2(run.out.contains(
                     QString::fromStdString("plan hash  " + tmmu::to_hex(s.plan->plan_hash))),
                 qPrintable(run.out));
    }

    // tmmu plan --iteration --record keeps the iterations: show lists them, replay runs them
    // again from the first plan's binding and says each was decided as recorded.
    void iterationRunsKeepTheirIterations() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/it.db";
        const QString model = TMMU_SOURCE_DIR "/resources/models/examples/dynamic_seq.json";
        Result r = run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=128",
                             "--iteration", "seq=128", "--iteration", "seq=1024", "--iteration",
                             "seq=512", "--record", "--quiet", "--sessions", db});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        Result show = run_tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(show.out.contains("iterations 3 iterations from batch=1, seq=128, 1 replan\n"),
                 qPrintable(show.out));
        QCOMPARE(show.out.count(" replanned "), 1);
        QCOMPARE(show.out.count(" fits "), 2);
        Result replay = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0, qPrintable(replay.out + replay.err));
        QVERIFY2(replay.out.contains("identical\niterations 3 iterations decided as recorded "
                                     "(1 replan)\n"),
                 qPrintable(replay.out));
        // A transformer config runs over iterations with batch and seq dynamic; the stored IR
        // keeps their envelope, so replay binds and replans it again.
        r = run_tmmu({"plan", "--mode", "inference", "--batch", "1", "--seq", "64", "--iteration",
                      "seq=128", "--iteration", "batch=2,seq=32", "--record", "--quiet",
                      "--sessions", db});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        show = run_tmmu({"session", "show", "2", "--sessions", db});
        QVERIFY2(show.out.contains("mode       inference   first plan at batch 1   seq 64   "),
                 qPrintable(show.out));
        QVERIFY2(show.out.contains("dims       batch=2 of [1, 2], seq=128 of [1, 1024]; "
                                   "replan_policy REPLAN_AT_SAFEPOINT\n"),
                 qPrintable(show.out));
        replay = run_tmmu({"session", "replay", "2", "--sessions", db});
        QVERIFY2(replay.code == 0 && replay.out.contains("identical\niterations 2 iterations "
                                                         "decided as recorded (2 replans)\n"),
                 qPrintable(replay.out + replay.err));
    }

    // Two sessions can end on one plan by different roads: diff says the plans are identical
    // and how each was reached, down to the first iteration decided otherwise.
    void diffsSayHowEachSessionReachedItsPlan() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/it.db";
        const QString model = TMMU_SOURCE_DIR "/resources/models/examples/dynamic_seq.json";
        const QStringList plan{"plan",     model,     "--mode",     "inference",
                               "--record", "--quiet", "--sessions", db};
        QCOMPARE(run_tmmu(plan + QStringList{"--dim", "seq=128", "--iteration", "seq=1024",
                                             "--iteration", "seq=512"})
                     .code,
                 0);
        QCOMPARE(run_tmmu(plan + QStringList{"--dim", "seq=1024"}).code, 0);
        QCOMPARE(run_tmmu(plan + QStringList{"--dim", "seq=128", "--iteration", "seq=1024",
                                             "--iteration", "seq=1024"})
                     .code,
                 0);
        Result once = run_tmmu({"session", "diff", "1", "2", "--sessions", db});
        QVERIFY2(once.code == 0, qPrintable(once.err));
        QVERIFY2(once.out.contains("identical plans, reached otherwise\n\nhistory\n") &&
                     once.out.contains("2 iterations from batch=1, seq=128, 1 replan -> one "
                                       "plan, no iterations\n"),
                 qPrintable(once.out));
        // Same count and replans: the summary reads alike, so only the iteration is listed.
        Result other = run_tmmu({"session", "diff", "1", "3", "--sessions", db});
        QVERIFY2(!other.out.contains("  iterations ") &&
                     other.out.contains("iteration 1                    seq=512: fits plan"),
                 qPrintable(other.out));
        QVERIFY2(other.out.contains("-> seq=1024: fits plan"), qPrintable(other.out));
        QVERIFY(run_tmmu({"session", "diff", "1", "1", "--sessions", db})
                    .out.endsWith("\nidentical\n"));
        // From another start, the first replan replaced another plan: its line says which.
        QCOMPARE(run_tmmu(plan + QStringList{"--dim", "seq=256", "--iteration", "seq=1024",
                                             "--iteration", "seq=512"})
                     .code,
                 0);
        Result start = run_tmmu({"session", "diff", "1", "4", "--sessions", db});
        const qsizetype line = start.out.indexOf("  iteration 0 ");
        QVERIFY2(line >= 0, qPrintable(start.out));
        const QString zero = start.out.mid(line, start.out.indexOf('\n', line) - line);
        QCOMPARE(zero.count(", was "), 2);
        const QStringList sides = zero.split(" -> ");
        QCOMPARE(sides.size(), 2);
        QVERIFY2(sides[0].section(", was ", 1) != sides[1].section(", was ", 1), qPrintable(zero));
    }

    // Tags are single words (no comma, not blank), refused before anything is planned or
    // written; a diff of two different models says so before its deltas.
    void tagsAndDiffsSayWhatTheyMean() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/s.db";
        for (const QString& tag : {QString(""), QString("  "), QString("a,b")}) {
            Result r = run_tmmu({"plan", kModel, "--record", "--tag", tag, "--sessions", db});
            QVERIFY2(r.code == 2 && r.err.contains("INVALID_ARGUMENT at tag"), qPrintable(r.err));
        }
        QVERIFY(!QFile::exists(db)); // refused before planning: no database was created
        QCOMPARE(run_tmmu({"plan", kModel, "--record", "--quiet", "--sessions", db}).code, 0);
        Result r = run_tmmu({"session", "edit", "1", "--tag", "x,y", "--sessions", db});
        QVERIFY2(r.code == 2 && r.err.contains("cannot contain a comma"), qPrintable(r.err));
        QVERIFY(SessionStore(db.toStdString()).load(1).summary.tags.empty()); // unchanged
        const QString csv = dir.path() + "/p.csv";
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("id,lower,upper,size\nb1,0,3,40\n");
        f.close();
        Result plan = run_tmmu({"plan", csv, "--record", "--sessions", db});
        QVERIFY2(plan.out.contains("offset-assignment problem, 1 buffer\n") &&
                     plan.out.contains("mode       none   strategy auto   buffers 1\n"),
                 qPrintable(plan.out));
        r = run_tmmu({"session", "diff", "1", "2", "--sessions", db});
        QCOMPARE(r.code, 1);
        const QStringList lines = r.out.split('\n');
        QVERIFY2(lines.size() > 2 && lines[1].startsWith("different models: ") &&
                     lines[1].contains("residual_blocks.json") && lines[1].contains("p.csv"),
                 qPrintable(r.out));
    }

    void readingCommandsOnAMissingDatabaseCreateNothing() {
        QTemporaryDir dir;
        const QString db = dir.path() + "/nonexistent/dir/s.db";
        const QList<QStringList> reads = {
            {"session", "list"},        {"session", "show", "1"},
            {"session", "replay", "1"}, {"session", "diff", "1", "2"},
            {"session", "delete", "1"}, {"export", "1", "--format", "json"}};
        for (QStringList args : reads) {
            args << "--sessions" << db;
            Result r = run_tmmu(args);
            QVERIFY2(r.code == 16, qPrintable(args.join(' ') + ": " + r.err));
            QVERIFY2(r.err.contains("no sessions database"), qPrintable(r.err));
        }
        QVERIFY(!QFileInfo::exists(dir.path() + "/nonexistent"));
        QVERIFY(!QFileInfo::exists("session-1.json"));
    }

    void readingCommandsOnAnEmptyFileLeaveItEmpty() {
        // Opening would have migrated it: a `touch`ed file became a database on `session list`.
        QTemporaryDir dir;
        const QString db = dir.path() + "/empty.db";
        QFile f(db);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        for (const QStringList& args : {QStringList{"session", "list", "--sessions", db},
                                        QStringList{"session", "show", "1", "--sessions", db}}) {
            Result r = run_tmmu(args);
            QVERIFY2(r.code == 16 && r.err.contains("empty file"), qPrintable(r.err));
        }
        QCOMPARE(QFileInfo(db).size(), qint64(0));
        QVERIFY(!QFileInfo::exists(db + "-wal"));
        // A path through a regular file is no missing database: say what is wrong with it.
        Result r = run_tmmu({"session", "list", "--sessions", db + "/s.db"});
        QVERIFY2(r.code == 16 && r.err.contains("Not a directory"), qPrintable(r.err));
    }

    void killedRecordersLeaveAConsistentDatabase() {
        QTemporaryDir dir;
        QString db = dir.path() + "/crash.db";
        // One clean run sets the time scale of the kill delays.
        QElapsedTimer t;
        t.start();
        QProcess first;
        first.start(TMMU_CLI, record_args(db, 0));
        QVERIFY(first.waitForFinished(60000));
        QCOMPARE(first.exitCode(), 0);
        const int run_ms = std::max<int>(int(t.elapsed()), 5);
        qInfo("one recording run: %d ms", run_ms);

        std::mt19937 rng(12345);
        // Up to twice a clean run: about half the runs die somewhere in planning or writing.
        std::uniform_int_distribution<int> delay(0, 2 * run_ms);
        int completed = 1, killed = 0, killedInWrite = 0;
        std::vector<QString> completedTitles{"run 0"}, writeKilledTitles;
        for (int i = 1; i <= 30; ++i) {
            QProcess p;
            // Every third run pauses inside its recording transaction and is killed exactly
            // there, once it has said so: those kills provably land inside a write.
            const bool inWrite = i % 3 == 0;
            if (inWrite) {
                QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
                env.insert("TMMU_FAULT_PAUSE_IN_RECORD_MS", "60000");
                p.setProcessEnvironment(env);
            }
            p.start(TMMU_CLI, record_args(db, i));
            QVERIFY(p.waitForStarted(10000));
            if (inWrite) {
                QByteArray err;
                QVERIFY(QTest::qWaitFor(
                    [&] {
                        err += p.readAllStandardError();
                        return err.contains("inside the recording transaction");
                    },
                    60000));
                p.kill(); // SIGKILL mid-transaction: SQLite must roll the insert back
                p.waitForFinished(10000);
                ++killedInWrite;
                writeKilledTitles.push_back(QString("run %1").arg(i));
            } else if (!p.waitForFinished(delay(rng))) {
                p.kill(); // SIGKILL: no destructors, no SQLite cleanup
                p.waitForFinished(10000);
                ++killed;
            } else if (p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0) {
                ++completed;
                completedTitles.push_back(QString("run %1").arg(i));
            }
        }
        qInfo("30 runs: %d killed inside a write, %d killed at random, %d completed (including "
              "the first)",
              killedInWrite, killed, completed);
        QCOMPARE(killedInWrite, 10);

        SessionStore store(db.toStdString());
        QCOMPARE(integrity(store.handle()), std::string("ok"));
        auto all = store.list();
        QVERIFY2(int(all.size()) >= completed, "a finished recording is missing");
        QStringList titles;
        for (const SessionSummary& s : all)
            titles << QString::fromStdString(s.title);
        for (const QString& t : completedTitles)
            QVERIFY2(titles.contains(t), qPrintable(t + " completed but is missing"));
        for (const QString& t : writeKilledTitles)
            QVERIFY2(!titles.contains(t),
                     qPrintable(t + " was killed before commit but is stored"));
        for (const SessionSummary& s : all) {
            Session full = store.load(s.id);
            QVERIFY2(!full.altered, full.altered_reason.c_str());
            QVERIFY(full.plan.has_value());
        }
        // The database is still writable after all the kills.
        QProcess last;
        last.start(TMMU_CLI, record_args(db, 99));
        QVERIFY(last.waitForFinished(60000));
        QCOMPARE(last.exitCode(), 0);
    }
};

QTEST_GUILESS_MAIN(TestSessionCli)
#include "test_session_cli.moc"
