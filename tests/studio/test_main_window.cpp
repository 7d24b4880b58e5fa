// The studio's main window driven headless: default plan, re-planning, failures that keep the
// previous plan, cancellation (status bar, supersede, closing), step keys, drag and drop,
// settings round trip.
#include "about_text.h"
#include "apply/host_arenas.h"
#include "apply_dialog.h"
#include "build_info.h"
#include "charts/strategy_chart.h"
#include "context/plan_context.h"
#include "core/units.h"
#include "encoding/sha256.h"
#include "envelope_dialog.h"
#include "io/checkpoint.h"
#include "iterations_dialog.h"
#include "job_runner.h"
#include "main_window.h"
#include "panels/tensor_table_panel.h"
#include "plan/plan_summary.h"
#include "plan/strategy.h"
#include "planning_controls.h"
#include "shard_dialog.h"
#include "studio_app.h"
#include "studio_options.h"
#include "studio_status_bar.h"
#include "studio_test_util.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUrl>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

const QString kExamples = QStringLiteral(TMMU_SOURCE_DIR "/resources/models/examples");

void write_bytes(const QString& path, const std::vector<uint8_t>& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(reinterpret_cast<const char*>(bytes.data()), qint64(bytes.size()));
}

void write_text(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(text) == text.size());
}

