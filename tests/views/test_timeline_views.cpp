// The timeline views follow the shared PlanContext: clicks select and move the step, the
// step moves the cursor line, and an offscreen render of a small plan shows the palette's
// role colours and the cursor colour. Also: keyboard/wheel navigation leaves the step keys to
// the main window, selection and pans do not rebuild geometry, and the layout's free gaps.
#include "context/plan_context.h"
#include "source/model_source.h"
#include "timeline/arena_layout_view.h"
#include "timeline/live_range_view.h"
#include "timeline/slot_view.h"

#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QTest>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace tmmu;
using namespace tmmu::views;

namespace {

std::unique_ptr<TimelineView> makeView(const QString& kind, PlanContext* ctx) {
    if (kind == "live") return std::make_unique<LiveRangeView>(ctx);
    if (kind == "slots") return std::make_unique<SlotView>(ctx);
    return std::make_unique<ArenaLayoutView>(ctx);
}

QImage render(QWidget& w) {
    QImage image(w.size(), QImage::Format_ARGB32);
    w.render(&image);
    return image;
}

int countColour(const QImage& image, const QRect& area, QColor colour) {
    QRgb want = colour.rgb() & 0xFFFFFF;
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x)
            if ((image.pixel(x, y) & 0xFFFFFF) == want) ++n;
    return n;
}

// Roles the view draws: every tensor for the row views, the shown arena's for the layout.
std::vector<Role> rolesShown(const TimelineView& view, const Plan& plan) {
    auto* layout = qobject_cast<const ArenaLayoutView*>(&view);
    std::vector<Role> roles;
    for (const PlannedTensor& t : plan.tensors)
        if ((!layout || int(t.arena) == layout->arena()) &&
            std::find(roles.begin(), roles.end(), t.role) == roles.end())
            roles.push_back(t.role);
    return roles;
}

// The tensor with the largest visible rect: an easy, unambiguous click target.
int largestVisible(const TimelineView& view, const Plan& plan) {
    int best = -1;
    double bestArea = 0;
    for (int i = 0; i < int(plan.tensors.size()); ++i) {
        QRectF r = view.rectOf(i).intersected(QRectF(view.plotRect()));
        if (r.width() * r.height() > bestArea) {
            best = i;
            bestArea = r.width() * r.height();
        }
    }
    return best;
}

} // namespace

class TestTimelineViews : public QObject {
    Q_OBJECT
    PlanContext ctx_;
    std::shared_ptr<const Plan> plan_;
    std::shared_ptr<const LoadedModel> model_;

