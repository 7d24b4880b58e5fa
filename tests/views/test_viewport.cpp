// The shared time window: zooming, panning or resetting any timeline moves all three and the
// memory chart; value axes stay per view; the context emits once per change and views never
// echo it back; pans inside the fetched window reuse every view's geometry; a new plan keeps,
// clamps or resets the window. Also renders the views stacked after a zoom (a PNG for people).
#include "charts/memory_chart.h"
#include "context/plan_context.h"
#include "plan/planner.h"
#include "source/model_source.h"
#include "timeline/arena_layout_view.h"
#include "timeline/live_range_view.h"
#include "timeline/slot_view.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QDir>
#include <QImage>
#include <QKeyEvent>
#include <QLineSeries>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include <array>
#include <memory>

using namespace tmmu;
using namespace tmmu::views;

namespace {

const std::string kGpt2 = TMMU_SOURCE_DIR "/resources/models/gpt2-small.json";

std::shared_ptr<const LoadedModel> load(const std::string& path, Mode mode) {
    return std::make_shared<const LoadedModel>(load_model(path, ModelRequest{mode, 1, 64}));
}

std::shared_ptr<const Plan> planOf(const LoadedModel& model, Mode mode) {
    return std::make_shared<const Plan>(plan_model(model, mode, PlanOptions{}, Progress{}));
}

// A CSV-style plan whose time runs over [0, end): one buffer per unit-long interval.
std::shared_ptr<const Plan> problemPlan(uint32_t end) {
    OffsetProblem problem;
    std::vector<std::string> ids;
    for (uint32_t t = 0; t < end; t += 2) {
        problem.buffers.push_back(Buffer{t, std::min(end, t + 3), 64});
        ids.push_back("b" + std::to_string(t));
    }
    return std::make_shared<const Plan>(
        plan_problem(problem, ids, PlanOptions{}, Progress{}, "viewport"));
}

double chartMin(const MemoryChart& chart) {
    return chart.chart()->axes(Qt::Horizontal).value(0)->property("min").toDouble();
}
double chartMax(const MemoryChart& chart) {
    return chart.chart()->axes(Qt::Horizontal).value(0)->property("max").toDouble();
}

QImage render(QWidget& w) {
    QImage image(w.size(), QImage::Format_ARGB32);
    w.render(&image);
    return image;
}

} // namespace

class TestViewport : public QObject {
    Q_OBJECT
    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const Plan> plan_;
    std::unique_ptr<PlanContext> ctx_;
    std::unique_ptr<LiveRangeView> live_;
    std::unique_ptr<SlotView> slots_;
    std::unique_ptr<ArenaLayoutView> layout_;
    std::unique_ptr<MemoryChart> chart_;

    std::array<TimelineView*, 3> views() const {
        return {live_.get(), slots_.get(), layout_.get()};
    }
    // Every timeline and the chart show exactly the context's window.
    void verifyAllShowTheWindow() {
        const TimeWindow w = ctx_->timeWindow();
        for (TimelineView* v : views()) {
            QCOMPARE(v->timeAxis().visibleLo(), w.lo);
            QCOMPARE(v->timeAxis().span(), w.span);
        }
        QCOMPARE(chartMin(*chart_), w.lo);
        QCOMPARE(chartMax(*chart_), w.hi());
    }
    bool showsWholePlan() const {
        return ctx_->timeWindow() == ctx_->timeDomain() &&
               ctx_->timeWindow().hi() == double(ctx_->timeEnd());
    }

