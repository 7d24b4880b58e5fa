// Many programs on one sessions database at once: tmmu recorders and listers (separate
// processes) and an in-process store like the studio's (its own connection, on a thread).
// Nothing may fail and every session must be there (issue 11: concurrent recorders on a new
// database once failed with "database is locked", and with a false "not an SQLite file" on an
// existing one).
#include "session_store.h"
#include "test_support.h"

#include "source/model_source.h"

#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using namespace tmmu;
using namespace tmmu::sessions;

namespace {

const char* kModel = TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json";
constexpr int kRecorders = 6;     // tmmu plan --record processes per round
constexpr int kListers = 3;       // tmmu session list processes per round (existing database)
constexpr int kStudioRecords = 3; // sessions the in-process store records per round

NewSession studio_session(int i) {
    ModelRequest req;
    req.mode = Mode::Inference;
    LoadedModel m = load_model(kModel, req);
    PlanOptions o;
    Plan p = plan_model(m, req.mode, o, Progress{});
    return {input_from_model(m, req, o), p, "studio " + std::to_string(i), "", {}};
}

// Starts every program at once and runs the studio-like store meanwhile; returns the failures
// (program, exit code, stderr), empty when all succeeded.
QStringList run_round(const QString& db, bool listers) {
    std::vector<std::unique_ptr<QProcess>> procs;
    auto start = [&](const QStringList& args) {
        procs.push_back(std::make_unique<QProcess>());
        procs.back()->start(QStringLiteral(TMMU_CLI), args);
    };
    for (int i = 0; i < kRecorders; ++i)
        start({"plan", kModel, "--mode", "inference", "--quiet", "--record", "--sessions", db});
    for (int i = 0; listers && i < kListers; ++i)
        start({"session", "list", "--sessions", db});
    std::string studio_error;
    std::thread studio([&] {
        try {
            SessionStore store(db.toStdString());
            for (int i = 0; i < kStudioRecords; ++i) {
                store.record(studio_session(i));
                (void)store.list();
            }
        } catch (const std::exception& e) {
            studio_error = e.what();
        }
    });
    QStringList failures;
    for (auto& p : procs) {
        const bool done = p->waitForFinished(120000);
        if (!done || p->exitStatus() != QProcess::NormalExit || p->exitCode() != 0)
            failures << QString("%1 -> %2: %3")
                            .arg(p->arguments().join(' '))
                            .arg(done ? p->exitCode() : -1)
                            .arg(QString::fromUtf8(p->readAllStandardError()));
    }
    studio.join();
    if (!studio_error.empty()) failures << "studio store: " + QString::fromStdString(studio_error);
    return failures;
}

} // namespace

class TestSessionConcurrency : public QObject {
    Q_OBJECT
  private slots:
    void recordersOnANewDatabaseLoseNothing() {
        QTemporaryDir dir;
        for (int round = 0; round < 5; ++round) {
            const QString db = dir.filePath(QString("new-%1.db").arg(round));
            const QStringList failures = run_round(db, false);
            QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
            QCOMPARE(SessionStore(db.toStdString()).count(), size_t(kRecorders + kStudioRecords));
        }
    }
    void recordersAndListersOnAnExistingDatabaseLoseNothing() {
        QTemporaryDir dir;
        const QString db = dir.filePath("existing.db");
        SessionStore(db.toStdString()).record(studio_session(-1));
        for (int round = 0; round < 5; ++round) {
            const QStringList failures = run_round(db, true);
            QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
        }
        QCOMPARE(SessionStore(db.toStdString()).count(),
                 size_t(1 + 5 * (kRecorders + kStudioRecords)));
    }
};

QTEST_GUILESS_MAIN(TestSessionConcurrency)
#include "test_session_concurrency.moc"