    void addKinds() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("live ranges") << "live";
        QTest::newRow("slots") << "slots";
        QTest::newRow("arena layout") << "layout";
    }

  private slots:
    void initTestCase() {
        std::string path = TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json";
        model_ = std::make_shared<LoadedModel>(load_model(path, ModelRequest{Mode::Training}));
        plan_ = std::make_shared<Plan>(plan_model(*model_, Mode::Training, PlanOptions{}, {}));
        ctx_.setPlan(plan_, model_);
        QVERIFY(ctx_.eventCount() > 4);
        QVERIFY(ctx_.plan()->tensors.size() > 10);
    }
    void init() {
        // The time window is shared through the context: each test starts on the whole plan.
        ctx_.resetTimeWindow();
        ctx_.setColorMode(ColorMode::Role);
        ctx_.selectTensor(-1);
        ctx_.setCurrentEvent(0);
    }

    void clickSelectsTheTensorAndMovesTheStep_data() { addKinds(); }
    void clickSelectsTheTensorAndMovesTheStep() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        int target = largestVisible(*view, *ctx_.plan());
        QVERIFY(target >= 0);
        QPoint at = view->rectOf(target).intersected(QRectF(view->plotRect())).center().toPoint();
        QTest::mouseClick(view.get(), Qt::LeftButton, {}, at);
        QCOMPARE(ctx_.selectedTensor(), view->tensorAt(at));
        QVERIFY(ctx_.selectedTensor() >= 0);
        QVERIFY(view->rectOf(ctx_.selectedTensor()).adjusted(-1, -1, 1, 1).contains(at));
        uint64_t step = view->timeAxis().stepAt(at.x() - view->plotRect().left());
        QCOMPARE(ctx_.currentEvent(), step);
        // A drag pans instead of selecting.
        ctx_.selectTensor(-1);
        view->zoomTime(4, at.x());
        double lo = view->timeAxis().visibleLo();
        QPointF to = at + QPoint(-60, 0);
        QMouseEvent press(QEvent::MouseButtonPress, at, view->mapToGlobal(QPointF(at)),
                          Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QMouseEvent move(QEvent::MouseMove, to, view->mapToGlobal(to), Qt::NoButton, Qt::LeftButton,
                         Qt::NoModifier);
        QMouseEvent release(QEvent::MouseButtonRelease, to, view->mapToGlobal(to), Qt::LeftButton,
                            Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(view.get(), &press);
        QApplication::sendEvent(view.get(), &move);
        QApplication::sendEvent(view.get(), &release);
        QCOMPARE(ctx_.selectedTensor(), -1);
        QVERIFY(view->timeAxis().visibleLo() > lo);
    }

    void theStepMovesTheCursorLine_data() { addKinds(); }
    void theStepMovesTheCursorLine() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(900, 500);
        QRect plot = view->plotRect();
        QColor cursor = ViewPalette::fromApplication().cursor();
        for (uint64_t step : {uint64_t(0), ctx_.eventCount() / 2, ctx_.eventCount() - 1}) {
            ctx_.setCurrentEvent(step);
            double expected = plot.left() + view->timeAxis().xOf(double(step) + 0.5);
            QCOMPARE(view->cursorX(), expected);
            QImage image = render(*view);
            int x = int(std::lround(expected));
            QRect column(x - 1, plot.top(), 3, plot.height());
            QVERIFY2(countColour(image, column, cursor) >= plot.height(),
                     "the cursor line runs the height of the plot");
        }
    }

    void renderingShowsTheRoleColours_data() { addKinds(); }
    void renderingShowsTheRoleColours() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        ctx_.setCurrentEvent(ctx_.eventCount() / 2);
        QImage image = render(*view);
        ViewPalette palette = ViewPalette::fromApplication();
        QRect plot = view->plotRect();
        QVERIFY(countColour(image, plot, palette.background()) > 0);
        QVERIFY(countColour(image, plot, palette.cursor()) >= plot.height());
        int coloured = 0;
        for (Role role : rolesShown(*view, *ctx_.plan())) {
            int n = countColour(image, plot, palette.role(role));
            QVERIFY2(n > 0, qPrintable(QString("no pixel of role %1").arg(int(role))));
            coloured += n;
        }
        // Not blank: the bars cover a real part of the plot.
        QVERIFY(coloured > plot.width() * plot.height() / 50);
    }

    // The header's legend shows a swatch for every role drawn, at any width: when it does not
    // fit beside the header it takes rows of its own (the plot starts lower) instead of
    // dropping roles.
    void legendShowsEveryRoleAtAnyWidth() {
        ViewPalette palette = ViewPalette::fromApplication();
        for (const QString& kind :
             {QStringLiteral("live"), QStringLiteral("slots"), QStringLiteral("layout")}) {
            auto view = makeView(kind, &ctx_);
            int lastTop = 0;
            for (int width : {1400, 600, 300}) {
                view->resize(width, 500);
                QImage image = render(*view);
                const QRect strip(0, 0, width, view->plotRect().top());
                for (Role role : rolesShown(*view, *ctx_.plan()))
                    QVERIFY2(countColour(image, strip, palette.role(role)) >= 20,
                             qPrintable(QStringLiteral("%1 at %2 px: no legend swatch for role %3")
                                            .arg(kind)
                                            .arg(width)
                                            .arg(int(role))));
                QVERIFY(view->plotRect().top() >= lastTop); // narrower: never fewer rows
                lastTop = view->plotRect().top();
            }
            QVERIFY(lastTop > 22); // at 300 px the legend has rows of its own
        }
    }

    // The header's parts stay whole: they flow into rows of their own rather than being cut.
    void headerPartsFlowWhole() {
        const QFontMetrics fm(QApplication::font());
        const QString header = QStringLiteral("peak 10.58 GiB (+0.0 %) · step 296: 5.57 GiB free "
                                              "in 6 gaps · 1,483 tensors");
        const QStringList parts = header.split(QStringLiteral(" · "));
        const int widest = std::max({fm.horizontalAdvance(parts[0]), fm.horizontalAdvance(parts[1]),
                                     fm.horizontalAdvance(parts[2])});
        // Room for everything: one line.
        QCOMPARE(TimelineView::flowHeader(fm, header, 2000, 2000, 0), QStringList{header});
        // Room for one part per row: each whole, on a row of its own.
        QCOMPARE(TimelineView::flowHeader(fm, header, widest + 1, widest + 1, 0), parts);
        // The first row (beside a selector) too narrow for any part: it stays empty.
        QCOMPARE(TimelineView::flowHeader(fm, header, 10, widest + 1, 0),
                 QStringList{QString()} + parts);
        // Slack keeps room for numbers that grow: a part that fits exactly moves on.
        QCOMPARE(TimelineView::flowHeader(fm, parts[0], fm.horizontalAdvance(parts[0]), 2000, 4),
                 (QStringList{QString(), parts[0]}));
        // At most maxLines: the rest joins the last line (elided when drawn).
        const QStringList two = TimelineView::flowHeader(fm, header, widest + 1, widest + 1, 0, 2);
        QCOMPARE(two.size(), 2);
        QCOMPARE(two.join(QStringLiteral(" · ")), header);
    }

    void selectionIsAnOverlay_data() { addKinds(); }
    void selectionIsAnOverlay() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        render(*view);
        int builds = view->geometryBuilds();
        int target = largestVisible(*view, *ctx_.plan());
        ctx_.selectTensor(target);
        QImage image = render(*view);
        QCOMPARE(view->geometryBuilds(), builds);
        QRect around = view->rectOf(target).toAlignedRect().adjusted(-3, -3, 3, 3);
        around = around.intersected(view->plotRect());
        QVERIFY(countColour(image, around, ViewPalette::fromApplication().selection()) > 8);
        ctx_.setCurrentEvent(1);
        render(*view);
        QCOMPARE(view->geometryBuilds(), builds);
    }

    void smallPansReuseTheGeometry_data() { addKinds(); }
    void smallPansReuseTheGeometry() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        view->zoomTime(4, view->plotRect().center().x());
        render(*view);
        int builds = view->geometryBuilds();
        double lo = view->timeAxis().visibleLo();
        view->panBy(25, 0);
        render(*view);
        QVERIFY(view->timeAxis().visibleLo() > lo);
        QCOMPARE(view->geometryBuilds(), builds);
        double span = view->timeAxis().span();
        view->zoomTime(0.5, 300);
        QVERIFY(view->timeAxis().span() > span);
        render(*view);
        QCOMPARE(view->geometryBuilds(), builds + 1);
    }

    void slotColourModeRebuildsWithSlotColours_data() { addKinds(); }
    void slotColourModeRebuildsWithSlotColours() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        render(*view);
        int builds = view->geometryBuilds();
        ctx_.setColorMode(ColorMode::Slot);
        QImage image = render(*view);
        QCOMPARE(view->geometryBuilds(), builds + 1);
        ViewPalette palette = ViewPalette::fromApplication();
        int present = 0;
        for (uint32_t s = 0; s < 7; ++s)
            present += countColour(image, view->plotRect(), palette.slot(s)) > 0;
        QVERIFY(present >= 3);
    }

    void keysZoomAndPanButLeaveStepKeysAlone_data() { addKinds(); }
    void keysZoomAndPanButLeaveStepKeysAlone() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        double whole = view->timeAxis().span();
        QKeyEvent w(QEvent::KeyPress, Qt::Key_W, Qt::NoModifier);
        QApplication::sendEvent(view.get(), &w);
        QVERIFY(view->timeAxis().span() < whole);
        double lo = view->timeAxis().visibleLo();
        QKeyEvent d(QEvent::KeyPress, Qt::Key_D, Qt::NoModifier);
        QApplication::sendEvent(view.get(), &d);
        QVERIFY(view->timeAxis().visibleLo() > lo);
        for (Qt::Key key : {Qt::Key_Left, Qt::Key_Right, Qt::Key_Home, Qt::Key_End}) {
            QKeyEvent e(QEvent::KeyPress, key, Qt::NoModifier);
            QApplication::sendEvent(view.get(), &e);
            QVERIFY2(!e.isAccepted(), "step keys must reach the main window");
        }
        QKeyEvent reset(QEvent::KeyPress, Qt::Key_0, Qt::ControlModifier);
        QApplication::sendEvent(view.get(), &reset);
        QCOMPARE(view->timeAxis().span(), whole);
    }

    void wheelZoomsAroundTheCursor_data() { addKinds(); }
    void wheelZoomsAroundTheCursor() {
        QFETCH(QString, kind);
        auto view = makeView(kind, &ctx_);
        view->resize(1000, 600);
        QPointF at(view->plotRect().left() + 300.0, view->plotRect().center().y());
        double t = view->timeAxis().timeAt(at.x() - view->plotRect().left());
        double span = view->timeAxis().span();
        QWheelEvent wheel(at, at, QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.get(), &wheel);
        QVERIFY(view->timeAxis().span() < span);
        QVERIFY(std::fabs(view->timeAxis().timeAt(at.x() - view->plotRect().left()) - t) < 1e-6);
        double rows = view->valueAxis().span();
        QWheelEvent ctrl(at, at, QPoint(), QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                         Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.get(), &ctrl);
        QVERIFY(view->valueAxis().span() < rows);
    }

    void followsTheDarkPalette() {
        QPalette saved = QApplication::palette();
        QPalette dark = saved;
        dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x20));
        QApplication::setPalette(dark);
        LiveRangeView view(&ctx_);
        view.resize(600, 400);
        QImage image = render(view);
        QApplication::setPalette(saved);
        QRect all = image.rect();
        int area = all.width() * all.height();
        QVERIFY(countColour(image, all, ViewPalette(true).background()) > area / 20);
        // White only where a label sits on a dark bar.
        QVERIFY(countColour(image, all, ViewPalette(false).background()) < area / 100);
    }

    void layoutFreeGapsAreTheHolesBelowThePeak() {
        ArenaLayoutView view(&ctx_);
        view.resize(1000, 600);
        for (int a = 0; a < int(ctx_.plan()->arenas.size()); ++a) {
            view.setArena(a);
            QCOMPARE(view.arena(), a);
            const ArenaPlan& arena = ctx_.plan()->arenas[size_t(a)];
            uint64_t peak = arena.metrics.peak_bytes;
            for (uint64_t s = 0; s < ctx_.timeEnd(); ++s) {
                uint64_t free = 0, last = 0;
                for (const auto& g : view.freeGapsAt(s)) {
                    QVERIFY(g.size > 0 && g.offset >= last && g.offset + g.size <= peak);
                    last = g.offset + g.size;
                    free += g.size;
                    for (size_t b = 0; b < arena.problem.buffers.size(); ++b) {
                        const Buffer& buf = arena.problem.buffers[b];
                        if (buf.begin > s || buf.end <= s) continue;
                        uint64_t off = arena.solution.offsets[b];
                        QVERIFY2(off + buf.size <= g.offset || off >= g.offset + g.size,
                                 "a gap overlaps a live buffer");
                    }
                }
                // Gaps plus live bytes (buffers never overlap) fill [0, peak) exactly.
                uint64_t live = 0;
                for (size_t b = 0; b < arena.problem.buffers.size(); ++b) {
                    const Buffer& buf = arena.problem.buffers[b];
                    if (buf.begin <= s && s < buf.end) live += buf.size;
                }
                QCOMPARE(free + live, peak);
            }
        }
    }

    void layoutFollowsSelectionAcrossArenas() {
        ArenaLayoutView view(&ctx_);
        view.resize(1000, 600);
        QVERIFY(ctx_.plan()->arenas.size() >= 2);
        QComboBox* combo = view.arenaSelector();
        QCOMPARE(combo->count(), int(ctx_.plan()->arenas.size()));
        QCOMPARE(combo->currentIndex(), view.arena());
        int other = -1;
        for (int i = 0; i < int(ctx_.plan()->tensors.size()) && other < 0; ++i)
            if (int(ctx_.plan()->tensors[size_t(i)].arena) != view.arena()) other = i;
        QVERIFY(other >= 0);
        ctx_.selectTensor(other);
        QCOMPARE(view.arena(), int(ctx_.plan()->tensors[size_t(other)].arena));
        QCOMPARE(combo->currentIndex(), view.arena());
        QVERIFY(!view.rectOf(other).isNull());
        int next = (view.arena() + 1) % combo->count();
        combo->setCurrentIndex(next);
        QCOMPARE(view.arena(), next);
    }

    void replanningKeepsTheViewsConsistent() {
        LiveRangeView live(&ctx_);
        SlotView slotView(&ctx_);
        live.resize(800, 400);
        slotView.resize(800, 400);
        render(live);
        ctx_.setPlan(nullptr, nullptr);
        QCOMPARE(live.tensorAt(live.plotRect().center()), -1);
        QVERIFY(live.rectOf(0).isNull());
        render(live); // "No plan", no crash
        ctx_.setPlan(plan_, model_);
        QCOMPARE(live.rowCount(), int(plan_->tensors.size()));
        QVERIFY(slotView.rowCount() > 0);
        QVERIFY(!live.rectOf(0).isNull());
    }
};

QTEST_MAIN(TestTimelineViews)
#include "test_timeline_views.moc"
