// The studio's sessions: every planning run recorded in a temporary database, listed in the
// Sessions panel, opened without re-planning, renamed / annotated / deleted through the panel's
// own code paths, replayed, compared, exported; opening, replaying, comparing and exporting run
// on the studio's worker, never on the UI thread; a foreign database file is reported and left
// byte-for-byte untouched while the studio keeps working.
#include "context/plan_context.h"
#include "encoding/sha256.h"
#include "iterations_dialog.h"
#include "job_runner.h"
#include "main_window.h"
#include "models/session_list_model.h"
#include "panels/session_compare_panel.h"
#include "panels/sessions_panel.h"
#include "plan/strategy.h"
#include "planning_controls.h"
#include "session_actions.h"
#include "session_store.h"
#include "studio_app.h"
#include "studio_options.h"
#include "studio_status_bar.h"
#include "studio_test_util.h"
#include "style/palette.h"
#include "test_support.h"

#include <QAction>
#include <QChart>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <mutex>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

// Plans the default model (small request) with a strategy; returns the recorded session id.
int64_t planAndRecord(MainWindow& w, const std::string& strategy) {
    if (!waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(strategy), false); }))
        return 0;
    waitIdle(w);
    return w.sessions()->currentSession();
}

template <class T>
T* waitForDialog(QWidget* parent, const char* name) {
    T* found = nullptr;
    // The caller checks the pointer, which says more than the wait's result.
    (void)QTest::qWaitFor([&] { return (found = parent->findChild<T*>(name)) != nullptr; }, 2000);
    return found;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Runs one of SessionActions' jobs and waits for the signal that ends it; returns its first
// argument (ok, or the session id for openFinished).
template <class Signal>
QList<QVariant> runAndWait(MainWindow& w, Signal signal, const std::function<void()>& start) {
    QSignalSpy done(w.sessions(), signal);
    start();
    if (!done.wait(30000)) return {};
    return done.takeFirst();
}

bool exportAndWait(MainWindow& w, const QString& path, sessions::ExportFormat format) {
    QList<QVariant> r = runAndWait(w, &SessionActions::exportFinished,
                                   [&] { w.sessions()->exportCurrent(path, format); });
    return !r.isEmpty() && r.at(0).toBool();
}

} // namespace

