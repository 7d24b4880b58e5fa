// The studio opens lazy programs (issue 14, item 8): File > Open detects one by content, runs it
// off the UI thread, and shows its trace: the token graph and engine state docks raised, the
// pool's buffers as the plan on screen, one event per step, every panel on the same cursor. A
// program that breaks an engine rule shows its trace up to the error and the spec's error name.
#include "context/plan_context.h"
#include "job_runner.h"
#include "lazy/program.h"
#include "lazy_traces_panel.h"
#include "main_window.h"
#include "panels/tensor_details_panel.h"
#include "session_actions.h"
#include "session_store.h"
#include "studio_status_bar.h"
#include "studio_test_util.h"
#include "token_graph/lazy_state_panel.h"
#include "token_graph/token_graph_panel.h"
#include "token_graph/token_graph_view.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

QString program(const char* name) {
    return QStringLiteral(TMMU_SOURCE_DIR "/resources/programs/%1.json").arg(name);
}

// Opens through openModel (the path File > Open and the command line take) and waits.
bool openAndWait(MainWindow& w, const QString& path) {
    w.openModel(path, smallSettings(), false);
    return waitIdle(w);
}

} // namespace

class TestLazyProgram : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // A program that forces nothing: no events, no pool buffers.
    QString writeNothingForced() {
        const QString path = dir_.filePath("nothing-forced.json");
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return {};
        f.write("{\"format\": \"tmmu-lazy-program\", \"version\": 1, \"name\": \"nothing-forced\", "
                "\"program\": [{\"let\": \"x\", \"tensor\": {\"values\": [1, 2]}}]}");
        return path;
    }

  private slots:
    void initTestCase() { isolateSettings(dir_.path()); }

    void aProgramShowsItsTokenGraphAndState() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(openAndWait(w, program("mlp-training")));
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        const lazy::Trace* trace = w.tokenGraph()->view()->trace();
        QVERIFY(trace != nullptr);
        QCOMPARE(trace->events.size(), size_t(1248)); // the golden trace's count
        views::PlanContext* ctx = w.context();
        QCOMPARE(ctx->eventCount(), uint64_t(trace->events.size()));
        QCOMPARE(ctx->eventAxis().label(), QStringLiteral("event"));
        QVERIFY(ctx->plan() != nullptr); // the pool's buffers, planned
        QVERIFY(ctx->plan()->tensors.size() > 100);
        // Buffers live over trace events, and the panels count them so (they said "time 0",
        // "68 time units" and "an offset-assignment problem").
        QCOMPARE(ctx->timeUnit(), QStringLiteral("event"));
        ctx->selectTensor(0);
        auto* details = w.findChild<views::TensorDetailsPanel*>();
        QVERIFY(details != nullptr);
        const QString text = details->plainText();
        QVERIFY2(text.contains(QStringLiteral("first event ")) && !text.contains("time units") &&
                     text.contains(QStringLiteral("no graph (lazy program 'mlp-training'")),
                 qPrintable(text));
        // The status bar names the trace hash the engine gives the same program outside the studio.
        const std::string hash = to_hex(
            lazy::run_lazy_program(lazy::load_lazy_program(program("mlp-training").toStdString()))
                .trace_hash);
        QVERIFY2(
            w.statusBar()->currentMessage().contains(
                QStringLiteral("trace hash %1").arg(QString::fromStdString(hash.substr(0, 16)))),
            qPrintable(w.statusBar()->currentMessage()));
        // Every panel follows the cursor: stepping to a base_commit shows it in the state panel.
        w.tokenGraph()->searchField()->setText(QStringLiteral("base_commit"));
        QVERIFY(!w.tokenGraph()->view()->matches().empty());
        QVERIFY(w.tokenGraph()->view()->findNext());
        QCOMPARE(trace->events[ctx->currentEvent()].op, std::string("base_commit"));
        QVERIFY(w.lazyState()->eventLabel()->text().contains(QStringLiteral("base_commit")));
        QCOMPARE(ctx->currentTime(), ctx->currentEvent());
        // Re-planning the buffers (another strategy) keeps the unit (it went back to "time").
        const Plan* before = ctx->plan();
        w.replan();
        QVERIFY(waitIdle(w));
        QVERIFY(ctx->plan() != before);
        QCOMPARE(ctx->timeUnit(), QStringLiteral("event"));
        if (qEnvironmentVariableIsSet("TMMU_SCREENSHOT_DIR")) {
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QTest::qWait(200);
            QVERIFY(w.grab().save(qEnvironmentVariable("TMMU_SCREENSHOT_DIR") +
                                  "/lazy-mlp-training.png"));
        }
    }

    // Five runs are wider than the dock: the table shows the program as written (the last run)
    // whole beside the measures' names, and stops following it once the user scrolls.
    void runComparisonShowsTheProgramsOwnRun() {
        MainWindow w;
        w.setPersistSettings(false);
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, program("compiled-checkpointed-mlp")));
        auto* table = w.findChild<QTableView*>(QStringLiteral("runComparisonTable"));
        QVERIFY(table && table->isVisible());
        const int last = table->model()->columnCount() - 1;
        QCOMPARE(table->model()->headerData(last, Qt::Horizontal).toString(),
                 QStringLiteral("compiled,\ncheckpointed"));
        QTest::qWait(50);
        const QHeaderView* header = table->horizontalHeader();
        QVERIFY2(header->sectionViewportPosition(0) < 0, "the runs fit: nothing to scroll");
        QVERIFY(header->sectionViewportPosition(last) + header->sectionSize(last) <=
                table->viewport()->width());
        QVERIFY(table->verticalHeader()->isVisible());
        QCOMPARE(table->model()->headerData(0, Qt::Vertical).toString(), QStringLiteral("Kernels"));
        // A narrower dock: the table still ends at the last run.
        QScrollBar* across = table->horizontalScrollBar();
        QDockWidget* dock = w.dock(QStringLiteral("runComparisonDock"));
        const int widest = across->maximum();
        w.resizeDocks({dock}, {dock->width() - 80}, Qt::Horizontal);
        QTest::qWait(50);
        QVERIFY2(across->maximum() > widest, "the dock did not narrow");
        QCOMPARE(across->value(), across->maximum());
        // The user scrolls back to the plain run: resizing no longer moves the table.
        across->triggerAction(QAbstractSlider::SliderToMinimum);
        QCOMPARE(across->value(), 0);
        w.resizeDocks({dock}, {dock->width() - 80}, Qt::Horizontal);
        QTest::qWait(50);
        QCOMPARE(across->value(), 0);
    }

    void aBrokenRuleShowsTheTraceAndTheError() {
        MainWindow w;
        w.setPersistSettings(false);
        QSignalSpy failed(&w, &MainWindow::planFailed);
        QVERIFY(openAndWait(w, program("saved-tensor-mutation")));
        QVERIFY2(w.lastFailure().contains(QStringLiteral("SavedTensorModifiedError")),
                 qPrintable(w.lastFailure()));
        QVERIFY(w.lastFailure().contains(QStringLiteral("program[")));
        const lazy::Trace* trace = w.tokenGraph()->view()->trace();
        QVERIFY(trace != nullptr && !trace->events.empty());
        QCOMPARE(w.context()->currentEvent(), uint64_t(trace->events.size() - 1));
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.front().front().toString(), w.lastFailure());
    }

    // A program that forces nothing has no pool buffers: the plan shown before leaves the
    // screen, the summary and what File > Export acts on with it.
    void aProgramWithoutBuffersClearsThePlanShown() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(
            openAndWait(w, QStringLiteral(TMMU_SOURCE_DIR "/resources/models/gpt2-small.json")));
        QVERIFY(w.context()->plan() != nullptr);
        QVERIFY(findAction(w, "Distributed &run…")->isEnabled());
        auto* arenas = w.centralWidget()->findChild<QComboBox*>();
        QVERIFY(arenas != nullptr && arenas->count() > 0);
        const QString path = writeNothingForced();
        QVERIFY(openAndWait(w, path));
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QVERIFY(w.context()->plan() == nullptr);
        QCOMPARE(w.context()->eventCount(), uint64_t(0));
        for (const char* field : {"model", "strategy", "hash"})
            QVERIFY2(w.studioStatusBar()->field(field)->text().isEmpty(), field);
        QVERIFY2(w.lazyState()->eventLabel()->text().contains("no events"),
                 qPrintable(w.lazyState()->eventLabel()->text()));
        QVERIFY(w.statusBar()->currentMessage().contains("nothing-forced: 0 events"));
        // Nothing acts on the model shown before: the arena selector and the actions for it go,
        // and Re-plan runs the program again rather than planning that model.
        QVERIFY(arenas->isHidden());
        QCOMPARE(arenas->count(), 0);
        for (const char* action : {"Distributed &run…", "Run &iterations…", "&Dimensions…"})
            QVERIFY2(!findAction(w, action)->isEnabled(), action);
        QCOMPARE(w.modelPath(), path);
        w.statusBar()->clearMessage();
        w.replan();
        QVERIFY(waitIdle(w));
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QVERIFY(w.context()->plan() == nullptr);
        QVERIFY2(w.statusBar()->currentMessage().contains("nothing-forced: 0 events"),
                 qPrintable(w.statusBar()->currentMessage()));
        QSignalSpy exported(w.sessions(), &SessionActions::exportFinished);
        w.sessions()->exportCurrent(dir_.filePath("none.json"), sessions::ExportFormat::Json);
        QVERIFY(exported.wait(10000));
        QCOMPARE(exported.front().front().toBool(), false);
        QVERIFY2(w.sessions()->lastMessage().contains("no plan is shown"),
                 qPrintable(w.sessions()->lastMessage()));
    }

    // With recording on, a program the studio runs is recorded as a lazy trace; the Lazy traces
    // panel lists it, and Replay runs it again from the stored text, shows it and says whether
    // it matches. A row whose program was edited behind tmmu's back replays to another trace:
    // the panel says so and where the traces part.
    void recordedTracesAreListedAndReplayed() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.sessions()->openStore(dir_.path() + QStringLiteral("/lazy.db")));
        LazyTracesPanel* panel = w.lazyTraces();
        QVERIFY(waitIdle(w));
        QCOMPARE(panel->tracesBox()->count(), 0);
        QVERIFY(!panel->replayButton()->isEnabled());
        QVERIFY(openAndWait(w, program("mlp-training")));
        QVERIFY(waitIdle(w));
        QVERIFY2(w.statusBar()->currentMessage().contains("recorded as lazy trace 1"),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(openAndWait(w, program("shared-base")));
        QVERIFY(waitIdle(w));
        QCOMPARE(panel->tracesBox()->count(), 2);
        QVERIFY2(panel->tracesBox()->itemText(1).startsWith("#1 mlp-training · 1248 events · ok"),
                 qPrintable(panel->tracesBox()->itemText(1)));
        panel->tracesBox()->setCurrentIndex(1);
        QVERIFY2(panel->summaryText().contains("lazy, checkpoint policy recompute, compiled"),
                 qPrintable(panel->summaryText()));

        panel->replayButton()->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.tokenGraph()->view()->trace()->events.size(), size_t(1248));
        QVERIFY2(
            panel->summaryText().contains("replay of lazy trace 1: identical: the same trace hash"),
            qPrintable(panel->summaryText()));
        QVERIFY(w.statusBar()->currentMessage().startsWith("Lazy trace 1 replayed: identical"));

        char* error = nullptr;
        QCOMPARE(sqlite3_exec(w.sessions()->store()->handle(),
                              "UPDATE lazy_traces SET program_text = replace(program_text, "
                              "'\"op\": \"relu\"', '\"op\": \"tanh\"') WHERE id = 1",
                              nullptr, nullptr, &error),
                 SQLITE_OK);
        panel->replayButton()->click();
        QVERIFY(waitIdle(w));
        const QString report = panel->summaryText();
        QVERIFY2(report.contains("replay of lazy trace 1: DIFFERENT: the trace hashes differ") &&
                     report.contains("changed after recording") &&
                     report.contains("first difference: event ") && report.contains("\"relu\""),
                 qPrintable(report));
    }

    // A replayed trace runs its stored text: Re-plan does not run the file it was recorded
    // from, which may have changed since.
    void aReplayedTraceWithoutBuffersLeavesNothingToReplan() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.sessions()->openStore(dir_.path() + QStringLiteral("/nothing.db")));
        QVERIFY(openAndWait(w, writeNothingForced()));
        QVERIFY(waitIdle(w));
        w.lazyTraces()->tracesBox()->setCurrentIndex(0);
        w.lazyTraces()->replayButton()->click();
        QVERIFY(waitIdle(w));
        QVERIFY2(w.statusBar()->currentMessage().startsWith("Lazy trace 1 replayed: identical"),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(w.modelPath().isEmpty());
        QSignalSpy started(w.jobs(), &JobRunner::jobStarted);
        w.replan();
        QVERIFY(waitIdle(w));
        QCOMPARE(started.count(), 0);
        QVERIFY(w.lastFailure().isEmpty());
        QVERIFY2(w.statusBar()->currentMessage().startsWith("Nothing to re-plan: a replayed lazy "
                                                            "trace runs its stored program"),
                 qPrintable(w.statusBar()->currentMessage()));
    }

    // A database that cannot take the recording (here: a folder now stands where its file was)
    // costs the recording, never the run: the trace is shown and the status bar says it was not
    // recorded.
    void aFailedRecordingKeepsTheRun() {
        MainWindow w;
        w.setPersistSettings(false);
        const QString folder = dir_.path() + QStringLiteral("/gone");
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(w.sessions()->openStore(folder + QStringLiteral("/lazy.db")));
        QVERIFY(waitIdle(w));
        QVERIFY(QDir(folder).removeRecursively());
        QVERIFY(QDir().mkpath(folder + QStringLiteral("/lazy.db")));
        QVERIFY(openAndWait(w, program("shared-base")));
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QVERIFY(w.tokenGraph()->view()->trace() != nullptr);
        QVERIFY2(w.statusBar()->currentMessage().contains("NOT recorded: "),
                 qPrintable(w.statusBar()->currentMessage()));
    }

    void aModelStillOpensAsAModel() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(openAndWait(
            w, QStringLiteral(TMMU_SOURCE_DIR "/resources/models/examples/linear_chain.json")));
        QVERIFY(w.context()->plan() != nullptr);
        QCOMPARE(w.context()->eventAxis().label(), QStringLiteral("step"));
    }
};

QTEST_MAIN(TestLazyProgram)
#include "test_lazy_program.moc"
