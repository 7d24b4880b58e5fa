// The context's cursor is an event index over an event axis: a plan's steps by default (same
// clamping, stepping and signals as the step API it replaced), or another driver's events
// mapped to plan time, which every panel then follows.
#include "context/event_axis.h"
#include "context/plan_context.h"
#include "panels/step_control.h"
#include "plan/planner.h"
#include "source/model_source.h"
#include "timeline/live_range_view.h"

#include <QApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>

#include <memory>

using namespace tmmu;
using namespace tmmu::views;

namespace {

std::shared_ptr<const LoadedModel> example(Mode mode) {
    return std::make_shared<const LoadedModel>(load_model(
        TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json", ModelRequest{mode}));
}

std::shared_ptr<const Plan> planOf(const LoadedModel& model, Mode mode) {
    return std::make_shared<const Plan>(plan_model(model, mode, PlanOptions{}, Progress{}));
}

} // namespace

class TestEventCursor : public QObject {
    Q_OBJECT
    std::shared_ptr<const LoadedModel> model_;
    std::shared_ptr<const Plan> plan_;

  private slots:
    void initTestCase() {
        model_ = example(Mode::Training);
        plan_ = planOf(*model_, Mode::Training);
        QVERIFY(plan_->execution_order.size() > 8);
    }

    void withoutAPlanThereIsNoEvent() {
        PlanContext ctx;
        QSignalSpy moved(&ctx, &PlanContext::currentEventChanged);
        QCOMPARE(ctx.eventCount(), uint64_t(0));
        QCOMPARE(ctx.timeEnd(), uint64_t(0));
        ctx.setCurrentEvent(5);
        ctx.stepBy(3);
        QCOMPARE(ctx.currentEvent(), uint64_t(0));
        QCOMPARE(ctx.currentTime(), uint64_t(0));
        QCOMPARE(moved.count(), 0);
    }

    void planEventsAreStepsWithTheStepApisClamping() {
        PlanContext ctx;
        QSignalSpy moved(&ctx, &PlanContext::currentEventChanged);
        QSignalSpy axes(&ctx, &PlanContext::eventAxisChanged);
        ctx.setPlan(plan_, model_);
        QCOMPARE(axes.count(), 1);
        QCOMPARE(moved.count(), 1); // setPlan announces the cursor, as it did the step
        const uint64_t n = plan_->execution_order.size();
        QCOMPARE(ctx.eventCount(), n);
        QCOMPARE(ctx.timeEnd(), n);
        QCOMPARE(ctx.eventAxis().label(), QString("step"));
        ctx.setCurrentEvent(3);
        QCOMPARE(ctx.currentEvent(), uint64_t(3));
        QCOMPARE(ctx.currentTime(), uint64_t(3));
        QCOMPARE(moved.count(), 2);
        QCOMPARE(moved.last().at(0).toULongLong(), 3ull);
        ctx.setCurrentEvent(3); // unchanged: no signal
        QCOMPARE(moved.count(), 2);
        ctx.stepBy(2);
        QCOMPARE(ctx.currentEvent(), uint64_t(5));
        ctx.stepBy(-100);
        QCOMPARE(ctx.currentEvent(), uint64_t(0));
        ctx.stepBy(-1); // already first: no signal
        QCOMPARE(moved.count(), 4);
        ctx.setCurrentEvent(UINT64_MAX);
        QCOMPARE(ctx.currentEvent(), n - 1);
        ctx.stepBy(1);
        QCOMPARE(ctx.currentEvent(), n - 1);
        QCOMPARE(moved.count(), 5);
    }

    void csvEventsAreTimeUnits() {
        OffsetProblem problem;
        problem.buffers = {Buffer{0, 7, 64}, Buffer{3, 12, 64}};
        auto plan = std::make_shared<const Plan>(
            plan_problem(problem, {"a", "b"}, PlanOptions{}, Progress{}, "csv"));
        PlanContext ctx;
        ctx.setPlan(plan, nullptr);
        StepControl control(&ctx);
        QCOMPARE(ctx.eventCount(), uint64_t(12));
        QCOMPARE(ctx.eventAxis().label(), QString("time"));
        ctx.setCurrentEvent(4);
        QCOMPARE(control.positionText(), QString("time 4 of 12"));
        QCOMPARE(control.nodeText(), QString("2 live"));
    }

    void eventAxisMapsEventsToPlanTime() {
        EventAxis steps(QStringLiteral("step"), 5);
        QCOMPARE(steps.count(), uint64_t(5));
        QCOMPARE(steps.timeOf(3), uint64_t(3));
        QCOMPARE(steps.timeOf(9), uint64_t(4)); // clamped to the last event
        QCOMPARE(steps.eventAt(2), uint64_t(2));
        QCOMPARE(steps.eventAt(50), uint64_t(4));

        // Instructions: two at step 0, one at 1, three at 3, one at 7 (none at 2 or 4-6).
        EventAxis instructions(QStringLiteral("instruction"), {0, 0, 1, 3, 3, 3, 7});
        QCOMPARE(instructions.count(), uint64_t(7));
        QCOMPARE(instructions.label(), QString("instruction"));
        QCOMPARE(instructions.timeOf(1), uint64_t(0));
        QCOMPARE(instructions.timeOf(4), uint64_t(3));
        QCOMPARE(instructions.timeOf(100), uint64_t(7));
        QCOMPARE(instructions.eventAt(0), uint64_t(0)); // the first event of a step
        QCOMPARE(instructions.eventAt(3), uint64_t(3));
        QCOMPARE(instructions.eventAt(2), uint64_t(2)); // no event at 2: the last one before
        QCOMPARE(instructions.eventAt(5), uint64_t(5));
        QCOMPARE(instructions.eventAt(7), uint64_t(6));
        QCOMPARE(instructions.eventAt(70), uint64_t(6));

        EventAxis none;
        QCOMPARE(none.count(), uint64_t(0));
        QCOMPARE(none.timeOf(3), uint64_t(0));
        QCOMPARE(none.eventAt(3), uint64_t(0));
    }

    // Another driver (a runtime's instructions) moves the cursor over the same plan: every
    // panel follows it at the event's plan time; a new plan puts the steps back.
    void anotherEventAxisDrivesEveryPanel() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        StepControl control(&ctx);
        LiveRangeView live(&ctx);
        live.resize(900, 400);
        ctx.setCurrentEvent(6);
        QSignalSpy axes(&ctx, &PlanContext::eventAxisChanged);
        QSignalSpy moved(&ctx, &PlanContext::currentEventChanged);

        // Three instructions per step over the first four steps.
        std::vector<uint64_t> times;
        for (uint64_t s = 0; s < 4; ++s)
            times.insert(times.end(), {s, s, s});
        ctx.setEventAxis(EventAxis(QStringLiteral("instruction"), times));
        QCOMPARE(axes.count(), 1);
        QCOMPARE(moved.count(), 1);
        QCOMPARE(ctx.eventCount(), uint64_t(12));
        QCOMPARE(ctx.currentEvent(), uint64_t(6)); // the index is kept while it fits
        QCOMPARE(ctx.currentTime(), uint64_t(2));
        QCOMPARE(ctx.timeEnd(), uint64_t(plan_->execution_order.size())); // plan time unchanged
        QCOMPARE(control.positionText(), QString("instruction 6 of 12"));
        QCOMPARE(control.spinBox()->maximum(), 11);
        QCOMPARE(control.findChild<QLabel*>("stepAxisName")->text(), QString("Instruction"));
        QVERIFY(control.nodeText().contains(QString::fromStdString(plan_->execution_order[2])));
        QCOMPARE(live.cursorX(), live.plotRect().left() + live.timeAxis().xOf(2.5));

        ctx.stepBy(2);
        QCOMPARE(ctx.currentTime(), uint64_t(2)); // still step 2: its third instruction
        ctx.stepBy(1);
        QCOMPARE(ctx.currentTime(), uint64_t(3));
        QCOMPARE(live.cursorX(), live.plotRect().left() + live.timeAxis().xOf(3.5));
        control.spinBox()->setValue(11);
        QCOMPARE(ctx.currentEvent(), uint64_t(11));
        ctx.setCurrentEvent(50);
        QCOMPARE(ctx.currentEvent(), uint64_t(11));

        // A click at step 1 picks the first instruction of step 1.
        QPointF at(live.plotRect().left() + live.timeAxis().xOf(1.5), live.plotRect().center().y());
        for (QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease}) {
            QMouseEvent e(type, at, live.mapToGlobal(at), Qt::LeftButton,
                          type == QEvent::MouseButtonPress ? Qt::LeftButton : Qt::NoButton,
                          Qt::NoModifier);
            QApplication::sendEvent(&live, &e);
        }
        QCOMPARE(ctx.currentEvent(), uint64_t(3));

        // A shorter axis clamps the index.
        ctx.setEventAxis(EventAxis(QStringLiteral("event"), std::vector<uint64_t>{0, 2}));
        QCOMPARE(ctx.currentEvent(), uint64_t(1));
        QCOMPARE(ctx.currentTime(), uint64_t(2));

        ctx.setPlan(plan_, model_);
        QCOMPARE(ctx.eventAxis().label(), QString("step"));
        QCOMPARE(ctx.eventCount(), uint64_t(plan_->execution_order.size()));
        QCOMPARE(control.positionText(),
                 QString("step %1 of %2").arg(ctx.currentEvent()).arg(ctx.eventCount()));
    }
};

QTEST_MAIN(TestEventCursor)
#include "test_event_cursor.moc"