class TestSessions : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QTemporaryDir settingsDir_;
    int dbCounter_ = 0;

    QString freshDb() { return dir_.path() + QStringLiteral("/s%1.db").arg(++dbCounter_); }

  private slots:
    void initTestCase() { isolateSettings(settingsDir_.path()); }
    void init() { QSettings().clear(); }

    void parsesTheSessionsOption() {
        StudioOptions o = parse_studio_options({"--sessions", "/tmp/x.db"});
        QCOMPARE(o.sessions, QStringLiteral("/tmp/x.db"));
        QVERIFY(parse_studio_options({}).sessions.isEmpty());
        QCOMPARE(parse_studio_options({"--open-session", "3"}).session, qint64(3));
        TMMU_EXPECT_FAILURE(parse_studio_options({"m.json", "--open-session", "3"}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--open-session", "x"}),
                            FailureCode::InvalidArgument);
    }

    // `tmmu-studio --open-session ID --screenshot FILE`: the stored plan, drawn as stored; a
    // missing session is an error naming it, and no PNG is written.
    void screenshotOfARecordedSession() {
        const QString db = freshDb();
        int64_t id = 0;
        std::string hash;
        {
            MainWindow w;
            QVERIFY(w.sessions()->openStore(db));
            id = planAndRecord(w, "slots");
            QVERIFY(id > 0);
            hash = to_hex(w.context()->plan()->plan_hash);
        }
        MainWindow w;
        w.sessions()->setRecording(false);
        QVERIFY(w.sessions()->openStore(db));
        QVERIFY(waitIdle(w)); // the Run and Lazy traces tabs list what the database holds
        const QString png = dir_.path() + "/session.png";
        QSignalSpy started(w.jobs(), &JobRunner::jobStarted);
        QCOMPARE(render_session_screenshot(w, id, {.file = png}), QString());
        // The open, then the strategy comparison beside the stored plan (issue 17: opening a
        // session fills it); the shown plan stays the stored one.
        QCOMPARE(started.count(), 2);
        QCOMPARE(started.at(0).at(0).toString(), QStringLiteral("Opening session %1").arg(id));
        QCOMPARE(started.at(1).at(0).toString(), QStringLiteral("Comparing strategies"));
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), hash);
        QCOMPARE(QImage(png).size(), QSize(1600, 1000));
        QCOMPARE(w.jobs()->busy(), false); // the screenshot waited for both
        QCOMPARE(w.strategyChart()->results().size(), all_strategies().size());
        const QString missing = dir_.path() + "/missing.png";
        QString error = render_session_screenshot(w, id + 10, {.file = missing});
        QVERIFY2(error.contains("no such session"), qPrintable(error));
        QVERIFY(!QFile::exists(missing));
        QCOMPARE(w.sessions()->store()->count(), size_t(1)); // nothing recorded
    }

    void withoutAStoreNothingIsRecorded() {
        MainWindow w;
        QVERIFY(!w.sessions()->store());
        QVERIFY(!w.sessions()->recordAction()->isEnabled());
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QCOMPARE(w.sessions()->currentSession(), 0);
        QVERIFY(w.sessions()->panel()->statusText().contains("no sessions database"));
        QVERIFY(w.dock("sessionsDock"));
        QVERIFY(w.dock("sessionCompareDock"));
        waitIdle(w);
    }

    void recordsRunsAndOpensThemWithoutReplanning() {
        MainWindow w;
        const QString db = freshDb();
        QVERIFY(w.sessions()->openStore(db));
        const int64_t first = planAndRecord(w, "slots");
        QVERIFY(first > 0);
        qInfo("recording a GPT-2 (batch 1, seq 64) run: %.1f ms", w.sessions()->lastRecordMs());
        const std::string firstHash = to_hex(w.context()->plan()->plan_hash);
        const int64_t second = planAndRecord(w, "greedy-size");
        QVERIFY(second > first);
        QCOMPARE(w.sessions()->store()->count(), size_t(2));

        views::SessionsPanel* panel = w.sessions()->panel();
        QCOMPARE(panel->model()->rowCount(), 2);
        const sessions::SessionSummary& listed =
            panel->model()->summary(panel->model()->rowOf(first));
        QCOMPARE(listed.plan_hash, firstHash);
        QCOMPARE(listed.strategy, std::string("slots"));
        QCOMPARE(panel->currentSession(), second);

        // Open through the panel: the stored plan is shown, nothing is planned.
        QSignalSpy started(w.jobs(), &JobRunner::jobStarted);
        panel->selectSession(first);
        QElapsedTimer t;
        t.start();
        QList<QVariant> opened =
            runAndWait(w, &SessionActions::openFinished, [&] { panel->openSelected(); });
        qInfo("opening a recorded GPT-2 session: %lld ms", t.elapsed());
        QCOMPARE(opened, (QList<QVariant>{qint64(first), true}));
        QVERIFY(waitIdle(w));
        // The open itself, then the strategy comparison; the shown plan is not planned again.
        QCOMPARE(started.count(), 2);
        QCOMPARE(started.at(0).at(0).toString(), QStringLiteral("Opening session %1").arg(first));
        QCOMPARE(started.at(1).at(0).toString(), QStringLiteral("Comparing strategies"));
        QVERIFY(!w.strategyChart()->results().empty());
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), firstHash);
        QCOMPARE(w.studioStatusBar()->field("hash")->text(),
                 QString::fromStdString(firstHash).left(
                     w.studioStatusBar()->field("hash")->text().size()));
        QVERIFY(w.studioStatusBar()->field("hash")->text().size() >= 8);
        QCOMPARE(w.sessions()->currentSession(), first);
        QCOMPARE(w.controls()->settings().strategy, std::string("slots"));
        QCOMPARE(w.sessions()->store()->count(), size_t(2)); // opening records nothing
    }

    // A session's arena settings come back to the toolbar when it is opened: the arena whose
    // alignment differs from the others keeps it as its own setting, so Re-plan plans alike,
    // and an alignment the Align list does not offer is added to it; a page size comes back.
    void openingASessionRestoresItsArenaSettings() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        PlanSettings settings = smallSettings("slots");
        settings.alignment = 2048;
        settings.arenas =
            parse_arena_settings("parameters=:4KiB, activations=1GiB, gradients=::2MiB");
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        QVERIFY(waitIdle(w));
        const int64_t id = w.sessions()->currentSession();
        QVERIFY(id > 0);
        const Plan& planned = *w.context()->plan();
        const Digest recorded = planned.plan_hash; // `planned` goes when the session opens
        QCOMPARE(planned.arenas[0].config.alignment, uint64_t(4096));
        for (const PlannedTensor& t : planned.tensors)
            if (t.arena == 0) QCOMPARE(t.offset % 4096, uint64_t(0));
        w.controls()->setSettings(smallSettings());
        runAndWait(w, &SessionActions::openFinished, [&] { w.sessions()->openSession(id); });
        QVERIFY(waitIdle(w));
        const PlanSettings shown = w.controls()->settings();
        QCOMPARE(shown.alignment, uint64_t(2048));
        QCOMPARE(w.controls()->alignmentBox()->currentText(), QString("2048"));
        QCOMPARE(format_arena_settings(shown.arenas),
                 std::string("parameters=:4KiB, activations=1GiB, gradients=::2MiB"));
        w.sessions()->setRecording(false);
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), to_hex(recorded));
    }

    // A session recorded with routes opens with them in the Routes field, and with a setting
    // for every arena it added, so Re-plan accepts the settings that name a routed arena and
    // creates the same arenas in the same order: the same plan hash. Arenas made by routes in
    // an order their roles do not have, and made by settings before routes made others.
    void openingASessionRestoresItsRoutes() {
        struct Case {
            const char* arenas;
            const char* routes;
            std::vector<std::string> planned;
            const char* shownArenas;
            const char* shownRoutes;
        };
        const Case cases[] = {{"activations=1GiB:256",
                               "gradient=grads, input=late, optimizer_state=parameters",
                               {"parameters", "activations", "grads", "late"},
                               "activations=1GiB:256, grads=:128, late=:128",
                               "optimizer_state=parameters, gradient=grads, input=late"},
                              {"late=:128, grads=1GiB",
                               "gradient=grads, input=late",
                               {"parameters", "activations", "optimizer", "late", "grads"},
                               "late=:128, grads=1GiB",
                               "input=late, gradient=grads"}};
        for (const Case& c : cases) {
            MainWindow w;
            QVERIFY(w.sessions()->openStore(freshDb()));
            PlanSettings settings = smallSettings("slots");
            settings.arenas = parse_arena_settings(c.arenas);
            settings.routes = parse_routes(c.routes);
            QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
            QVERIFY(waitIdle(w));
            const int64_t id = w.sessions()->currentSession();
            QVERIFY(id > 0);
            const Digest recorded = w.context()->plan()->plan_hash;
            std::vector<std::string> names;
            for (const ArenaPlan& a : w.context()->plan()->arenas)
                names.push_back(a.config.name);
            QCOMPARE(names, c.planned);

            w.controls()->setSettings(smallSettings());
            runAndWait(w, &SessionActions::openFinished, [&] { w.sessions()->openSession(id); });
            QVERIFY(waitIdle(w));
            QCOMPARE(w.controls()->routesEdit()->text(), QString(c.shownRoutes));
            QCOMPARE(w.controls()->arenasEdit()->text(), QString(c.shownArenas));
            w.sessions()->setRecording(false);
            QVERIFY(waitForPlan(w, [&] { w.replan(); }));
            QCOMPARE(to_hex(w.context()->plan()->plan_hash), to_hex(recorded));
        }
    }

    // A rank's plan: the toolbar keeps its rank and sharding (Re-plan's tooltip says them),
    // a session brings them back, and re-planning gives the recorded hash.
    void openingAShardedSessionRestoresItsRank() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        PlanSettings settings = smallSettings("slots");
        settings.shard = ShardSpec{4, 1, {Role::Parameter, Role::OptimizerState}};
        w.controls()->setSettings(settings);
        QVERIFY(w.controls()->replanButton()->toolTip().contains(
            "for rank 1 of 4, sharding parameter and optimizer_state"));
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        QVERIFY(waitIdle(w));
        const int64_t id = w.sessions()->currentSession();
        QVERIFY(id > 0);
        const Digest recorded = w.context()->plan()->plan_hash;
        QCOMPARE(w.context()->plan()->shard, settings.shard);
        QLabel* mode = w.studioStatusBar()->field("mode");
        QCOMPARE(mode->text(), QString("training, rank 1/4"));
        QVERIFY2(mode->toolTip().contains("all_gathers of sharded parameters"),
                 qPrintable(mode->toolTip()));

        w.controls()->setSettings(smallSettings());
        QVERIFY(w.controls()->settings().shard.single_rank());
        runAndWait(w, &SessionActions::openFinished, [&] { w.sessions()->openSession(id); });
        QVERIFY(waitIdle(w));
        QCOMPARE(w.controls()->settings().shard, settings.shard);
        w.sessions()->setRecording(false);
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), to_hex(recorded));
        // A problem has no ranks: its re-plan leaves them for the next graph.
        QVERIFY(make_options(w.controls()->settings(), ModelKind::DsaCsv).shard.single_rank());
    }

    void renamesAnnotatesAndDeletesThroughThePanel() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t a = planAndRecord(w, "slots");
        const int64_t b = planAndRecord(w, "greedy-size");
        views::SessionsPanel* panel = w.sessions()->panel();
        sessions::SessionStore& store = *w.sessions()->store();

        panel->selectSession(a);
        panel->renameSelected();
        auto* rename = waitForDialog<QInputDialog>(panel, "renameDialog");
        QVERIFY(rename);
        rename->setTextValue(QStringLiteral("baseline"));
        rename->accept();
        QCOMPARE(store.load(a).summary.title, std::string("baseline"));
        QCOMPARE(
            panel->model()->text(panel->model()->rowOf(a), views::SessionListModel::TitleColumn),
            QStringLiteral("baseline"));

        panel->selectSession(a);
        panel->editSelected();
        auto* editor = waitForDialog<QDialog>(panel, "editSessionDialog");
        QVERIFY(editor);
        editor->findChild<QPlainTextEdit*>("notesEdit")->setPlainText(QStringLiteral("why: demo"));
        editor->findChild<QLineEdit*>("tagsEdit")->setText(QStringLiteral("demo, gpt2"));
        editor->accept();
        sessions::Session edited = store.load(a);
        QCOMPARE(edited.notes, std::string("why: demo"));
        QCOMPARE(edited.summary.tags, (std::vector<std::string>{"demo", "gpt2"}));
        panel->setSearch(QStringLiteral("demo"));
        QCOMPARE(panel->model()->rowCount(), 1);
        panel->setSearch(QString());

        panel->selectSession(b);
        panel->deleteSelected();
        auto* box = waitForDialog<QMessageBox>(panel, "confirmDeleteBox");
        QVERIFY(box);
        box->button(QMessageBox::Yes)->click();
        QCOMPARE(store.count(), size_t(1));
        QCOMPARE(panel->model()->rowCount(), 1);
        QCOMPARE(w.sessions()->currentSession(), 0); // the shown run is no longer a session
    }

    void replayIsIdentical() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t id = planAndRecord(w, "auto");
        QSignalSpy done(w.sessions(), &SessionActions::replayFinished);
        w.sessions()->panel()->selectSession(id);
        w.sessions()->panel()->replaySelected();
        QVERIFY(w.sessions()->replayBusy()); // off the UI thread
        QVERIFY(done.wait(30000));
        QCOMPARE(done.at(0).at(0).toBool(), true);
        QCOMPARE(done.at(0).at(1).toBool(), true);
        views::SessionComparePanel* compare = w.sessions()->comparePanel();
        QVERIFY(compare->comparison().identical);
        QVERIFY(compare->headline().contains("Identical"));
        QVERIFY(compare->comparison().moved.empty());
        QVERIFY(w.sessions()->lastMessage().contains("identical"));
        QTRY_VERIFY(!w.sessions()->replayBusy());
    }

    // Plan > Run iterations records its run with the iterations, and replay runs them again.
    void iterationRunsAreRecordedWithTheirIterations() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        settings.bindings.dims = {{"seq", 256}};
        w.controls()->setSettings(settings);
        const QString model =
            QStringLiteral(TMMU_SOURCE_DIR) + "/resources/models/examples/dynamic_seq.json";
        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        const int64_t single = w.sessions()->currentSession();
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("seq=128\nseq=1024");
        QVERIFY(waitForPlan(w, [&] { w.iterationsDialog()->accept(); }));
        QVERIFY(waitIdle(w));
        const int64_t id = w.sessions()->currentSession();
        QVERIFY(id > single);
        sessions::SessionStore store(w.sessions()->store()->path());
        QVERIFY(!store.load(single).input.iterations);
        const sessions::Session s = store.load(id);
        QVERIFY2(!s.altered, s.altered_reason.c_str());
        QVERIFY(s.input.iterations.has_value());
        QCOMPARE(s.input.iterations->start, (DimBinding{{"batch", 1}, {"seq", 256}}));
        QCOMPARE(s.input.iterations->decided.size(), size_t(2));
        QVERIFY(s.input.iterations->decided[1].replanned);
        QCOMPARE(s.summary.plan_hash, to_hex(w.context()->plan()->plan_hash));
        const QList<QVariant> replayed = runAndWait(w, &SessionActions::replayFinished,
                                                    [&] { w.sessions()->replaySession(id); });
        QCOMPARE(replayed, (QList<QVariant>{true, true}));
        QVERIFY2(
            w.sessions()->lastMessage().contains("2 iterations decided as recorded (1 replan)"),
            qPrintable(w.sessions()->lastMessage()));
        // Opening it says which run the plan ended.
        QCOMPARE(
            runAndWait(w, &SessionActions::openFinished, [&] { w.sessions()->openSession(id); }),
            (QList<QVariant>{qint64(id), true}));
        QVERIFY2(w.sessions()->lastMessage().endsWith(
                     "the plan in force after 2 iterations from batch=1, seq=256, 1 replan"),
                 qPrintable(w.sessions()->lastMessage()));
        QVERIFY(waitIdle(w));
        // Its JSON export carries the history, and opening the file says so too.
        const QString json = dir_.path() + QStringLiteral("/iterations.json");
        QVERIFY2(exportAndWait(w, json, sessions::ExportFormat::Json),
                 qPrintable(w.sessions()->lastMessage()));
        MainWindow viewer;
        QVERIFY(waitForPlan(viewer, [&] { viewer.openModel(json); }));
        QVERIFY2(viewer.studioStatusBar()->currentMessage().endsWith(
                     "as exported: the plan in force after 2 iterations from batch=1, seq=256, "
                     "1 replan"),
                 qPrintable(viewer.studioStatusBar()->currentMessage()));
        // Re-plan makes a single plan again: its session has no iterations.
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QVERIFY(waitIdle(w));
        const int64_t again = w.sessions()->currentSession();
        QVERIFY(!store.load(again).input.iterations);
        // The same plan, reached once: comparing says so and how each session reached it.
        QCOMPARE(runAndWait(w, &SessionActions::compareFinished,
                            [&] { w.sessions()->compareSessions(id, again); }),
                 QList<QVariant>{true});
        QVERIFY2(w.sessions()->lastMessage().endsWith(
                     "identical plans; iterations 2 iterations from batch=1, seq=256, 1 replan → "
                     "one plan, no iterations"),
                 qPrintable(w.sessions()->lastMessage()));
        const QString headline = w.sessions()->comparePanel()->headline();
        QVERIFY2(headline.contains("<b>Identical</b>") &&
                     headline.contains("<b>History</b>: iterations 2 iterations from batch=1, "
                                       "seq=256, 1 replan → one plan, no iterations."),
                 qPrintable(headline));
    }

    void comparesTwoSessions() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t a = planAndRecord(w, "slots");
        const int64_t b = planAndRecord(w, "greedy-size");
        views::SessionsPanel* panel = w.sessions()->panel();
        panel->table()->selectAll();
        QList<QVariant> done =
            runAndWait(w, &SessionActions::compareFinished, [&] { panel->compareSelected(); });
        QCOMPARE(done.value(0).toBool(), true);
        views::SessionComparePanel* compare = w.sessions()->comparePanel();
        const sessions::PlanComparison& c = compare->comparison();
        QVERIFY(!c.identical);
        bool anyChanged = false;
        for (const sessions::ArenaDelta& d : c.arenas)
            anyChanged |= d.changed();
        QVERIFY(anyChanged);
        QVERIFY(!c.moved.empty());
        QCOMPARE(compare->arenaTable()->rowCount(), int(c.arenas.size()));
        QCOMPARE(compare->movedTable()->model()->rowCount(), int(c.moved.size()));
        // Moved tensors by name (GPT-2's names, e.g. h0.attn.probs), their ids in the tooltip.
        const QAbstractItemModel* moves = compare->movedTable()->model();
        for (int row = 0; row < moves->rowCount(); ++row) {
            const QString name = moves->index(row, 0).data().toString();
            QCOMPARE(name, QString::fromStdString(c.moved[size_t(row)].name));
            QVERIFY2(!name.isEmpty() && !name.startsWith(QStringLiteral("t0")), qPrintable(name));
            QVERIFY(moves->index(row, 0)
                        .data(Qt::ToolTipRole)
                        .toString()
                        .contains(QString::fromStdString(c.moved[size_t(row)].id)));
        }
        QVERIFY(compare->headline().contains(QStringLiteral("session %1").arg(a)));
        QVERIFY(compare->headline().contains(QStringLiteral("session %1").arg(b)));
        // The settings behind the two hashes: the strategy asked for.
        QVERIFY2(compare->headline().contains(QStringLiteral("<b>Settings</b>: strategy slots → "
                                                             "greedy-size")),
                 qPrintable(compare->headline()));
        // The overlay: live bytes and high-water of both plans.
        QCOMPARE(compare->chart()->series().size(), 4);
        compare->setArena(QStringLiteral("activations"));
        QCOMPARE(compare->arena(), QStringLiteral("activations"));
        QCOMPARE(compare->chart()->series().size(), 4);
    }

    // Two plans of different inputs (the same config at two sequence lengths): the compare
    // view says so above its deltas; plans of the same model do not get the note.
    void compareSaysWhenTheModelsDiffer() {
        MainWindow w;
        w.resize(1280, 800);
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t a = planAndRecord(w, "slots");
        PlanSettings longer = smallSettings("slots");
        longer.seq = 128;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), longer, false); }));
        waitIdle(w);
        const int64_t b = w.sessions()->currentSession();
        const int64_t c = planAndRecord(w, "greedy-size");
        QVERIFY(a > 0 && b > a && c > b);
        w.show();
        auto headline = [&](int64_t x, int64_t y) {
            runAndWait(w, &SessionActions::compareFinished,
                       [&] { w.sessions()->compareSessions(x, y); });
            return w.sessions()->comparePanel()->headline();
        };
        const QString differ = headline(a, b);
        QVERIFY2(differ.contains("the model differs") && differ.contains("gpt2-small.json"),
                 qPrintable(differ));
        QString dir = qEnvironmentVariable("TMMU_SHOT_DIR", dir_.path());
        QTest::qWait(100);
        QVERIFY(w.dock("sessionCompareDock")->grab().save(dir + "/session-compare-models.png"));
        const QString same = headline(a, c);
        QVERIFY2(!same.contains("model differs") && !same.contains("different models") &&
                     same.contains("placed differently"),
                 qPrintable(same));
    }

    // Offscreen grabs of the Sessions dock and the compare view (written to $TMMU_SHOT_DIR when
    // set, for people to look at): both plans' curves are drawn in the palette's colours.
    void sessionsAndCompareViewsAreDrawn() {
        MainWindow w;
        w.resize(1600, 1000);
        QVERIFY(w.sessions()->openStore(freshDb()));
        planAndRecord(w, "slots");
        planAndRecord(w, "greedy-size");
        w.show();
        w.dock("sessionsDock")->raise();
        w.sessions()->panel()->table()->selectAll();
        QList<QVariant> done = runAndWait(w, &SessionActions::compareFinished,
                                          [&] { w.sessions()->panel()->compareSelected(); });
        QCOMPARE(done.value(0).toBool(), true);
        QTest::qWait(200);
        QString dir = qEnvironmentVariable("TMMU_SHOT_DIR", dir_.path());
        QImage panel = w.dock("sessionsDock")->grab().toImage();
        QImage compare = w.dock("sessionCompareDock")->grab().toImage();
        QVERIFY(panel.save(dir + "/sessions-dock.png"));
        QVERIFY(compare.save(dir + "/session-compare.png"));
        QVERIFY(w.dock("sessionCompareDock")->isVisible());
        // Peaks are right-aligned: a column the viewport cuts shows "40.50" without its unit, so
        // the default dock shows every column up to the peak whole.
        QTableView* table = w.sessions()->panel()->table();
        const QHeaderView* header = table->horizontalHeader();
        const int peak = views::SessionListModel::PeakColumn;
        const int peakEnd = header->sectionViewportPosition(peak) + header->sectionSize(peak);
        QVERIFY2(peakEnd <= table->viewport()->width(),
                 qPrintable(QStringLiteral("peak ends at %1 of %2 px")
                                .arg(peakEnd)
                                .arg(table->viewport()->width())));
        // The key wraps with the dock instead of cutting names ("A hig…").
        auto* key = w.findChild<QLabel*>("compareLegend");
        QVERIFY(key && key->isVisible() && key->wordWrap());
        for (const char* series :
             {"A&nbsp;live", "A&nbsp;high&#8209;water", "B&nbsp;live", "B&nbsp;high&#8209;water"})
            QVERIFY2(key->text().contains(series), series);
        auto count = [](const QImage& image, QColor c) {
            int n = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x) {
                    QColor p = image.pixelColor(x, y);
                    n += std::abs(p.red() - c.red()) + std::abs(p.green() - c.green()) +
                             std::abs(p.blue() - c.blue()) <
                         40;
                }
            return n;
        };
        views::ViewPalette palette = views::ViewPalette::fromApplication();
        // Live bytes do not depend on the strategy: B's dashed line covers A's (drawn first).
        QVERIFY(count(compare, palette.slot(0)) > 20);  // A high-water (mostly under B)
        QVERIFY(count(compare, palette.slot(1)) > 100); // B live
        QVERIFY(count(compare, palette.slot(5)) > 100); // B high-water
    }

    void recordingCanBeTurnedOff() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        w.sessions()->setRecording(false);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        waitIdle(w);
        QCOMPARE(w.sessions()->store()->count(), size_t(0));
        QCOMPARE(w.sessions()->currentSession(), 0);
    }

    void foreignDatabaseIsLeftAlone() {
        const QString path = dir_.path() + QStringLiteral("/foreign.db");
        QByteArray bytes("this is somebody else's file, not a TMMU sessions database\n");
        bytes.append(4096, 'x');
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bytes);
        }
        MainWindow w;
        QVERIFY(!w.sessions()->openStore(path));
        QVERIFY(!w.sessions()->storeError().isEmpty());
        QVERIFY(w.sessions()->lastMessage().contains("not recorded"));
        QVERIFY(w.sessions()->panel()->statusText().contains("unavailable"));
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QVERIFY(w.context()->plan());
        waitIdle(w);
        // Said again once after the first plan cleared the status bar.
        QVERIFY(w.statusBar()->currentMessage().contains("not recorded"));
        QCOMPARE(readAll(path), bytes);
    }

    void exportsTheShownPlan() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        planAndRecord(w, "auto");
        const QString csv = dir_.path() + QStringLiteral("/recorded.csv");
        QVERIFY2(exportAndWait(w, csv, sessions::ExportFormat::Csv),
                 qPrintable(w.sessions()->lastMessage()));
        QVERIFY(readAll(csv).size() > 100);
        // Not recorded: exported from the plan on screen.
        w.sessions()->setRecording(false);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        waitIdle(w);
        QCOMPARE(w.sessions()->currentSession(), 0);
        const QString json = dir_.path() + QStringLiteral("/unrecorded.json");
        QVERIFY2(exportAndWait(w, json, sessions::ExportFormat::Json),
                 qPrintable(w.sessions()->lastMessage()));
        QVERIFY(readAll(json).contains("activations"));
        // A failing export says why.
        QVERIFY(!exportAndWait(w, dir_.path() + "/no/such/dir/x.csv", sessions::ExportFormat::Csv));
        QVERIFY2(w.sessions()->lastMessage().startsWith("Export failed: IO_ERROR"),
                 qPrintable(w.sessions()->lastMessage()));
    }

    // A session exported as JSON opens as its plan (what a file manager does with the file):
    // the same tensors and hash, no strategies planned beside it, and Re-plan says why it
    // cannot plan it again instead of failing on the missing model.
    void exportedSessionOpensAsItsPlan() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.sessions()->openStore(freshDb()));
        planAndRecord(w, "auto");
        const std::shared_ptr<const Plan> recorded = w.context()->planPtr();
        const QString json = dir_.path() + QStringLiteral("/exported.json");
        QVERIFY2(exportAndWait(w, json, sessions::ExportFormat::Json),
                 qPrintable(w.sessions()->lastMessage()));
        MainWindow viewer; // settings isolated (initTestCase): Open Recent may remember it
        QVERIFY(waitForPlan(viewer, [&] { viewer.openModel(json); }));
        const Plan& shown = *viewer.context()->plan();
        QCOMPARE(shown.plan_hash, recorded->plan_hash);
        QCOMPARE(shown.tensors.size(), recorded->tensors.size());
        QCOMPARE(shown.arenas.size(), recorded->arenas.size());
        QVERIFY(viewer.studioStatusBar()->currentMessage().contains("as exported"));
        QVERIFY(viewer.strategyChart()->results().empty());
        QVERIFY(viewer.recentFiles().contains(QFileInfo(json).absoluteFilePath()));
        // File > Export exports what is on screen: this plan has no model to export with, and
        // says so (it exported the session shown before it, or said no plan was shown).
        QVERIFY(!exportAndWait(viewer, dir_.path() + "/again.html", sessions::ExportFormat::Html));
        QVERIFY2(viewer.sessions()->lastMessage().contains("which holds a plan but not its model"),
                 qPrintable(viewer.sessions()->lastMessage()));
        viewer.replan();
        waitIdle(viewer);
        QVERIFY2(viewer.lastFailure().contains("holds a plan, not a model"),
                 qPrintable(viewer.lastFailure()));
        QCOMPARE(viewer.context()->plan()->plan_hash, recorded->plan_hash); // still shown
    }

    // Every store read (open, replay, compare, a recorded export) happens on the worker: the
    // probe records the thread of each connection the jobs open.
    void sessionJobsReadTheStoreOnTheWorker() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t a = planAndRecord(w, "slots");
        const int64_t b = planAndRecord(w, "greedy-size");
        std::mutex mutex;
        std::vector<QThread*> threads;
        w.sessions()->setStoreProbe([&] {
            std::lock_guard lock(mutex);
            threads.push_back(QThread::currentThread());
        });
        QCOMPARE(
            runAndWait(w, &SessionActions::openFinished, [&] { w.sessions()->openSession(a); }),
            (QList<QVariant>{qint64(a), true}));
        QCOMPARE(
            runAndWait(w, &SessionActions::replayFinished, [&] { w.sessions()->replaySession(a); })
                .value(0)
                .toBool(),
            true);
        QCOMPARE(runAndWait(w, &SessionActions::compareFinished,
                            [&] { w.sessions()->compareSessions(a, b); })
                     .value(0)
                     .toBool(),
                 true);
        QVERIFY(exportAndWait(w, dir_.path() + "/probe.csv", sessions::ExportFormat::Csv));
        QVERIFY(waitIdle(w));
        std::lock_guard lock(mutex);
        QCOMPARE(threads.size(), size_t(4)); // open, replay, compare (one connection), export
        for (QThread* t : threads) {
            QVERIFY(t != QThread::currentThread());
            QCOMPARE(t, w.jobs()->workerThread());
        }
    }

    // The export is written while the UI thread handles no events at all: only the worker can
    // have written it.
    void exportIsWrittenWhileTheUiThreadIsBlocked() {
        MainWindow w;
        w.sessions()->setRecording(false);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QVERIFY(waitIdle(w));
        const QString html = dir_.path() + QStringLiteral("/blocked.html");
        QSignalSpy done(w.sessions(), &SessionActions::exportFinished);
        w.sessions()->exportCurrent(html, sessions::ExportFormat::Html);
        QElapsedTimer t;
        t.start();
        while (!QFile::exists(html) && t.elapsed() < 30000)
            QThread::msleep(5); // no event processing here
        QVERIFY(QFile::exists(html));
        QCOMPARE(done.count(), 0); // the result waits for the UI thread
        QVERIFY(done.wait(30000));
        QCOMPARE(done.at(0).at(0).toBool(), true);
        QVERIFY(readAll(html).startsWith("<!DOCTYPE html>"));
    }

    // Opening a session replaces a planning job still running: the stored plan is what stays,
    // and the replaced job is no failure (nobody cancelled it).
    void openingASessionReplacesARunningPlan() {
        MainWindow w;
        QVERIFY(w.sessions()->openStore(freshDb()));
        const int64_t id = planAndRecord(w, "slots");
        const std::string hash = to_hex(w.context()->plan()->plan_hash);
        w.sessions()->setRecording(false);
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.openModel(default_model_path(), PlanSettings{}, false);
        w.sessions()->openSession(id);
        QVERIFY(waitIdle(w));
        QCOMPARE(failed.count(), 0);
        QVERIFY(w.lastFailure().isEmpty());
        QVERIFY2(!w.statusBar()->currentMessage().contains("cancelled"),
                 qPrintable(w.statusBar()->currentMessage()));
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), hash);
        QCOMPARE(w.sessions()->currentSession(), id);
        QCOMPARE(w.context()->plan()->strategy, std::string("slots"));
    }
};

QTEST_MAIN(TestSessions)
#include "test_sessions.moc"
