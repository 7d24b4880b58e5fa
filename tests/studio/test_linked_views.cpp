// In the studio's window the three timelines and the memory chart share one time window:
// zooming the live ranges moves the arena layout, the slots and the chart; a re-plan of the
// same model keeps the zoom and the cursor. Saves the zoomed window for a person to look at.
#include "charts/memory_chart.h"
#include "context/plan_context.h"
#include "main_window.h"
#include "planning_controls.h"
#include "studio_options.h"
#include "studio_test_util.h"
#include "timeline/timeline_view.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

std::vector<views::TimelineView*> timelines(MainWindow& w) {
    std::vector<views::TimelineView*> out;
    for (QWidget* widget :
         {w.centralWidget(), w.dock("liveRangesDock")->widget(), w.dock("slotsDock")->widget()})
        out.push_back(qobject_cast<views::TimelineView*>(widget));
    return out;
}

QPair<double, double> chartRange(MainWindow& w) {
    QAbstractAxis* axis = w.memoryChart()->chart()->axes(Qt::Horizontal).value(0);
    return {axis->property("min").toDouble(), axis->property("max").toDouble()};
}

} // namespace

class TestLinkedViews : public QObject {
    Q_OBJECT
    QTemporaryDir settingsDir_;

    static void verifyAllShow(MainWindow& w, views::TimeWindow window) {
        for (views::TimelineView* v : timelines(w)) {
            QCOMPARE(v->timeAxis().visibleLo(), window.lo);
            QCOMPARE(v->timeAxis().span(), window.span);
        }
        QCOMPARE(chartRange(w), qMakePair(window.lo, window.hi()));
    }

  private slots:
    void initTestCase() { isolateSettings(settingsDir_.path()); }

    void zoomingTheLiveRangesMovesEveryTimeline() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(waitForPlan(w, [&] { w.openModel(default_model_path(), smallSettings(), false); }));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.showMiddleOfPlan();
        auto views = timelines(w);
        QCOMPARE(views.size(), size_t(3));
        for (auto* v : views)
            QVERIFY(v);
        views::PlanContext* ctx = w.context();
        views::TimelineView* live = views[1];
        QPointF at(live->cursorX(), live->plotRect().center().y());
        QWheelEvent wheel(at, live->mapToGlobal(at), QPoint(), QPoint(0, 960), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(live, &wheel);
        const views::TimeWindow zoomed = ctx->timeWindow();
        QVERIFY(zoomed.span < double(ctx->timeEnd()) / 3);
        QVERIFY(zoomed.lo <= double(ctx->currentTime()) &&
                double(ctx->currentTime()) < zoomed.hi());
        verifyAllShow(w, zoomed);

        const QString dir = qEnvironmentVariable("TMMU_SCREENSHOT_DIR", QDir::tempPath());
        const QString path = QDir(dir).filePath("tmmu_studio_linked_zoom.png");
        QTest::qWait(50); // the chart lays out its new axis labels on an event-loop pass
        QVERIFY(w.grab().save(path));
        qInfo("screenshot: %s", qPrintable(path));

        // Another strategy for the same model: same time, so the zoom and the cursor stay.
        QVERIFY(waitIdle(w));
        const uint64_t event = ctx->currentEvent();
        w.controls()->strategyBox()->setCurrentText("slots");
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QCOMPARE(ctx->plan()->strategy, std::string("slots"));
        QCOMPARE(ctx->timeWindow(), zoomed);
        QCOMPARE(ctx->currentEvent(), event);
        verifyAllShow(w, zoomed);

        // Ctrl+0 in the arena layout resets every view.
        w.centralWidget()->setFocus();
        QTest::keyClick(w.centralWidget(), Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(ctx->timeWindow(), ctx->timeDomain());
        verifyAllShow(w, ctx->timeDomain());
    }
};

QTEST_MAIN(TestLinkedViews)
#include "test_linked_views.moc"