QString statusText(MainWindow& w, const char* field) {
    return w.studioStatusBar()->field(field)->text();
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
    QTemporaryDir settingsDir_;

  private slots:
    void initTestCase() { isolateSettings(settingsDir_.path()); }
    void init() { QSettings().clear(); }

    // Help > About names the version, every optional part of the build (built, or why not) and
    // the devices each built backend found; the box is drawn for people to look at.
    void aboutNamesTheBuildAndItsDevices() {
        const QString text = aboutText();
        QVERIFY2(text.contains(QStringLiteral("TMMU Studio " TMMU_VERSION)), qPrintable(text));
        for (const app::BuildOption& o : app::build_options()) {
            const QString line = QString::fromStdString(o.name) +
                                 (o.built ? QStringLiteral(": built")
                                          : QStringLiteral(": not built (") +
                                                QString::fromStdString(o.why_not).toHtmlEscaped());
            QVERIFY2(text.contains(line), qPrintable(line + " in " + text));
        }
        QVERIFY2(text.contains(QStringLiteral("GUI: built")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("<b>CPU")) &&
                     text.contains(QStringLiteral("1 device")),
                 qPrintable(text)); // the host always runs the CPU backend
        MainWindow w;
        QAction* about = findAction(w, QStringLiteral("&About TMMU Studio"));
        QVERIFY(about);
        about->trigger();
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("aboutBox"));
        QVERIFY(box);
        QCOMPARE(box->text(), text);
        QTest::qWait(50);
        QVERIFY(box->grab().save(qEnvironmentVariable("TMMU_SHOT_DIR", QDir::tempPath()) +
                                 QStringLiteral("/about.png")));
    }

    void startsWithTheBundledDefaultPlan() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), PlanSettings{}, false); }));
        const Plan* plan = w.context()->plan();
        QVERIFY(plan);
        QCOMPARE(plan->mode, std::optional<Mode>(Mode::Training));
        QCOMPARE(plan->execution_order.size(), size_t(592)); // GPT-2 small, batch 8, seq 1024
        QCOMPARE(plan->tensors.size(), size_t(1483));
        QCOMPARE(statusText(w, "model"), QString("gpt2-small"));
        QCOMPARE(statusText(w, "mode"), QString("training"));
        QCOMPARE(statusText(w, "strategy"), QString("auto"));
        QString hex = QString::fromStdString(to_hex(plan->plan_hash));
        QCOMPARE(statusText(w, "hash"), hex.left(8));
        QVERIFY(w.studioStatusBar()->field("hash")->toolTip().contains(hex));
        QVERIFY(statusText(w, "height").contains("GiB"));
        const ArenaReuse reuse = plan_reuse(*plan);
        QVERIFY(reuse.saved_bytes > 0);
        const QString heightTip = w.studioStatusBar()->field("height")->toolTip();
        QVERIFY2(heightTip.contains(
                     QStringLiteral("Reuse saves %1 of the %2")
                         .arg(QString::fromStdString(format_bytes(reuse.saved_bytes)),
                              QString::fromStdString(format_bytes(reuse.isolated_bytes)))),
                 qPrintable(heightTip));
        QVERIFY2(heightTip.contains("Activation retention: " +
                                    QString::fromStdString(retention_text(*plan)) + "."),
                 qPrintable(heightTip));
        QVERIFY(heightTip.contains("held into the backward pass at step"));
        QVERIFY(statusText(w, "over").contains("over lower bound"));
        QVERIFY(w.studioStatusBar()->field("strategy")->toolTip().contains("activations"));
        QVERIFY(w.controls()->batchBox()->isEnabled()); // a transformer config
        QVERIFY(w.windowTitle().contains("gpt2-small"));
    }

    // Buffers that pad to their alignment sit above the lower bound, which counts no padding,
    // however they are placed: the status bar says how far the plan is from the least aligned
    // buffers allow, beside the plain figure (sessions store and compare that one).
    void overBoundSaysWhatAlignmentPads() {
        OffsetProblem p;
        for (int i = 0; i < 3; ++i)
            p.buffers.push_back(Buffer{.begin = 0, .end = 9, .size = 40, .alignment = 64});
        const Plan plan = plan_problem(p, {"a", "b", "c"}, {}, Progress{}, "padded");
        QCOMPARE(plan.arenas[0].metrics.peak_bytes, uint64_t(168)); // 64 + 64 + 40
        const studio::PlanSummary padded = studio::PlanSummary::of(plan, nullptr);
        QCOMPARE(padded.overBound, QString("+40.000% over lower bound (+0.000% over aligned)"));
        QVERIFY2(padded.overBoundTip.contains("no plan is below 168 B"),
                 qPrintable(padded.overBoundTip));
        p.buffers[0].alignment = p.buffers[1].alignment = p.buffers[2].alignment = 8;
        const Plan packed = plan_problem(p, {"a", "b", "c"}, {}, Progress{}, "packed");
        QCOMPARE(studio::PlanSummary::of(packed, nullptr).overBound,
                 QString("+0.000% over lower bound"));
    }

    void comparesEveryStrategyOffTheUiThread() {
        MainWindow w;
        QSignalSpy started(w.jobs(), &JobRunner::jobStarted);
        w.openModel(default_model_path(), smallSettings(), false);
        QVERIFY(waitIdle(w));
        // Planning, then the comparison as a job of its own on the worker.
        QCOMPARE(started.count(), 2);
        QCOMPARE(started.at(0).at(0).toString(), QString("Planning gpt2-small.json"));
        QCOMPARE(started.at(1).at(0).toString(), QString("Comparing strategies"));
        const auto& results = w.strategyChart()->results();
        QCOMPARE(results.size(), all_strategies().size());
        for (size_t i = 0; i < results.size(); ++i) {
            QCOMPARE(results[i].strategy, std::string(all_strategies()[i]->name()));
            QVERIFY(results[i].error.empty());
            QVERIFY(results[i].height >= results[i].lower_bound);
            QVERIFY(results[i].lower_bound > 0);
        }
    }

    void replanWithAnotherStrategyChangesTheStatusBar() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QCOMPARE(statusText(w, "strategy"), QString("auto"));
        auto first = w.context()->planPtr();
        w.controls()->strategyBox()->setCurrentText("slots");
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(statusText(w, "strategy"), QString("slots"));
        QVERIFY(w.context()->planPtr() != first);
        QCOMPARE(w.context()->plan()->strategy, std::string("slots"));
        QVERIFY(!w.studioStatusBar()->field("strategy")->toolTip().contains("ffd"));
        // Mode changes reload the generated graph.
        w.controls()->modeBox()->setCurrentText("inference");
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(statusText(w, "mode"), QString("inference"));
        QVERIFY(w.context()->plan()->execution_order.size() < first->execution_order.size());
    }

    void failingReplanKeepsThePreviousPlan() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        auto before = w.context()->planPtr();
        QString hash = statusText(w, "hash");
        w.controls()->arenasEdit()->setText("activations=1KiB");
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.replan();
        QVERIFY(failed.wait(30000));
        QVERIFY2(w.lastFailure().startsWith("ARENA_TOO_SMALL at "), qPrintable(w.lastFailure()));
        QVERIFY(w.lastFailure().contains("activations"));
        QCOMPARE(w.context()->planPtr(), before);
        QCOMPARE(statusText(w, "hash"), hash);
        QVERIFY(w.studioStatusBar()->currentMessage().contains("ARENA_TOO_SMALL"));
        auto* box = w.findChild<QMessageBox*>("failureBox");
        QVERIFY(box && box->isVisible());
        QVERIFY(box->text().contains("ARENA_TOO_SMALL"));
        box->close();
    }

    void badCapacityTextIsReportedWithoutPlanning() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        w.controls()->arenasEdit()->setText("activations");
        w.replan();
        QVERIFY(w.lastFailure().startsWith("INVALID_ARGUMENT"));
        w.controls()->arenasEdit()->setText("nosucharena=1GiB");
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.replan();
        QVERIFY(failed.wait(30000));
        QVERIFY2(w.lastFailure().contains("nosucharena"), qPrintable(w.lastFailure()));
        w.controls()->arenasEdit()->clear();
        w.controls()->routesEdit()->setText("gradients=activations");
        w.replan();
        QVERIFY2(w.lastFailure().startsWith("INVALID_ARGUMENT at routes"),
                 qPrintable(w.lastFailure()));
    }

    // The Routes field sends a role's tensors to another arena, a new one here, which the
    // Arenas field may then size.
    void routesSendARoleToItsOwnArena() {
        MainWindow w;
        w.controls()->setSettings(smallSettings());
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        w.controls()->routesEdit()->setText("gradient=grads");
        w.controls()->arenasEdit()->setText("grads=1GiB:4KiB");
        QVERIFY2(waitForPlan(w, [&] { w.replan(); }), qPrintable(w.lastFailure()));
        const Plan& plan = *w.context()->plan();
        // The default gradients arena is left empty, and a plan holds no empty arena.
        QCOMPARE(plan.arenas.size(), size_t(4));
        QCOMPARE(plan.arenas[3].config.name, std::string("grads"));
        QCOMPARE(plan.arenas[3].config.capacity, uint64_t(1) << 30);
        QCOMPARE(plan.arenas[3].config.alignment, uint64_t(4096));
        size_t gradients = 0;
        for (const PlannedTensor& t : plan.tensors)
            if (t.role == Role::Gradient) {
                QCOMPARE(t.arena, uint32_t(3));
                ++gradients;
            }
        QVERIFY(gradients > 0);
        QVERIFY(w.controls()->routesEdit()->isEnabled());
        w.controls()->setModelKind(ModelKind::DsaCsv); // a problem's buffers have no roles
        QVERIFY(!w.controls()->routesEdit()->isEnabled());
        // The greyed text waits for the next graph instead of failing a problem's re-plan.
        QVERIFY(w.controls()->settings().routes.empty());
        w.controls()->setModelKind(ModelKind::TransformerConfig);
        QCOMPARE(w.controls()->settings().routes.size(), size_t(1));
    }

    // Plan > Distributed run: the dialog shows the command line its fields make, refuses what
    // tmmu refuses with its message, and plans the rank it was given.
    void distributedRunDialogPlansARank() {
        MainWindow w;
        const PlanSettings settings = smallSettings();
        w.controls()->setSettings(settings);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        QVERIFY(waitIdle(w));
        w.editShard();
        ShardDialog* d = w.shardDialog();
        QVERIFY(d && d->isVisible());
        QVERIFY(d->commandLabel()->text().startsWith("One rank, nothing sharded"));
        QCOMPARE(d->roleBox(Role::Input), nullptr);
        d->worldSizeBox()->setValue(4);
        d->rankBox()->setValue(9); // beyond the world: held at its last rank
        QCOMPARE(d->rankBox()->value(), 3);
        d->roleBox(Role::Gradient)->setChecked(true);
        d->roleBox(Role::OptimizerState)->setChecked(true);
        QCOMPARE(d->commandLabel()->text(),
                 QString("As tmmu plan --world-size 4 --rank 3 --shard gradient,optimizer_state"));
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QCOMPARE(w.context()->plan()->shard,
                 (ShardSpec{4, 3, {Role::Gradient, Role::OptimizerState}}));
        QCOMPARE(w.studioStatusBar()->field("mode")->text(), QString("training, rank 3/4"));
        QVERIFY(waitIdle(w));

        // Sharding over one rank is refused as tmmu refuses it; the dialog stays open.
        w.editShard();
        d = w.shardDialog();
        QVERIFY(d->roleBox(Role::Gradient)->isChecked()); // it starts from the toolbar's
        d->worldSizeBox()->setValue(1);
        d->accept();
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text().contains("sharding over a single rank changes nothing"),
                 qPrintable(d->errorLabel()->text()));
        d->roleBox(Role::Gradient)->setChecked(false);
        d->roleBox(Role::OptimizerState)->setChecked(false);
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QVERIFY(w.context()->plan()->shard.single_rank());
        QCOMPARE(w.studioStatusBar()->field("mode")->text(), QString("training"));
    }

    // Plan > Apply to host memory: greyed until a plan is shown; the dialog shows what tmmu
    // plan --apply would be given and refuses what it refuses; Apply binds, fills and reads back
    // the plan on the worker and shows the state hash tmmu prints for the same plan and fill.
    void applyBindsThePlanOnScreen() {
        MainWindow w;
        QAction* action = findAction(w, "&Apply to host memory…");
        QVERIFY(action && !action->isEnabled());
        const QString model = kExamples + "/views_and_inplace.json";
        PlanSettings settings = smallSettings();
        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        QVERIFY(action->isEnabled());
        w.applyToHost();
        ApplyDialog* d = w.applyDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(d->commandLabel()->text(), QString("As tmmu plan --apply zero"));
        const uint64_t needed = HostArenas::bytes_needed(*w.context()->plan());
        QVERIFY2(d->memoryLabel()->text().contains(QString::fromStdString(format_bytes(needed))),
                 qPrintable(d->memoryLabel()->text()));
        QVERIFY(!d->seedEdit()->isEnabled());
        d->fillBox()->setCurrentIndex(1);
        QVERIFY(d->seedEdit()->isEnabled());
        d->seedEdit()->setText("18446744073709551616"); // 2^64
        d->policyBox()->setCurrentIndex(d->policyBox()->findText("regulated"));
        QCOMPARE(
            d->commandLabel()->text(),
            QString("As tmmu plan --apply debug:18446744073709551616 --data-policy regulated"));
        d->accept();
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text().contains("whole number"),
                 qPrintable(d->errorLabel()->text()));
        d->seedEdit()->setText("7");
        d->accept(); // a debug pattern under the regulated policy: refused as tmmu refuses it
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text().contains("forbidden under the regulated data policy"),
                 qPrintable(d->errorLabel()->text()));
        d->policyBox()->setCurrentIndex(d->policyBox()->findText("standard"));
        QVERIFY(d->errorLabel()->isHidden()); // a changed field clears the refusal
        d->accept();
        QVERIFY(waitIdle(w));
        QMessageBox* box = w.resultBox();
        QVERIFY(box && box->isVisible());
        QCOMPARE(box->windowTitle(), QString("Plan applied"));
        // The same state as the engine commits for this plan and fill, on any memory.
        const Plan& plan = *w.context()->plan();
        HostArenas memory(plan);
        const MemoryBinding expected(plan, memory.memory(), {{FillKind::Debug, 7}});
        const QString state = QString::fromStdString(to_hex(expected.commit()));
        QVERIFY2(box->text().contains(state), qPrintable(box->text()));
        QVERIFY(box->text().contains("debug fill (seed 7)"));
        QVERIFY(w.statusBar()->currentMessage().contains(state));
        // The dialog offers what was applied last.
        w.applyToHost();
        QCOMPARE(w.applyDialog()->commandLabel()->text(), QString("As tmmu plan --apply debug:7"));
        w.applyDialog()->reject();

        // A plan larger than the host's memory is planned, but applying it is refused before
        // anything is allocated, by name, in the same box and the status bar.
        QTemporaryDir dir;
        const QString csv = dir.filePath("petabyte.csv");
        write_text(csv, "id,lower,upper,size\n0,0,1,1125899906842624\n");
        QVERIFY(waitForPlan(w, [&] { w.openModel(csv, settings, false); }));
        QVERIFY(waitIdle(w));
        w.applyToHost();
        w.applyDialog()->accept();
        QVERIFY(waitIdle(w));
        QCOMPARE(box->windowTitle(), QString("Applying the plan failed"));
        QVERIFY2(box->text().startsWith("DEVICE_ERROR at host memory: the plan's arenas need "
                                        "1.00 PiB together"),
                 qPrintable(box->text()));
        QVERIFY(w.statusBar()->currentMessage().contains("DEVICE_ERROR"));
    }

    // Plan > Run iterations: an IR graph with a shape envelope runs over iterations from the
    // plan on screen as tmmu plan --iteration runs it; the dialog refuses lines tmmu refuses,
    // naming the iteration; the plan in force after the last is shown, and Re-plan plans it
    // again; under ABORT a larger iteration stops the run and the plan on screen stays.
    void iterationsRunFromThePlanOnScreen() {
        MainWindow w;
        QAction* action = findAction(w, "Run &iterations…");
        QVERIFY(action);
        PlanSettings settings = smallSettings();
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        QVERIFY(waitIdle(w));
        QVERIFY(action->isEnabled()); // a config's batch and seq: configsRunOverIterations
        settings.mode = Mode::Inference;
        settings.bindings.dims = {{"seq", 256}};
        w.controls()->setSettings(settings);
        const QString model = kExamples + "/dynamic_seq.json";
        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        QVERIFY(action->isEnabled());
        const std::string first = to_hex(w.context()->plan()->plan_hash);
        w.runIterations();
        IterationsDialog* d = w.iterationsDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(d->commandLabel()->text(), QString("No iterations yet."));
        const auto refused = [&](const QString& lines, const QString& why) {
            d->linesEdit()->setPlainText(lines);
            d->accept();
            QVERIFY(d->isVisible());
            QVERIFY2(d->errorLabel()->text().contains(why), qPrintable(d->errorLabel()->text()));
        };
        refused("seq=128\nseq=4096", "iteration 1: ");
        refused("seq=128\nseq=4096", "4096");
        refused("depth=3", "iteration 0: ");
        refused("seq=128, seq=256", "names seq twice");
        refused("\n \n", "at least one iteration");
        d->linesEdit()->setPlainText("seq=128\nseq = 512\n\nbatch=2, seq=512");
        QVERIFY(d->errorLabel()->isHidden());
        QCOMPARE(d->commandLabel()->text(),
                 QString("As tmmu plan --iteration seq=128 --iteration seq=512 --iteration "
                         "batch=2,seq=512"));
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QVERIFY(waitIdle(w));
        const Plan& last = *w.context()->plan();
        QCOMPARE(last.dims, (DimBinding{{"batch", 2}, {"seq", 512}}));
        QMessageBox* box = w.resultBox();
        QVERIFY(box && box->isVisible());
        QCOMPARE(box->windowTitle(), QString("Iterations run"));
        const QString text = box->text();
        QVERIFY2(text.contains("3 iterations run from the plan at batch=1, seq=256, 2 replans"),
                 qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(first.substr(0, 12))));
        QVERIFY(text.contains(QString::fromStdString(to_hex(last.plan_hash).substr(0, 12))));
        QCOMPARE(text.count("replanned (was"), 2);
        // The toolbar holds the last plan's binding: Re-plan gives the same plan.
        const Digest lastHash = last.plan_hash;
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(w.context()->plan()->plan_hash, lastHash);
        QVERIFY(waitIdle(w));
        w.runIterations();
        QCOMPARE(w.iterationsDialog()->linesEdit()->toPlainText(),
                 QString("seq=128\nseq = 512\n\nbatch=2, seq=512"));
        w.iterationsDialog()->reject();

        // The same graph under ABORT: an iteration larger than the plan stops the run.
        QTemporaryDir dir;
        QFile in(model);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray json = in.readAll().replace("REPLAN_AT_SAFEPOINT", "ABORT");
        const QString aborting = dir.filePath("aborting.json");
        write_text(aborting, json);
        QVERIFY(waitForPlan(w, [&] { w.openModel(aborting, settings, false); }));
        QVERIFY(waitIdle(w));
        const Digest before = w.context()->plan()->plan_hash;
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("seq=128\nseq=512");
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.iterationsDialog()->accept();
        QVERIFY(failed.wait(30000));
        QVERIFY(waitIdle(w));
        QCOMPARE(box->windowTitle(), QString("Iterations stopped"));
        QVERIFY2(box->text().contains("SHAPE_ENVELOPE_VIOLATION"), qPrintable(box->text()));
        QVERIFY(box->text().contains("fits"));
        QCOMPARE(w.context()->plan()->plan_hash, before);
        // Stopped at the first iteration: nothing was decided before it.
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("seq=512");
        w.iterationsDialog()->accept();
        QVERIFY(failed.wait(30000));
        QVERIFY(waitIdle(w));
        QVERIFY2(box->text().contains("It stopped at the first iteration.") &&
                     !box->text().contains("Decided before it"),
                 qPrintable(box->text()));
    }

    // A transformer config runs over iterations with batch and seq dynamic, from a plan at the
    // toolbar's shapes, as tmmu plan CONFIG --iteration does; the toolbar then holds the last
    // plan's shapes, and the dialog refuses a seq past the model's positions.
    void configsRunOverIterations() {
        MainWindow w;
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        QVERIFY(waitIdle(w));
        w.runIterations();
        IterationsDialog* d = w.iterationsDialog();
        QVERIFY(d && d->isVisible());
        d->linesEdit()->setPlainText("heads=2");
        d->accept();
        QVERIFY2(d->errorLabel()->text().contains("iteration 0: "),
                 qPrintable(d->errorLabel()->text()));
        d->linesEdit()->setPlainText("seq=32\nbatch=2, seq=128");
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.context()->plan()->dims, (DimBinding{{"batch", 2}, {"seq", 128}}));
        QMessageBox* box = w.resultBox();
        QVERIFY(box && box->isVisible());
        QVERIFY2(
            box->text().contains("2 iterations run from the plan at batch=1, seq=64, 1 replan"),
            qPrintable(box->text()));
        QCOMPARE(w.controls()->settings().batch, uint64_t(2));
        QCOMPARE(w.controls()->settings().seq, uint64_t(128));
        const std::string ranIr = to_hex(w.context()->plan()->ir_hash);
        const std::string ranPlan = to_hex(w.context()->plan()->plan_hash);
        box->close();
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QVERIFY(waitIdle(w));
        // Re-plan plans the model the run ended on (batch and seq still dynamic): the same IR,
        // the same plan.
        QCOMPARE(to_hex(w.context()->plan()->ir_hash), ranIr);
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), ranPlan);
        // The dialog reads the model's positions from the config: a seq past them is refused
        // before anything runs.
        w.runIterations();
        d = w.iterationsDialog();
        bool saysPositions = false;
        for (const QLabel* label : d->findChildren<QLabel*>())
            saysPositions |= label->text().contains("seq up to the model's 1024 positions");
        QVERIFY(saysPositions);
        d->linesEdit()->setPlainText("seq=512\nseq=2048");
        d->accept();
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text().contains("iteration 1: ") &&
                     d->errorLabel()->text().contains("[1, 1024]"),
                 qPrintable(d->errorLabel()->text()));
        // Nor a batch past what the toolbar holds, where the last one comes back to.
        d->linesEdit()->setPlainText("batch=1048577");
        d->accept();
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text().contains("[1, 1048576]"),
                 qPrintable(d->errorLabel()->text()));
        QCOMPARE(w.controls()->batchBox()->maximum(), PlanningControls::kMaxShape);
    }

    // The Apply and Run iterations dialogs belong to the plan they were opened on: another plan
    // shown while they are open closes them, saying so; an iterations run that a newer plan
    // request replaces is not reported as a failure.
    void planDialogsFollowThePlanOnScreen() {
        MainWindow w;
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        const QString model = kExamples + "/dynamic_seq.json";
        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        QTemporaryDir dir;
        const QString csv = dir.filePath("p.csv");
        write_text(csv, "id,lower,upper,size\n0,0,1,64\n");
        auto release = holdWorker(*w.jobs(), "hold");
        w.openModel(csv, settings, false); // queued behind the hold
        w.runIterations();
        QPointer<IterationsDialog> iterations = w.iterationsDialog();
        QVERIFY(iterations && iterations->isVisible());
        w.applyToHost();
        QPointer<ApplyDialog> apply = w.applyDialog();
        QVERIFY(apply && apply->isVisible());
        QSignalSpy shown(&w, &MainWindow::planShown);
        release->store(true);
        QVERIFY(shown.wait(30000));
        QVERIFY(waitIdle(w));
        QVERIFY(!iterations || !iterations->isVisible());
        QVERIFY(!apply || !apply->isVisible());
        QVERIFY2(w.statusBar()->currentMessage().contains("closed: another plan is shown now"),
                 qPrintable(w.statusBar()->currentMessage()));

        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        release = holdWorker(*w.jobs(), "hold");
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("seq=4096"); // outside: refused at once
        w.iterationsDialog()->accept();
        QVERIFY(w.iterationsDialog()->isVisible());
        w.iterationsDialog()->linesEdit()->setPlainText("seq=512");
        w.iterationsDialog()->accept(); // queued behind the hold
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.replan(); // a newer request: the queued run is superseded
        release->store(true);
        QVERIFY(waitIdle(w));
        QCOMPARE(failed.count(), 0);
        QVERIFY(!w.statusBar()->currentMessage().contains("cancelled"));

        // So is a run that a lazy program replaces (opening one is no planning request).
        release = holdWorker(*w.jobs(), "hold");
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("seq=512");
        w.iterationsDialog()->accept();
        w.openModel(QStringLiteral(TMMU_SOURCE_DIR "/resources/programs/mlp-training.json"),
                    settings, false);
        release->store(true);
        QVERIFY(waitIdle(w));
        QCOMPARE(failed.count(), 0);
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QVERIFY2(!w.statusBar()->currentMessage().contains("cancelled"),
                 qPrintable(w.statusBar()->currentMessage()));
    }

    // An IR graph with dynamic dimensions: planned at its defaults, Dims… and Plan > Dimensions
    // bind it inside its envelope (refusing what tmmu --dim refuses), and Re-plan keeps it.
    void dynamicDimensionsAreBoundInsideTheirEnvelope() {
        MainWindow w;
        const QString model =
            QStringLiteral(TMMU_SOURCE_DIR) + "/resources/models/examples/dynamic_seq.json";
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        w.controls()->setSettings(settings);
        QVERIFY(waitForPlan(w, [&] { w.openModel(model, settings, false); }));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.context()->plan()->dims, (DimBinding{{"batch", 1}, {"seq", 2048}}));
        QVERIFY(w.controls()->dimsButton()->isEnabled());
        w.editBindings();
        EnvelopeDialog* d = w.envelopeDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(d->dimField("seq")->text(), QString("2048"));
        QCOMPARE(d->dimField("heads"), nullptr);
        d->dimField("seq")->setText("4096");
        d->accept();
        QVERIFY(d->isVisible());
        QVERIFY2(d->errorLabel()->text() == "--dim seq: seq=4096 is outside the model's shape "
                                            "envelope [1, 2048]",
                 qPrintable(d->errorLabel()->text()));
        d->dimField("seq")->setText("512");
        d->dimField("batch")->setText("2");
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QVERIFY(waitIdle(w));
        const DimBinding bound{{"batch", 2}, {"seq", 512}};
        QCOMPARE(w.context()->plan()->dims, bound);
        QCOMPARE(w.studioStatusBar()->field("mode")->text(), QString("inference, batch=2 seq=512"));
        const Graph& g = *w.context()->model()->graph;
        QCOMPARE(g.tensors[g.find_tensor("scores")].shape, (std::vector<int64_t>{2, 4, 512, 512}));
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(w.context()->plan()->dims, bound);
        // A model without dynamic dimensions has nothing to bind.
        QVERIFY(waitForPlan(w, [&] {
            w.openModel(QStringLiteral(TMMU_SOURCE_DIR) +
                            "/resources/models/examples/linear_chain.json",
                        settings, false);
        }));
        QVERIFY(!w.controls()->dimsButton()->isEnabled());
    }

    // --memory-budget has no field: the toolbar keeps it for re-plans and Re-plan's tooltip
    // says so. A plan over it fails by name and the plan on screen stays.
    void replansKeepTheMemoryBudget() {
        MainWindow w;
        PlanSettings settings = smallSettings();
        w.controls()->setSettings(settings);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), settings, false); }));
        const auto before = w.context()->planPtr();
        settings.memory_budget = uint64_t(1) << 30;
        w.controls()->setSettings(settings);
        QCOMPARE(w.controls()->settings().memory_budget, uint64_t(1) << 30);
        QVERIFY(w.controls()->replanButton()->toolTip().contains("1.00 GiB (--memory-budget)"));
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.replan();
        QVERIFY(failed.wait(30000));
        QVERIFY2(w.lastFailure().startsWith("MEMORY_BUDGET_EXCEEDED at --memory-budget"),
                 qPrintable(w.lastFailure()));
        QCOMPARE(w.context()->planPtr(), before);
        if (auto* box = w.findChild<QMessageBox*>("failureBox")) box->close();
        // A stored plan (a session, a checkpoint) brings its settings, not a budget: the one
        // given stays.
        PlanOutcome stored;
        stored.plan = before;
        stored.model = std::make_shared<const LoadedModel>();
        stored.settings = smallSettings();
        w.showStoredOutcome(stored);
        QVERIFY(waitIdle(w));
        QCOMPARE(w.controls()->settings().memory_budget, uint64_t(1) << 30);
    }

    void cancelKeepsThePlanAndShowsNoBox() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QVERIFY(waitIdle(w));
        auto before = w.context()->planPtr();
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.openModel(default_model_path(), PlanSettings{}, false);
        w.jobs()->cancel();
        QVERIFY(failed.wait(30000));
        QVERIFY2(w.lastFailure().startsWith("CANCELLED"), qPrintable(w.lastFailure()));
        QCOMPARE(w.context()->planPtr(), before);
        auto* box = w.findChild<QMessageBox*>("failureBox");
        QVERIFY(!box || !box->isVisible());
    }

    void openFailureNamesTheFile() {
        MainWindow w;
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.openModel("/nonexistent/model.json", smallSettings(), false);
        QVERIFY(failed.wait(30000));
        QVERIFY2(w.lastFailure().startsWith("IO_ERROR"), qPrintable(w.lastFailure()));
        QVERIFY(w.lastFailure().contains("/nonexistent/model.json"));
        QVERIFY(!w.context()->plan());
    }

    // A checkpoint (tmmu plan --checkpoint) opens as its plan, restored and validated: the
    // same hash, tensors and mode, no strategies planned beside it, and Re-plan says why it
    // cannot plan again; a damaged one is refused naming the file, and nothing is shown.
    void checkpointOpensAsItsPlan() {
        MainWindow w;
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        const std::shared_ptr<const Plan> planned = w.context()->planPtr();
        const std::vector<uint8_t> bytes = encode_checkpoint(*planned);
        const QString path = settingsDir_.filePath("plan.ckpt"); // by content, not by name
        write_bytes(path, bytes);
        MainWindow viewer;
        QVERIFY(waitForPlan(viewer, [&] { viewer.openModel(path, PlanSettings{}, false); }));
        const Plan& shown = *viewer.context()->plan();
        QCOMPARE(shown.plan_hash, planned->plan_hash);
        QCOMPARE(shown.tensors.size(), planned->tensors.size());
        QCOMPARE(shown.mode, planned->mode);
        QVERIFY2(viewer.studioStatusBar()->currentMessage().startsWith("Checkpoint of "),
                 qPrintable(viewer.studioStatusBar()->currentMessage()));
        QVERIFY(viewer.strategyChart()->results().empty());
        viewer.replan();
        waitIdle(viewer);
        QVERIFY2(viewer.lastFailure().contains("holds a plan, not a model"),
                 qPrintable(viewer.lastFailure()));

        std::vector<uint8_t> damaged = bytes;
        damaged[damaged.size() / 2] ^= 0x01;
        write_bytes(path, damaged);
        MainWindow refused;
        QSignalSpy failed(&refused, &MainWindow::planFailed);
        refused.openModel(path, PlanSettings{}, false);
        QVERIFY(failed.wait(30000));
        QVERIFY2(refused.lastFailure().startsWith("CORRUPT_CHECKPOINT"),
                 qPrintable(refused.lastFailure()));
        QVERIFY(!refused.context()->plan());
    }

    void stepKeysMoveTheContextStep() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        w.show();
        QApplication::setActiveWindow(&w);
        QVERIFY(QTest::qWaitForWindowActive(&w));
        auto* ctx = w.context();
        const uint64_t last = ctx->eventCount() - 1;
        w.centralWidget()->setFocus();
        QCOMPARE(ctx->currentEvent(), uint64_t(0));
        QTest::keyClick(w.centralWidget(), Qt::Key_Right);
        QTest::keyClick(w.centralWidget(), Qt::Key_Right);
        QCOMPARE(ctx->currentEvent(), uint64_t(2));
        QTest::keyClick(w.centralWidget(), Qt::Key_Left);
        QCOMPARE(ctx->currentEvent(), uint64_t(1));
        QTest::keyClick(w.centralWidget(), Qt::Key_End);
        QCOMPARE(ctx->currentEvent(), last);
        QTest::keyClick(w.centralWidget(), Qt::Key_Right); // clamped
        QCOMPARE(ctx->currentEvent(), last);
        QTest::keyClick(w.centralWidget(), Qt::Key_Home);
        QCOMPARE(ctx->currentEvent(), uint64_t(0));
        // The step control follows the context.
        ctx->setCurrentEvent(5);
        QCOMPARE(w.findChild<QSlider*>("stepSlider")->value(), 5);
        // Keys typed into a text field stay there.
        QLineEdit* edit = w.controls()->arenasEdit();
        edit->setText("abc");
        edit->setFocus();
        edit->setCursorPosition(3);
        QTest::keyClick(edit, Qt::Key_Left);
        QTest::keyClick(edit, Qt::Key_Home);
        QCOMPARE(ctx->currentEvent(), uint64_t(5));
        QCOMPARE(edit->cursorPosition(), 0);
    }

    void dropOpensTheFile() {
        MainWindow w;
        w.setPersistSettings(true);
        QString path = kExamples + "/residual_blocks.json";
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QVERIFY(waitForPlan(w, [&] { QApplication::sendEvent(&w, &drop); }));
        QCOMPARE(w.modelPath(), path);
        QCOMPARE(statusText(w, "model"), QString("residual_blocks"));
        QVERIFY(!w.controls()->batchBox()->isEnabled()); // IR JSON: no batch/seq
        QCOMPARE(w.recentFiles().value(0), path);
    }

    void recentFilesKeepTheTenLatest() {
        MainWindow w;
        QTemporaryDir dir;
        QStringList files;
        for (int i = 0; i < 12; ++i) {
            files << dir.filePath(QString("model%1.json").arg(i));
            QVERIFY(QFile::copy(kExamples + "/linear_chain.json", files.back()));
        }
        for (const QString& path : files)
            QVERIFY(waitForPlan(w, [&] { w.openModel(path, smallSettings(), true); }));
        // Opening one again moves it to the front instead of listing it twice.
        QVERIFY(waitForPlan(w, [&] { w.openModel(files[5], smallSettings(), true); }));
        QStringList recent = w.recentFiles();
        QCOMPARE(recent.size(), MainWindow::kMaxRecentFiles);
        QCOMPARE(recent.value(0), files[5]);
        QCOMPARE(recent.value(1), files[11]);
        QVERIFY(!recent.contains(files[0]) && !recent.contains(files[1]));
        QCOMPARE(recent.removeDuplicates(), 0);
        QMenu* menu = nullptr;
        for (QMenu* m : w.findChildren<QMenu*>())
            if (m->title() == "Open &Recent") menu = m;
        QVERIFY(menu);
        QVERIFY(menu->actions().value(0)->text().contains("model5.json"));
    }

    void settingsRoundTrip() {
        QByteArray state;
        {
            MainWindow w;
            w.resize(1200, 800);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.dock("strategyDock")->hide();
            w.dock("slotsDock")->setFloating(true);
            w.context()->setColorMode(views::ColorMode::Slot);
            state = w.saveState(MainWindow::kStateVersion);
            w.close(); // closeEvent saves
        }
        QVERIFY(QSettings().contains("window/state"));
        MainWindow restored;
        restored.restoreSettings();
        restored.show();
        QVERIFY(QTest::qWaitForWindowExposed(&restored));
        QVERIFY(!restored.dock("strategyDock")->isVisible());
        QVERIFY(restored.dock("slotsDock")->isFloating());
        QVERIFY(restored.dock("memoryDock")->isVisible());
        QCOMPARE(restored.context()->colorMode(), views::ColorMode::Slot);
        QCOMPARE(restored.size(), QSize(1200, 800));
        // A layout saved by another version of the dock set is ignored.
        QSettings().setValue("window/state", restored.saveState(MainWindow::kStateVersion + 1));
        MainWindow fresh;
        fresh.restoreSettings();
        fresh.show();
        QVERIFY(QTest::qWaitForWindowExposed(&fresh));
        QVERIFY(fresh.dock("strategyDock")->isVisible());
        QVERIFY(!fresh.dock("slotsDock")->isFloating());
    }

    // At 1440 px the bottom dock group's five titles do not fit: they stay whole and the tab
    // bar scrolls, in every tab bar the layout makes, first shown or after a reset.
    void tabbedDocksKeepWholeTitles() {
        MainWindow w;
        w.resize(1440, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const auto check = [&] {
            const auto bars = w.findChildren<QTabBar*>(Qt::FindDirectChildrenOnly);
            QVERIFY(bars.size() >= 3); // left, bottom and right groups
            for (QTabBar* bar : bars) {
                QCOMPARE(bar->elideMode(), Qt::ElideNone);
                QVERIFY(bar->usesScrollButtons());
            }
        };
        check();
        w.resetLayout();
        QCoreApplication::processEvents();
        check();
    }

    void statusBarShowsProgressOnlyForSlowJobs() {
        StudioStatusBar bar;
        bar.show();
        bar.jobStarted("Planning gpt2-small.json");
        QVERIFY(!bar.progressVisible());
        QTest::qWait(StudioStatusBar::kProgressDelayMs + 200);
        QVERIFY(bar.progressVisible());
        bar.jobProgress(0.5, "arena activations");
        bar.jobsStopped();
        QVERIFY(!bar.progressVisible());
        bar.jobStarted("Opening session 3");
        bar.jobsStopped();
        QTest::qWait(StudioStatusBar::kProgressDelayMs + 200);
        QVERIFY(!bar.progressVisible());
    }

    // A message longer than the room the plan's fields leave is not cut: the fields give way
    // (the hash first, the height and distance from the bound last) and come back after it.
    void longMessagesTakeTheFieldsRoom() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.openModelSync(default_model_path(), PlanSettings{}));
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        StudioStatusBar* bar = w.studioStatusBar();
        const QString brief = "Session 3 shown";
        bar->showMessage(brief);
        for (const char* name : {"model", "mode", "strategy", "height", "over", "hash"})
            QVERIFY2(bar->field(name)->isVisible(), name);
        const QString altered =
            "Session 12 shown — ALTERED: the stored plan's hash 44fb7a89 does not match the plan "
            "decoded from the checkpoint (e0c1d2f3); its summary and metrics are as recorded";
        bar->showMessage(altered);
        QCoreApplication::processEvents(); // the bar lays the fields out again
        QVERIFY(!bar->field("hash")->isVisible());
        QVERIFY(bar->field("height")->isVisible());
        int fieldsRight = bar->width();
        for (const char* name : {"model", "mode", "strategy", "height", "over", "hash"})
            if (bar->field(name)->isVisible())
                fieldsRight = std::min(fieldsRight, bar->field(name)->geometry().left());
        QVERIFY2(bar->fontMetrics().horizontalAdvance(altered) < fieldsRight,
                 qPrintable(QStringLiteral("message %1 px, fields from %2 px")
                                .arg(bar->fontMetrics().horizontalAdvance(altered))
                                .arg(fieldsRight)));
        QCOMPARE(bar->toolTip(), altered);
        bar->clearMessage();
        for (const char* name : {"model", "mode", "strategy", "height", "over", "hash"})
            QVERIFY2(bar->field(name)->isVisible(), name);
    }

    // Whatever job runs, the status bar shows its title and progress, and Cancel stops it.
    void statusBarCancelsTheRunningJob() {
        MainWindow w;
        w.setPersistSettings(false);
        w.show();
        std::vector<JobFailure> failures;
        holdWorker(*w.jobs(), "Replaying session 7",
                   [&](const JobFailure& f) { failures.push_back(f); });
        QTRY_VERIFY_WITH_TIMEOUT(w.studioStatusBar()->progressVisible(), 5000);
        auto* bar = w.studioStatusBar()->findChild<QProgressBar*>("jobProgress");
        QVERIFY(bar);
        QCOMPARE(bar->format(), QString("Replaying session 7"));
        auto* cancel = w.studioStatusBar()->findChild<QToolButton*>("cancelJob");
        QVERIFY(cancel && cancel->isVisible());
        QVERIFY(cancel->toolTip().contains("Replaying session 7"));
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(waitIdle(w));
        QCOMPARE(failures.size(), size_t(1));
        QVERIFY(failures[0].cancelled());
        QVERIFY(!w.studioStatusBar()->progressVisible());
    }

    // Planning the full default model reports its stages, the comparison included.
    void planningProgressReachesTheStatusBar() {
        MainWindow w;
        QSignalSpy progress(w.jobs(), &JobRunner::jobProgress);
        w.openModel(default_model_path(), PlanSettings{}, false);
        QVERIFY(waitIdle(w));
        QStringList stages;
        double comparedBefore = 0;
        for (const QList<QVariant>& args : progress) {
            const QString stage = args.at(1).toString();
            stages << stage;
            // The comparison reports each strategy's own stages inside its share, so its bar
            // never runs back.
            if (!stage.startsWith("comparing ")) continue;
            QVERIFY2(args.at(0).toDouble() >= comparedBefore, qPrintable(stage));
            comparedBefore = args.at(0).toDouble();
        }
        QVERIFY2(stages.contains("loading model"), qPrintable(stages.join(", ")));
        QVERIFY2(stages.contains("comparing best-fit: liveness"), qPrintable(stages.join(", ")));
    }

    // A second open replaces the running planning job: only the newest request is shown, and
    // the replaced one is not reported as a failure (nobody cancelled it): no planFailed, no
    // box, no "cancelled" in the status bar, and the window reports success.
    void aNewRequestReplacesTheRunningPlan() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::planShown);
        QSignalSpy failed(&w, &MainWindow::planFailed);
        w.openModel(default_model_path(), PlanSettings{}, false);
        w.openModel(default_model_path(), smallSettings("slots"), false);
        QVERIFY(waitIdle(w));
        QCOMPARE(shown.count(), 1);
        QCOMPARE(failed.count(), 0);
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QVERIFY(!w.statusBar()->currentMessage().contains("cancelled"));
        QCOMPARE(w.context()->plan()->strategy, std::string("slots"));
        auto* box = w.findChild<QMessageBox*>("failureBox");
        QVERIFY(!box || !box->isVisible());
    }

    // Closing the window mid-plan neither hangs nor crashes: the worker is cancelled and joined
    // and the result is never delivered into the destroyed window.
    void destroyingTheWindowWhilePlanningCancelsTheJob() {
        QElapsedTimer t;
        {
            MainWindow w;
            w.openModel(default_model_path(), PlanSettings{}, false);
            QVERIFY(w.jobs()->busy());
            QTest::qWait(20);
            t.start();
        }
        QVERIFY2(t.elapsed() < 10000, qPrintable(QString("%1 ms to close").arg(t.elapsed())));
        QTest::qWait(50); // anything posted before the join would be delivered now
    }

    void colourModeMenuFollowsTheContext() {
        MainWindow w;
        QAction* slot = findAction(w, "&Slot");
        QVERIFY(slot);
        slot->trigger();
        QCOMPARE(w.context()->colorMode(), views::ColorMode::Slot);
        w.context()->setColorMode(views::ColorMode::Role);
        QVERIFY(!slot->isChecked());
    }

    void everyPanelIsInADock() {
        MainWindow w;
        QStringList names;
        for (QDockWidget* d : w.docks())
            names << d->objectName();
        names.sort();
        QCOMPARE(names, QStringList({"dispatchDock", "instructionsDock", "lazyStateDock",
                                     "lazyTracesDock", "liveRangesDock", "memoryDock", "parityDock",
                                     "runComparisonDock", "runDock", "sessionCompareDock",
                                     "sessionsDock", "slotsDock", "strategyDock",
                                     "tensorDetailsDock", "tensorTableDock", "tokenGraphDock"}));
        QVERIFY(w.centralWidget()); // the arena layout
        QCOMPARE(w.centralWidget()->objectName(), QString("arenaLayout"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