    void zoomWithTheWheel(TimelineView* driver) {
        ctx_->resetTimeWindow();
        QVERIFY(showsWholePlan());
        verifyAllShowTheWindow();
        QPointF at(driver->plotRect().left() + driver->plotRect().width() / 3.0,
                   driver->plotRect().center().y());
        double anchor = driver->timeAxis().timeAt(at.x() - driver->plotRect().left());
        QWheelEvent wheel(at, driver->mapToGlobal(at), QPoint(), QPoint(0, 720), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(driver, &wheel);
        const TimeWindow w = ctx_->timeWindow();
        QVERIFY(w.span < 0.5 * double(ctx_->timeEnd()));
        QVERIFY(w.lo > 0);
        // The wheel keeps the time under the mouse fixed in the view that took it.
        QVERIFY(std::fabs(driver->timeAxis().timeAt(at.x() - driver->plotRect().left()) - anchor) <
                1e-6);
        verifyAllShowTheWindow();
        // The rows, slots and bytes are not shared: no view's value axis moved.
        for (TimelineView* v : views())
            QVERIFY(v->valueAxis().showsWholeDomain());
    }

    void panWithTheKeys(TimelineView* driver) {
        driver->setTimeRange(10, 20);
        QCOMPARE(ctx_->timeWindow().lo, 10.0);
        QCOMPARE(ctx_->timeWindow().hi(), 20.0);
        verifyAllShowTheWindow();
        QKeyEvent d(QEvent::KeyPress, Qt::Key_D, Qt::NoModifier);
        QApplication::sendEvent(driver, &d);
        const TimeWindow right = ctx_->timeWindow();
        QVERIFY(right.lo > 10);
        QCOMPARE(right.span, 10.0); // pans keep the span bit-identical
        verifyAllShowTheWindow();
        QKeyEvent a(QEvent::KeyPress, Qt::Key_A, Qt::NoModifier);
        QApplication::sendEvent(driver, &a);
        QVERIFY(ctx_->timeWindow().lo < right.lo);
        verifyAllShowTheWindow();
        QKeyEvent s(QEvent::KeyPress, Qt::Key_S, Qt::NoModifier);
        QApplication::sendEvent(driver, &s);
        QVERIFY(ctx_->timeWindow().span > 10);
        verifyAllShowTheWindow();
    }

  private slots:
    void initTestCase() {
        model_ = load(kGpt2, Mode::Training);
        plan_ = planOf(*model_, Mode::Training);
    }
    // Fresh views of different widths: the window is in time units, not pixels.
    void init() {
        ctx_ = std::make_unique<PlanContext>();
        ctx_->setPlan(plan_, model_);
        live_ = std::make_unique<LiveRangeView>(ctx_.get());
        slots_ = std::make_unique<SlotView>(ctx_.get());
        layout_ = std::make_unique<ArenaLayoutView>(ctx_.get());
        chart_ = std::make_unique<MemoryChart>(ctx_.get());
        live_->resize(1000, 400);
        slots_->resize(700, 300);
        layout_->resize(1200, 500);
        chart_->resize(600, 300);
        QVERIFY(ctx_->timeEnd() > 200);
    }
    void cleanup() {
        chart_.reset();
        layout_.reset();
        slots_.reset();
        live_.reset();
        ctx_.reset();
    }

    void zoomingOneTimelineZoomsAll() {
        for (TimelineView* driver : views()) {
            zoomWithTheWheel(driver);
            QVERIFY2(!QTest::currentTestFailed(), qPrintable(driver->objectName() + " drove"));
        }
    }

    void keyPansInOneMoveAll() {
        for (TimelineView* driver : views()) {
            panWithTheKeys(driver);
            QVERIFY2(!QTest::currentTestFailed(), qPrintable(driver->objectName() + " drove"));
        }
    }

    void resetInOneResetsAllButKeepsOtherValueZooms() {
        live_->zoomTime(3, live_->plotRect().center().x());
        layout_->zoomValues(4, layout_->plotRect().center().y());
        const double bytes = layout_->valueAxis().span();
        QVERIFY(!showsWholePlan());
        QKeyEvent reset(QEvent::KeyPress, Qt::Key_0, Qt::ControlModifier);
        QApplication::sendEvent(slots_.get(), &reset);
        QVERIFY(showsWholePlan());
        verifyAllShowTheWindow();
        QCOMPARE(layout_->valueAxis().span(), bytes);
        // The context's own reset does the same.
        layout_->zoomTime(2, layout_->plotRect().center().x());
        ctx_->resetTimeWindow();
        QVERIFY(showsWholePlan());
        verifyAllShowTheWindow();
    }

    void oneChangeEmitsOnceAndNothingEchoes() {
        QSignalSpy windows(ctx_.get(), &PlanContext::timeWindowChanged);
        live_->zoomTime(2, live_->plotRect().center().x());
        QCOMPARE(windows.count(), 1);
        QCOMPARE(windows.at(0).at(0).value<TimeWindow>(), ctx_->timeWindow());
        slots_->panBy(40, 0);
        QCOMPARE(windows.count(), 2);
        // Value-only navigation, a no-op pan and a visible cursor move leave the window alone.
        layout_->panBy(0, 30);
        slots_->zoomValues(2, slots_->plotRect().center().y());
        live_->panBy(0, 0);
        ctx_->setTimeWindow(ctx_->timeWindow());
        ctx_->setCurrentEvent(uint64_t(ctx_->timeWindow().lo + ctx_->timeWindow().span / 2));
        QCOMPARE(windows.count(), 2);
        // A cursor moved out of the window scrolls it once, for every view at the same time.
        ctx_->setCurrentEvent(0);
        QCOMPARE(windows.count(), 3);
        QVERIFY(ctx_->timeWindow().lo <= 0.5 && 0.5 <= ctx_->timeWindow().hi());
        verifyAllShowTheWindow();
        // A drag emits once per mouse move (leftwards: the window sits at time 0).
        auto mouse = [&](QEvent::Type type, QPointF at, Qt::MouseButtons buttons) {
            QMouseEvent e(type, at, live_->mapToGlobal(at),
                          type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton, buttons,
                          Qt::NoModifier);
            QApplication::sendEvent(live_.get(), &e);
        };
        QPointF from = live_->plotRect().center();
        mouse(QEvent::MouseButtonPress, from, Qt::LeftButton);
        for (int i = 1; i <= 3; ++i)
            mouse(QEvent::MouseMove, from - QPointF(10 * i, 0), Qt::LeftButton);
        mouse(QEvent::MouseButtonRelease, from - QPointF(30, 0), Qt::NoButton);
        QCOMPARE(windows.count(), 6);
        verifyAllShowTheWindow();
    }

    void pansInsideTheFetchedWindowRebuildNothing() {
        live_->zoomTime(4, live_->plotRect().center().x());
        for (TimelineView* v : views())
            render(*v);
        std::array<int, 3> builds{};
        for (size_t i = 0; i < 3; ++i)
            builds[i] = views()[i]->geometryBuilds();
        const double lo = ctx_->timeWindow().lo;
        slots_->panBy(12, 0);
        QKeyEvent d(QEvent::KeyPress, Qt::Key_D, Qt::NoModifier); // a tenth of the live plot
        QApplication::sendEvent(live_.get(), &d);
        for (TimelineView* v : views())
            render(*v);
        QVERIFY(ctx_->timeWindow().lo > lo);
        for (size_t i = 0; i < 3; ++i)
            QCOMPARE(views()[i]->geometryBuilds(), builds[i]);
        // A zoom changes every view's scale: each rebuilds once.
        layout_->zoomTime(1.5, layout_->plotRect().center().x());
        for (TimelineView* v : views())
            render(*v);
        for (size_t i = 0; i < 3; ++i)
            QCOMPARE(views()[i]->geometryBuilds(), builds[i] + 1);
    }

    void memoryChartResamplesOnlyWhenTheWindowLeavesItsBuckets() {
        QCOMPARE(chart_->sampledLo(), 0.0);
        QCOMPARE(chart_->sampledHi(), double(ctx_->timeEnd()));
        // Zoomed in 4x: re-sampled over the window and one window either side.
        const double end = double(ctx_->timeEnd());
        ctx_->setTimeWindow({end / 2, end / 8});
        QCOMPARE(chart_->sampledLo(), end / 2 - end / 8);
        QCOMPARE(chart_->sampledHi(), end / 2 + 2 * end / 8);
        // A pan inside those buckets only moves the axis.
        ctx_->setTimeWindow({end / 2 + end / 16, end / 8});
        QCOMPARE(chart_->sampledLo(), end / 2 - end / 8);
        QCOMPARE(chartMin(*chart_), end / 2 + end / 16);
        // Every point of the stacked series lies in the sampled range.
        for (QAbstractSeries* s : chart_->chart()->series())
            if (auto* line = qobject_cast<QLineSeries*>(s); line && line->count() > 2)
                QVERIFY(line->at(0).x() <= chart_->sampledLo() + 1 &&
                        line->at(line->count() - 1).x() >= chart_->sampledHi() - 1);
        ctx_->resetTimeWindow();
        QCOMPARE(chart_->sampledLo(), 0.0);
        QCOMPARE(chart_->sampledHi(), end);
        verifyAllShowTheWindow();
    }

    void newPlansKeepClampOrResetTheWindow() {
        QSignalSpy windows(ctx_.get(), &PlanContext::timeWindowChanged);
        // The same model re-planned over the same time (another strategy): kept exactly.
        live_->setTimeRange(5, 15);
        ctx_->setCurrentEvent(9);
        const TimeWindow zoomed = ctx_->timeWindow();
        windows.clear();
        PlanOptions slotsOnly;
        slotsOnly.strategy = "slots";
        auto replanned = std::make_shared<const Plan>(
            plan_model(*model_, Mode::Training, slotsOnly, Progress{}));
        QCOMPARE(plan_time_end(*replanned), ctx_->timeEnd());
        ctx_->setPlan(replanned, model_);
        QCOMPARE(ctx_->timeWindow(), zoomed);
        QCOMPARE(ctx_->currentEvent(), uint64_t(9));
        QCOMPARE(windows.count(), 0);
        verifyAllShowTheWindow();

        // The same model over a shorter time (inference): clamped into it, span kept.
        auto inferenceModel = load(kGpt2, Mode::Inference);
        auto inference = planOf(*inferenceModel, Mode::Inference);
        const double shorter = double(plan_time_end(*inference));
        QVERIFY(shorter < double(ctx_->timeEnd()) && shorter > 10);
        live_->setTimeRange(double(ctx_->timeEnd()) - 10, double(ctx_->timeEnd()));
        ctx_->setCurrentEvent(ctx_->eventCount() - 1);
        windows.clear();
        ctx_->setPlan(inference, inferenceModel);
        QCOMPARE(ctx_->timeWindow().span, 10.0);
        QCOMPARE(ctx_->timeWindow().hi(), shorter);
        QCOMPARE(ctx_->currentEvent(), ctx_->eventCount() - 1);
        QCOMPARE(windows.count(), 1);
        verifyAllShowTheWindow();

        // Another model: the whole plan, cursor at the start.
        auto other = load(TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json",
                          Mode::Inference);
        ctx_->setPlan(planOf(*other, Mode::Inference), other);
        QVERIFY(showsWholePlan());
        QCOMPARE(ctx_->currentEvent(), uint64_t(0));
        verifyAllShowTheWindow();

        // Plans without a model (CSV problems) cannot be matched: always the whole plan.
        ctx_->setPlan(problemPlan(1000), nullptr);
        live_->setTimeRange(900, 950);
        ctx_->setPlan(problemPlan(400), nullptr);
        QVERIFY(showsWholePlan());
        QCOMPARE(ctx_->timeEnd(), uint64_t(400));
        verifyAllShowTheWindow();
        ctx_->setPlan(nullptr, nullptr);
        QCOMPARE(ctx_->timeWindow(), (TimeWindow{0, 1}));
    }

    // The three timelines and the chart stacked after a zoom, their time axes side by side: the
    // cursor line and every tick sit at the same time in each. Saved for a person to look at.
    void zoomedViewsLineUp() {
        constexpr int kWidth = 1000, kHeight = 300;
        std::array<QWidget*, 4> stack{live_.get(), slots_.get(), layout_.get(), chart_.get()};
        for (QWidget* w : stack)
            w->resize(kWidth, kHeight);
        ctx_->setCurrentEvent(ctx_->eventCount() / 2);
        double cursorAt = live_->cursorX();
        live_->zoomTime(5, cursorAt);
        QCOMPARE(live_->cursorX(), cursorAt); // zoomed around the cursor
        QImage image(kWidth, kHeight * int(stack.size()), QImage::Format_ARGB32);
        {
            QPainter p(&image);
            for (size_t i = 0; i < stack.size(); ++i)
                stack[i]->render(&p, QPoint(0, kHeight * int(i)));
        }
        const QString dir = qEnvironmentVariable("TMMU_SCREENSHOT_DIR", QDir::tempPath());
        const QString path = QDir(dir).filePath("tmmu_viewport_linked.png");
        QVERIFY(image.save(path));
        qInfo("screenshot: %s", qPrintable(path));
        // Each timeline draws the cursor line, at the same time, down its whole plot.
        const QRgb cursor = ViewPalette::fromApplication().cursor().rgb() & 0xFFFFFF;
        for (size_t i = 0; i < 3; ++i) {
            TimelineView* v = views()[i];
            QRect plot = v->plotRect().translated(0, kHeight * int(i));
            int x = int(std::lround(v->cursorX()));
            int n = 0;
            for (int y = plot.top(); y <= plot.bottom(); ++y)
                n += (image.pixel(x, y) & 0xFFFFFF) == cursor ||
                     (image.pixel(x - 1, y) & 0xFFFFFF) == cursor;
            QVERIFY2(n >= plot.height(), qPrintable(v->objectName()));
            QCOMPARE(v->timeAxis().timeAt(v->cursorX() - v->plotRect().left()),
                     double(ctx_->currentTime()) + 0.5);
        }
        QCOMPARE(chart_->cursorX(), double(ctx_->currentTime()) + 0.5);
        verifyAllShowTheWindow();
    }
};

QTEST_MAIN(TestViewport)
#include "test_viewport.moc"
