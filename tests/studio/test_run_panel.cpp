// The studio runs models (issue 12, item 9): the Run panel's backend picker says why a backend
// is unavailable; a run goes off the UI thread and puts its decode registers on screen, stepped
// one instruction per event, with the instruction table and the dispatch chart following the
// same cursor; runs are recorded, listed, replayed ("identical") and cancelled.
#include "backend_registry.h"
#include "charts/dispatch_chart.h"
#include "charts/parity_chart.h"
#include "context/plan_context.h"
#include "job_runner.h"
#include "main_window.h"
#include "models/instruction_model.h"
#include "panels/instruction_panel.h"
#include "run_panel.h"
#include "session_actions.h"
#include "studio_options.h"
#include "studio_test_util.h"

#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

constexpr const char* kTinyGpt2 = R"({"model_type":"gpt2","n_embd":32,"n_layer":2,"n_head":2,
    "vocab_size":61,"n_positions":64})";

// Runs the panel's current settings and waits for the run to be shown.
bool runAndWait(MainWindow& w) {
    QSignalSpy shown(w.runPanel(), &RunPanel::runShown);
    w.runPanel()->runButton()->click();
    return shown.wait(60000) && waitIdle(w);
}

} // namespace

class TestRunPanel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    void configure(MainWindow& w) {
        const QString config = dir_.filePath("tiny-gpt2.json");
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kTinyGpt2);
        f.close();
        QVERIFY(w.sessions()->openStore(dir_.filePath("sessions.db")));
        QVERIFY(waitIdle(w)); // the recorded-runs listing
        w.runPanel()->setConfigPath(config);
        w.runPanel()->promptBox()->setValue(3);
        w.runPanel()->decodeBox()->setValue(5);
        w.runPanel()->batchBox()->setValue(2);
    }

  private slots:
    void initTestCase() { isolateSettings(dir_.path()); }

    void theBackendPickerSaysWhyABackendIsUnavailable() {
        MainWindow w;
        QComboBox* box = w.runPanel()->backendBox();
        QCOMPARE(box->count(), 3);
        QCOMPARE(box->currentData().toString(), QString("cpu"));
        auto* model = qobject_cast<QStandardItemModel*>(box->model());
        QVERIFY(model);
        QVERIFY(model->item(0)->isEnabled());
        QVERIFY2(!model->item(0)->text().contains("unavailable"),
                 qPrintable(model->item(0)->text()));
        // A GPU backend is offered when it can run (CUDA with a device); otherwise disabled,
        // saying what app/common's inventory found, never a blanket "not in this build".
        const std::vector<app::BackendStatus>& inventory = app::backend_statuses();
        for (int i : {1, 2}) {
            const app::BackendStatus& s = inventory[size_t(i)];
            QCOMPARE(model->item(i)->data(Qt::UserRole).toString(), QString::fromStdString(s.name));
            const QString text = model->item(i)->text();
            QCOMPARE(model->item(i)->isEnabled(), s.runnable);
            if (s.runnable) {
                QCOMPARE(text, QString::fromStdString(s.label));
                continue;
            }
            const QString prefix = QString::fromStdString(s.label) + " (unavailable: ";
            QVERIFY2(text.startsWith(prefix) && text.endsWith(')'), qPrintable(text));
            const QString reason = text.mid(prefix.size(), text.size() - prefix.size() - 1);
            QVERIFY2(!reason.isEmpty() && !reason.contains("not in this build"), qPrintable(text));
            if (!s.built)
                QVERIFY2(reason.startsWith("not built: "), qPrintable(text));
            else
                QCOMPARE(reason, QString::fromStdString(s.unavailable_reason));
        }
        // CTest pins Vulkan to lavapipe: a Vulkan build finds its CPU device when Mesa's is
        // installed.
        const app::BackendStatus& vulkan = inventory[1];
        if (vulkan.built && QFile::exists("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json") &&
            qEnvironmentVariableIsSet("VK_DRIVER_FILES")) {
            QVERIFY2(vulkan.available && vulkan.runnable, vulkan.unavailable_reason.c_str());
            QCOMPARE(model->item(1)->text(), QString::fromStdString(vulkan.label));
            QVERIFY(model->item(1)->isEnabled());
        }
    }

    void aRunPutsItsRegistersInstructionsAndCountersOnScreen() {
        MainWindow w;
        configure(w);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QVERIFY(waitIdle(w));
        QVERIFY(w.sessions()->currentSession() != 0);                 // the plan was recorded
        w.runPanel()->setConfigPath(dir_.filePath("tiny-gpt2.json")); // not the config planned
        QVERIFY(runAndWait(w));
        views::PlanContext* ctx = w.context();
        QVERIFY(ctx->plan());
        // The registers replace the recorded plan as what File > Export and Replay act on.
        QCOMPARE(w.sessions()->currentSession(), 0);
        const QString exported = dir_.filePath("registers.json");
        QSignalSpy exportDone(w.sessions(), &SessionActions::exportFinished);
        w.sessions()->exportCurrent(exported, sessions::ExportFormat::Json);
        QVERIFY(exportDone.wait(20000));
        QCOMPARE(exportDone.front().front().toBool(), true);
        QFile registers(exported);
        QVERIFY(registers.open(QIODevice::ReadOnly));
        QVERIFY(registers.readAll().contains("registers"));
        QCOMPARE(ctx->eventAxis().label(), QString("instruction"));
        views::InstructionPanel* panel = w.instructionPanel();
        QVERIFY(panel->following());
        const int instructions = panel->model()->rowCount();
        QCOMPARE(instructions, 1 + 2 * 6 + 2); // embedding, 2 layers of 6, final norm, lm head
        QCOMPARE(ctx->eventCount(), uint64_t(instructions));
        QCOMPARE(ctx->plan()->tensors.size(), panel->model()->plan()->plan.registers.size());

        // One cursor: the table moves the views, the views move the table.
        panel->table()->selectRow(5);
        QCOMPARE(ctx->currentEvent(), uint64_t(5));
        ctx->setCurrentEvent(8);
        QCOMPARE(panel->table()->currentIndex().row(), 8);
        QCOMPARE(panel->model()->index(8, views::InstructionModel::OpcodeColumn).data().toString(),
                 QString("multihead_attention"));

        // Two prefills and four decode steps, counted: cumulative bars through the last step.
        views::DispatchChart* chart = w.dispatchChart();
        QCOMPARE(chart->step(), 5);
        QVERIFY2(chart->caption().contains("Through step 5 (decode) of steps 0\u20135: 90"),
                 qPrintable(chart->caption()));
        chart->setMode(views::DispatchChart::Mode::PerStep);
        QVERIFY2(chart->caption().contains("Only step 5 (decode) of steps 0\u20135: 15"),
                 qPrintable(chart->caption()));
        auto* bars = qobject_cast<QStackedBarSeries*>(chart->chart()->series().value(0));
        QVERIFY(bars);
        QCOMPARE(bars->barSets().value(1)->sum(), 15.0); // decode: every instruction once

        QVERIFY(w.runPanel()->summaryText().contains("generated"));
        QVERIFY2(w.runPanel()->summaryText().contains("recorded   run 1"),
                 qPrintable(w.runPanel()->summaryText()));
        QCOMPARE(w.runPanel()->recordedRunsBox()->count(), 1);

        // Opening another plan: the instruction table stops following it.
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        QVERIFY(!panel->following());
        QVERIFY(!panel->table()->isEnabled());
    }

    // On a GPU backend (Vulkan on lavapipe where Mesa is installed), compared with the CPU: the
    // parity chart plots every step's NMSE under the gate and says it passes; the instruction
    // table gains each instruction's device time; the dispatch chart counts one launch (the
    // step's command buffer) per step and the device time.
    void aGpuRunShowsParityDeviceTimeAndLaunches() {
        MainWindow w;
        configure(w);
        QComboBox* box = w.runPanel()->backendBox();
        const int vulkan = box->findData(QStringLiteral("vulkan"));
        const app::BackendStatus* status = app::backend_status("vulkan");
        if (vulkan < 0 || !status->runnable)
            QSKIP(("Vulkan cannot run here: " + status->not_runnable_reason).c_str());
        QVERIFY(!w.runPanel()->compareBox()->isEnabled()); // the CPU: nothing to compare with
        box->setCurrentIndex(vulkan);
        QVERIFY(w.runPanel()->compareBox()->isEnabled());
        QVERIFY(w.runPanel()->precisionBox()->isEnabled());
        w.runPanel()->precisionBox()->setCurrentIndex(1);
        QCOMPARE(w.runPanel()->job().request.weight_precision, runtime::WeightPrecision::F16);
        w.runPanel()->precisionBox()->setCurrentIndex(0);
        w.runPanel()->compareBox()->setChecked(true);
        w.runPanel()->recordBox()->setChecked(false);
        QVERIFY(runAndWait(w));

        views::ParityChart* parity = w.parityChart();
        QVERIFY2(parity->caption().startsWith("vulkan vs cpu: worst NMSE") &&
                     parity->caption().contains("passes the gate"),
                 qPrintable(parity->caption()));
        auto* nmse = qobject_cast<QLineSeries*>(parity->chart()->series().value(1));
        QVERIFY(nmse);
        QCOMPARE(nmse->count(), 2 + 4);         // two prefills, four decode steps
        for (const QPointF& p : nmse->points()) // log10 of each step's NMSE
            QVERIFY2(p.y() <= -5, qPrintable(QString::number(p.y())));

        views::InstructionPanel* panel = w.instructionPanel();
        QVERIFY(panel->model()->hasDeviceTime());
        QVERIFY(!panel->table()->isColumnHidden(views::InstructionModel::DeviceTimeColumn));
        const QString time =
            panel->model()->index(2, views::InstructionModel::DeviceTimeColumn).data().toString();
        QVERIFY2(time.endsWith(" ms") || time.endsWith(" µs"), qPrintable(time));

        views::DispatchChart* chart = w.dispatchChart();
        QVERIFY2(chart->caption().contains("90 dispatches in 6 launches (1 per step), ") &&
                     chart->caption().contains(" ms on the device"),
                 qPrintable(chart->caption()));
        if (qEnvironmentVariableIsSet("TMMU_SCREENSHOT_DIR")) {
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            for (const char* name : {"parityDock", "instructionsDock"})
                w.dock(QString::fromLatin1(name))->raise();
            QTest::qWait(200);
            const QString dir = qEnvironmentVariable("TMMU_SCREENSHOT_DIR");
            QVERIFY(w.grab().save(dir + "/run-vulkan-parity.png"));
            w.dock(QStringLiteral("dispatchDock"))->raise();
            QTest::qWait(200);
            QVERIFY(w.grab().save(dir + "/run-vulkan-dispatch.png"));
        }
    }

    void aRecordedRunReplaysIdentically() {
        MainWindow w;
        configure(w);
        w.runPanel()->refreshRecordedRuns();
        QVERIFY(waitIdle(w));
        QVERIFY(w.runPanel()->recordedRunsBox()->count() >= 1);
        QSignalSpy shown(w.runPanel(), &RunPanel::runShown);
        w.runPanel()->replay(w.runPanel()->recordedRunsBox()->itemData(0).toLongLong());
        QVERIFY(shown.wait(60000));
        const QString text = w.runPanel()->summaryText();
        QVERIFY2(text.startsWith("replay of run") && text.contains(": identical: 6 steps"),
                 qPrintable(text));
    }

    void cancelStopsARunAndKeepsThePlan() {
        MainWindow w;
        configure(w);
        w.runPanel()->setConfigPath(default_model_path()); // GPT-2 small: seconds per run
        w.runPanel()->decodeBox()->setValue(1000);         // 16 + 1000 of its 1024 positions
        w.runPanel()->promptBox()->setValue(16);
        w.runPanel()->batchBox()->setValue(1);
        QSignalSpy failed(w.runPanel(), &RunPanel::runFailed);
        w.runPanel()->runButton()->click();
        QVERIFY(w.runPanel()->running());
        QVERIFY(!w.runPanel()->runButton()->isEnabled());
        QTest::qWait(300);
        w.runPanel()->cancelButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QCOMPARE(failed.at(0).at(0).toString(), QString("Run cancelled"));
        QVERIFY(!w.runPanel()->running());
        QVERIFY(w.runPanel()->runButton()->isEnabled());
        QVERIFY(!w.context()->plan()); // nothing half-done reached the screen
    }

    // What a person sees after a run: the run dock, the instruction table and the dispatch
    // chart raised, all drawn. TMMU_SCREENSHOT_DIR keeps the picture for a look.
    void aRunIsDrawn() {
        MainWindow w;
        configure(w);
        w.resize(1600, 1000);
        w.show();
        QVERIFY(runAndWait(w));
        for (const char* name : {"runDock", "dispatchDock", "instructionsDock"})
            w.dock(name)->raise();
        w.context()->setCurrentEvent(8);
        QTest::qWait(50);
        const QImage image = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
        if (qEnvironmentVariableIsSet("TMMU_SCREENSHOT_DIR"))
            image.save(qEnvironmentVariable("TMMU_SCREENSHOT_DIR") + "/run.png");
        for (const char* name : {"runDock", "dispatchDock", "instructionsDock"}) {
            QWidget* panel = w.dock(name)->widget();
            QVERIFY2(panel->isVisible(), name);
            const QRect area(panel->mapTo(&w, QPoint(0, 0)), panel->size());
            QSet<QRgb> colours;
            for (int y = area.top(); y < area.bottom(); y += 2)
                for (int x = area.left(); x < area.right(); x += 2)
                    colours.insert(image.pixel(x, y));
            QVERIFY2(colours.size() > 8, name);
        }
    }
};

QTEST_MAIN(TestRunPanel)
#include "test_run_panel.moc"
