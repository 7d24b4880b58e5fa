// Geometry of the timeline views, data-driven: x <-> time mapping across zoom levels and
// widths, zoom anchoring, pan clamps, the visibility indexes, level-of-detail merging, and hit
// testing (inside, outside, between bars, 1-px-thin bars).
#include "context/plan_context.h"
#include "plan/planner.h"
#include "plan/random_problem.h"
#include "source/model_source.h"
#include "style/text_format.h"
#include "timeline/arena_layout_view.h"
#include "timeline/live_range_view.h"
#include "timeline/lod.h"
#include "timeline/slot_view.h"
#include "timeline/tenure.h"
#include "timeline/time_axis.h"

#include <QApplication>
#include <QTest>

#include <cmath>
#include <memory>
#include <random>
#include <set>

using namespace tmmu;
using namespace tmmu::views;

namespace {

// A plan whose tensors t0..tn-1 are the given buffers, in one arena, offsets by greedy-size.
std::shared_ptr<const Plan> planOf(const std::vector<Buffer>& buffers) {
    OffsetProblem problem;
    problem.buffers = buffers;
    std::vector<std::string> ids;
    for (size_t i = 0; i < buffers.size(); ++i)
        ids.push_back("t" + std::to_string(i));
    PlanOptions options;
    options.strategy = "greedy-size";
    return std::make_shared<Plan>(plan_problem(problem, ids, options, Progress{}, "test"));
}

Buffer buffer(uint64_t begin, uint64_t end, uint64_t size) {
    Buffer b;
    b.begin = begin;
    b.end = end;
    b.size = size;
    return b;
}

std::unique_ptr<TimelineView> makeView(const QString& kind, PlanContext* ctx) {
    if (kind == "live") return std::make_unique<LiveRangeView>(ctx);
    if (kind == "slots") return std::make_unique<SlotView>(ctx);
    return std::make_unique<ArenaLayoutView>(ctx);
}

} // namespace

class TestTimelineGeometry : public QObject {
    Q_OBJECT
  private slots:
    // An in-place chain's buffer is drawn split into its tensors at the middle of each
    // hand-over step (their bars covered one another and their labels overprinted); a view
    // keeps its whole lifetime over its base; the arena layout picks the tensor drawn there.
    void inPlaceChainsSplitAtTheirHandOvers() {
        auto chain = std::make_shared<LoadedModel>(load_model(
            TMMU_SOURCE_DIR "/resources/models/examples/linear_chain.json", {Mode::Inference}));
        auto plan = std::make_shared<const Plan>(
            plan_model(*chain, Mode::Inference, PlanOptions{}, Progress{}));
        const std::vector<Tenure> tenures = buffer_tenures(*plan);
        PlanContext ctx;
        ctx.setPlan(plan, chain);
        auto drawn = [&](const char* id) { return tenures[size_t(ctx.findTensor(id))]; };
        QCOMPARE(drawn("x0").begin, 0.0);
        QCOMPARE(drawn("x0").end, 0.5); // x1 is written at step 0, where x0 is read
        for (int k = 1; k < 8; ++k) {
            const Tenure t = drawn(qPrintable(QStringLiteral("x%1").arg(k)));
            QVERIFY(t.takesOver);
            QCOMPARE(t.begin, k - 0.5);
            QCOMPARE(t.end, k + 0.5);
        }
        QCOMPARE(drawn("x8").begin, 7.5); // the output takes over though it dies with x7
        QCOMPARE(drawn("x8").end, 8.0);

        ArenaLayoutView layout(&ctx);
        layout.resize(800, 400);
        const QRectF x5 = layout.rectOf(ctx.findTensor("x5"));             // lifetime [4, 6)
        const QPointF late(x5.left() + x5.width() * 0.4, x5.center().y()); // step 4.8
        QCOMPARE(layout.tensorAt(late.toPoint()), ctx.findTensor("x5"));
        const QPointF early(x5.left() + x5.width() * 0.1, x5.center().y()); // step 4.2
        QCOMPARE(layout.tensorAt(early.toPoint()), ctx.findTensor("x4"));

        // Without the graph, a tensor inside another's lifetime is taken for a view and drawn
        // over it, which keeps its own; one that outlives it takes the buffer over.
        Plan views;
        views.tensors = {{.id = "base", .life = {0, 10}},
                         {.id = "inside", .life = {2, 4}},
                         {.id = "outliving", .life = {8, 12}},
                         {.id = "elsewhere", .buffer = 1, .life = {3, 5}}};
        const std::vector<Tenure> viewed = buffer_tenures(views);
        QVERIFY(viewed[0].takesOver && !viewed[1].takesOver && viewed[2].takesOver);
        QCOMPARE(viewed[0].begin, 0.0);
        QCOMPARE(viewed[0].end, 9.0); // the middle of [8, 10), where both live
        QCOMPARE(viewed[1].begin, 2.0);
        QCOMPARE(viewed[1].end, 4.0);
        QCOMPARE(viewed[2].begin, 9.0);
        QCOMPARE(viewed[2].end, 12.0);
        QCOMPARE(viewed[3].begin, 3.0); // alone in its buffer
        QCOMPARE(viewed[3].end, 5.0);
        // With the graph's word (helper-55): a view born with its base that dies first, or born
        // later and dying with it, is drawn over the base, which keeps the buffer; an alias
        // group's member keeps it across a gap until the next is born.
        Plan told;
        told.tensors = {{.id = "x", .life = {0, 3}},
                        {.id = "xv", .life = {0, 2}},
                        {.id = "h", .life = {0, 4}},
                        {.id = "hv", .buffer = 1, .life = {1, 4}},
                        {.id = "a", .buffer = 2, .life = {0, 2}},
                        {.id = "b", .buffer = 2, .life = {3, 5}}};
        told.tensors[2].buffer = 1;
        const std::vector<Tenure> drawn_told =
            buffer_tenures(told, {false, true, false, true, false, false});
        QVERIFY(drawn_told[0].takesOver && !drawn_told[1].takesOver);
        QCOMPARE(drawn_told[0].begin, 0.0);
        QCOMPARE(drawn_told[0].end, 3.0);
        QVERIFY(drawn_told[2].takesOver && !drawn_told[3].takesOver);
        QCOMPARE(drawn_told[2].end, 4.0);
        QCOMPARE(drawn_told[4].end, 3.0); // a holds the buffer until b is born
        QCOMPARE(drawn_told[5].begin, 3.0);
        QCOMPARE(drawn_told[5].end, 5.0);
        // An alias group's member living inside another's lifetime is drawn over it (it was
        // drawn over [6.5, 5), backwards; helper-56).
        Plan group;
        group.tensors = {{.id = "long", .life = {0, 10}}, {.id = "short", .life = {3, 5}}};
        const std::vector<Tenure> grouped = buffer_tenures(group, {false, false});
        QVERIFY(grouped[0].takesOver && !grouped[1].takesOver);
        QCOMPARE(grouped[0].end, 10.0);
        QCOMPARE(grouped[1].begin, 3.0);
        QCOMPARE(grouped[1].end, 5.0);
    }

    void axisRoundTrips_data() {
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("zoom");
        QTest::addColumn<double>("anchor"); // fraction of the width the zoom is centred on
        QTest::addColumn<bool>("inverted");
        for (double width : {1.0, 97.0, 640.0, 1600.0, 7680.0})
            for (double zoom : {1.0, 3.0, 250.0, 20000.0})
                for (bool inverted : {false, true})
                    QTest::addRow("w%g_z%g_%s", width, zoom, inverted ? "inv" : "fwd")
                        << width << zoom << 0.3 << inverted;
    }
    void axisRoundTrips() {
        QFETCH(double, width);
        QFETCH(double, zoom);
        QFETCH(double, anchor);
        QFETCH(bool, inverted);
        TimeAxis axis;
        axis.setInverted(inverted);
        axis.setDomain(0, 100000);
        axis.setLength(width);
        axis.zoomAround(anchor * width, zoom);
        double tolerance = 1e-9 * axis.domainHi();
        for (int i = 0; i <= 10; ++i) {
            double t = axis.visibleLo() + axis.span() * i / 10.0;
            QVERIFY(std::fabs(axis.timeAt(axis.xOf(t)) - t) <= tolerance);
            double x = width * i / 10.0;
            QVERIFY(std::fabs(axis.xOf(axis.timeAt(x)) - x) <= 1e-6 * std::max(width, 1.0));
        }
        // The visible range maps onto exactly [0, width].
        double lo = axis.xOf(axis.visibleLo()), hi = axis.xOf(axis.visibleHi());
        QVERIFY(std::fabs(std::min(lo, hi)) < 1e-6);
        QVERIFY(std::fabs(std::max(lo, hi) - width) < 1e-6 * width);
        QVERIFY(std::fabs(axis.span() - 100000 / zoom) < 1e-6 * axis.span());
    }

    void zoomKeepsTheValueUnderTheCursor_data() {
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("factor");
        QTest::addColumn<bool>("inverted");
        QTest::newRow("in at left edge") << 800.0 << 0.0 << 2.0 << false;
        QTest::newRow("in at middle") << 800.0 << 400.0 << 1.2 << false;
        QTest::newRow("in at right edge") << 800.0 << 800.0 << 10.0 << false;
        QTest::newRow("out from a zoomed view") << 1600.0 << 123.0 << 0.5 << false;
        QTest::newRow("in on an inverted axis") << 300.0 << 77.0 << 3.0 << true;
        QTest::newRow("out on an inverted axis") << 300.0 << 250.0 << 0.8 << true;
        QTest::newRow("narrow widget") << 5.0 << 2.0 << 7.0 << false;
    }
    void zoomKeepsTheValueUnderTheCursor() {
        QFETCH(double, width);
        QFETCH(double, x);
        QFETCH(double, factor);
        QFETCH(bool, inverted);
        TimeAxis axis;
        axis.setInverted(inverted);
        axis.setDomain(0, 50000);
        axis.setLength(width);
        axis.setVisible(20000, 30000); // room on both sides, so zooming out does not clamp
        double before = axis.timeAt(x);
        axis.zoomAround(x, factor);
        QVERIFY(std::fabs(axis.timeAt(x) - before) < 1e-6);
        QVERIFY(std::fabs(axis.span() - 10000 / factor) < 1e-6);
    }

    void panAndZoomClampToTheDomain() {
        TimeAxis axis;
        axis.setDomain(100, 1100);
        axis.setLength(500);
        axis.setMinSpan(4);
        axis.zoomAround(250, 10); // span 100
        double span = axis.span();
        axis.pan(-1e9);
        QCOMPARE(axis.visibleLo(), 100.0);
        QCOMPARE(axis.span(), span);
        axis.pan(1e9);
        QCOMPARE(axis.visibleHi(), 1100.0);
        QCOMPARE(axis.span(), span);
        // A pan keeps the scale bit-identical: cached geometry stays valid.
        double scale = axis.scale();
        axis.pan(-37.3);
        QCOMPARE(axis.scale(), scale);
        axis.zoomAround(100, 1e9);
        QCOMPARE(axis.span(), 4.0);
        axis.zoomAround(100, 1e-9);
        QVERIFY(axis.showsWholeDomain());
        axis.setVisible(std::nan(""), 5);
        QVERIFY(axis.visibleLo() >= 100 && axis.visibleHi() <= 1100);
    }

    void stepAtFloorsAndClamps() {
        TimeAxis axis;
        axis.setDomain(0, 10);
        axis.setLength(100); // 10 px per step
        QCOMPARE(axis.stepAt(0), uint64_t(0));
        QCOMPARE(axis.stepAt(9.9), uint64_t(0));
        QCOMPARE(axis.stepAt(10), uint64_t(1));
        QCOMPARE(axis.stepAt(100), uint64_t(9)); // the right edge is still the last step
        QCOMPARE(axis.stepAt(-50), uint64_t(0));
        QCOMPARE(axis.stepAt(5000), uint64_t(9));
    }

    void ticksAndLabelsStayDistinct_data() {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("span");
        QTest::newRow("small") << 0.0 << 37.0;
        QTest::newRow("thousands") << 18300.0 << 800.0;
        QTest::newRow("narrow at 18k") << 18400.0 << 60.0;
        QTest::newRow("millions") << 1.2e6 << 4000.0;
        QTest::newRow("wide") << 0.0 << 5e7;
    }
    void ticksAndLabelsStayDistinct() {
        QFETCH(double, lo);
        QFETCH(double, span);
        double step = std::max(1.0, niceTickStep(span, 1600, 90));
        QVERIFY(span / step <= 1600 / 90.0 + 1);
        std::set<QString> seen;
        for (double t = std::ceil(lo / step) * step; t <= lo + span; t += step)
            QVERIFY2(seen.insert(tickLabel(t, step)).second, qPrintable(tickLabel(t, step)));
        QCOMPARE(byteTickLabel(1088ull << 20, 64ull << 20, 1280ull << 20), QString("1088 MiB"));
        QCOMPARE(byteTickLabel(21ull << 29, 1ull << 29, 11ull << 30), QString("10.5 GiB"));
        QCOMPARE(byteTickLabel(5ull << 28, 1ull << 28, 2ull << 30), QString("1.25 GiB"));
        QCOMPARE(byteTickLabel(6ull << 30, 1ull << 30, 7ull << 30), QString("6 GiB"));
        QCOMPARE(byteTickLabel(0, 64, 4096), QString("0 B"));
        QCOMPARE(byteTickLabel(3072, 1024, 4096), QString("3 KiB"));
        QCOMPARE(byteTickLabel(96, 32, 1000), QString("96 B"));
        QCOMPARE(humanBytes(1536ull << 20), QString("1.50 GiB"));
        QCOMPARE(humanBytes(96), QString("96 B"));
        QCOMPARE(groupedNumber(1234567), QString("1,234,567"));
        // Counts take the noun in their number ("1 gaps" read wrong in three panels).
        QCOMPARE(counted(1, "gap", "gaps"), QString("1 gap"));
        QCOMPARE(counted(0, "gap", "gaps"), QString("0 gaps"));
        QCOMPARE(counted(1483, "tensor", "tensors"), QString("1,483 tensors"));
    }

    void visibilityIndexesMatchBruteForce_data() {
        QTest::addColumn<uint32_t>("seed");
        QTest::addColumn<int>("count");
        QTest::addColumn<bool>("disjoint"); // slot-like: items do not overlap
        for (uint32_t seed : {1u, 2u, 3u})
            for (int count : {0, 1, 50, 3000}) {
                QTest::addRow("s%u_n%d_any", seed, count) << seed << count << false;
                QTest::addRow("s%u_n%d_disjoint", seed, count) << seed << count << true;
            }
    }
    void visibilityIndexesMatchBruteForce() {
        QFETCH(uint32_t, seed);
        QFETCH(int, count);
        QFETCH(bool, disjoint);
        std::mt19937 rng(seed);
        std::vector<IntervalIndex::Item> items;
        uint64_t cursor = 0;
        for (int i = 0; i < count; ++i) {
            uint64_t begin = disjoint ? cursor + rng() % 5 : rng() % 10000;
            uint64_t length = 1 + (rng() % 4 == 0 ? rng() % 5000 : rng() % 10);
            items.push_back({begin, begin + length, uint32_t(i)});
            cursor = begin + length;
        }
        IntervalIndex index;
        index.build(items);
        SortedIntervals sorted;
        sorted.build(items);
        QCOMPARE(index.size(), items.size());
        for (int q = 0; q < 200; ++q) {
            double lo = double(rng() % 12000) - 500 + 0.25, hi = lo + double(rng() % 3000) + 0.5;
            std::set<uint32_t> expected, fromIndex, fromSorted;
            for (const auto& it : items)
                if (double(it.end) > lo && double(it.begin) < hi) expected.insert(it.id);
            index.query(lo, hi, [&](const IntervalIndex::Item& it) { fromIndex.insert(it.id); });
            uint64_t lastBegin = 0;
            bool ordered = true;
            sorted.query(lo, hi, [&](const IntervalIndex::Item& it) {
                ordered = ordered && it.begin >= lastBegin;
                lastBegin = it.begin;
                fromSorted.insert(it.id);
            });
            QCOMPARE(fromIndex, expected);
            QCOMPARE(fromSorted, expected);
            QVERIFY(ordered);
        }
    }

    void lodNeverDropsAColumnThatHasAnItem_data() {
        QTest::addColumn<uint32_t>("seed");
        QTest::addColumn<int>("count");
        QTest::addColumn<double>("maxWidth");
        QTest::addColumn<bool>("vertical");
        for (uint32_t seed : {1u, 7u, 42u})
            for (int count : {1, 30, 2000})
                for (double maxWidth : {0.2, 3.0, 200.0}) {
                    QTest::addRow("s%u_n%d_w%g", seed, count, maxWidth)
                        << seed << count << maxWidth << false;
                    QTest::addRow("s%u_n%d_w%g_v", seed, count, maxWidth)
                        << seed << count << maxWidth << true;
                }
    }
    void lodNeverDropsAColumnThatHasAnItem() {
        QFETCH(uint32_t, seed);
        QFETCH(int, count);
        QFETCH(double, maxWidth);
        QFETCH(bool, vertical);
        constexpr int kLanes = 3, kColumns = 400;
        struct S {
            int lane;
            double a0, a1;
        };
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> pos(0, kColumns - 1), unit(0, 1);
        std::vector<S> spans;
        LaneMerger merger;
        merger.reset(vertical ? LaneMerger::Axis::Vertical : LaneMerger::Axis::Horizontal, kLanes);
        merger.setBand(2, 10, 14); // a lane taller than one pixel
        for (int i = 0; i < count; ++i) {
            S s{int(rng() % kLanes), pos(rng), 0};
            s.a1 = std::min(s.a0 + maxWidth * std::pow(unit(rng), 3) + 1e-3, double(kColumns));
            spans.push_back(s);
            merger.add(s.lane, s.a0, s.a1, uint8_t(rng() % 7));
        }
        RectBatches out;
        out.reset(7);
        merger.flush(out);
        QVERIFY(out.rectCount() <= spans.size()); // merging never adds rects
        // Columns within a pixel of some item of the lane: the only ones a rect may touch.
        std::vector<std::vector<bool>> near(kLanes, std::vector<bool>(kColumns + 2, false));
        for (const S& s : spans)
            for (int c = std::max(0, int(std::floor(s.a0)) - 1);
                 c <= std::min(kColumns + 1, int(std::ceil(s.a1))); ++c)
                near[size_t(s.lane)][size_t(c)] = true;
        // Rasterise per lane; each rect must lie in its lane's band.
        std::vector<std::vector<bool>> covered(kLanes, std::vector<bool>(kColumns + 2, false));
        auto bandOf = [](int lane) {
            return lane == 2 ? std::pair(10, 14) : std::pair(lane, lane + 1);
        };
        for (const auto& rects : out.byColour)
            for (const QRect& r : rects) {
                int b0 = vertical ? r.left() : r.top(),
                    b1 = b0 + (vertical ? r.width() : r.height());
                int a0 = vertical ? r.top() : r.left(),
                    a1 = a0 + (vertical ? r.height() : r.width());
                int lane = -1;
                for (int l = 0; l < kLanes; ++l)
                    if (bandOf(l) == std::pair(b0, b1)) lane = l;
                QVERIFY2(lane >= 0, "rect outside every lane band");
                QVERIFY(a1 > a0);
                QVERIFY(a0 >= 0 && a1 <= kColumns + 2);
                for (int c = a0; c < a1; ++c) {
                    covered[size_t(lane)][size_t(c)] = true;
                    // No invented pixels: every column drawn touches an item of the lane.
                    QVERIFY2(near[size_t(lane)][size_t(c)],
                             qPrintable(QString("lane %1 column %2 has no item").arg(lane).arg(c)));
                }
            }
        for (const S& s : spans) {
            if (s.a1 - s.a0 < 1) {
                int c = int(std::floor((s.a0 + s.a1) / 2));
                QVERIFY2(covered[size_t(s.lane)][size_t(c)],
                         qPrintable(QString("narrow item [%1, %2) lost").arg(s.a0).arg(s.a1)));
            } else {
                for (int c = int(std::ceil(s.a0)); c + 1 <= s.a1; ++c)
                    QVERIFY2(covered[size_t(s.lane)][size_t(c)],
                             qPrintable(
                                 QString("column %1 of [%2, %3) lost").arg(c).arg(s.a0).arg(s.a1)));
            }
        }
    }

    void lodMergesSubPixelItemsIntoOneRectPerColumn() {
        LaneMerger merger;
        merger.reset(LaneMerger::Axis::Horizontal, 1);
        // 1000 items inside column 10: one rect, coloured like the widest item (colour 3).
        for (int i = 0; i < 1000; ++i) {
            double a0 = 10.0 + i * 0.0005;
            merger.add(0, a0, a0 + (i == 500 ? 0.4 : 0.1), uint8_t(i == 500 ? 3 : 1));
        }
        // Three sub-pixel items of one colour in adjacent columns: one run.
        merger.add(0, 20.2, 20.4, 5);
        merger.add(0, 21.1, 21.5, 5);
        merger.add(0, 22.3, 22.6, 5);
        RectBatches out;
        out.reset(7);
        merger.flush(out);
        QCOMPARE(out.rectCount(), size_t(2));
        QVERIFY(out.byColour[1].empty());
        QCOMPARE(out.byColour[3].size(), size_t(1));
        QCOMPARE(out.byColour[3].front(), QRect(10, 0, 1, 1));
        QCOMPARE(out.byColour[5].front(), QRect(20, 0, 3, 1));
    }

    void overFetchCoversTheVisibleRange_data() {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::newRow("whole") << 0.0 << 1000.0;
        QTest::newRow("middle") << 400.0 << 410.0;
        QTest::newRow("left edge") << 0.0 << 3.0;
        QTest::newRow("tiny") << 500.25 << 500.5;
    }
    void overFetchCoversTheVisibleRange() {
        QFETCH(double, lo);
        QFETCH(double, hi);
        double a = 0, b = 0;
        overFetch(lo, hi, 0, 1000, a, b);
        QVERIFY(a <= lo && b >= hi);
        QVERIFY(a >= 0 && b <= 1000);
        QVERIFY(b - a <= 3 * (hi - lo) + 1e-9); // bounded over-fetch
        // A small pan lands in the same window.
        double a2 = 0, b2 = 0;
        double d = (hi - lo) / 8;
        overFetch(lo + d, hi + d, 0, 1000, a2, b2);
        if (hi + d <= 1000 && a + 1e-9 < lo && b - 1e-9 > hi) QVERIFY(a2 <= lo + d && b2 >= hi + d);
    }

    void liveRangeHitTest_data() {
        QTest::addColumn<double>("time");
        QTest::addColumn<double>("dx"); // extra pixels from the time's x
        QTest::addColumn<double>("row");
        QTest::addColumn<QString>("expected"); // tensor id, or empty for none
        QTest::newRow("inside a long bar") << 250.0 << 0.0 << 0.5 << "t0";
        QTest::newRow("inside a 1-step bar (<1 px)") << 100.5 << 0.0 << 1.5 << "t1";
        QTest::newRow("2 px right of the thin bar") << 101.0 << 2.0 << 1.5 << "t1";
        QTest::newRow("2 px left of the thin bar") << 100.0 << -2.0 << 1.5 << "t1";
        QTest::newRow("6 px right of the thin bar") << 101.0 << 6.0 << 1.5 << "";
        QTest::newRow("before a late bar") << 300.0 << 0.0 << 3.5 << "";
        QTest::newRow("after a bar ends") << 450.0 << 0.0 << 2.5 << "";
        QTest::newRow("containing row beats a near one") << 100.5 << 0.0 << 0.98 << "t0";
        QTest::newRow("last step of a bar") << 999.5 << 0.0 << 3.5 << "t3";
    }
    void liveRangeHitTest() {
        QFETCH(double, time);
        QFETCH(double, dx);
        QFETCH(double, row);
        QFETCH(QString, expected);
        PlanContext ctx;
        ctx.setPlan(planOf({buffer(0, 500, 1000), buffer(100, 101, 1000), buffer(200, 400, 1000),
                            buffer(600, 1000, 1000)}),
                    nullptr);
        LiveRangeView view(&ctx);
        view.resize(900, 300);
        QRect plot = view.plotRect();
        QVERIFY(view.timeAxis().scale() < 1); // the 1-step bar is thinner than a pixel
        QCOMPARE(view.rowCount(), 4);
        for (int r = 0; r < 4; ++r) // rows by birth
            QCOMPARE(ctx.plan()->tensors[size_t(view.tensorInRow(r))].id, "t" + std::to_string(r));
        // The pixel holding the point, as a mouse event would report it.
        QPoint p(int(std::floor(plot.left() + view.timeAxis().xOf(time) + dx)),
                 int(std::floor(plot.top() + view.valueAxis().xOf(row))));
        int hit = view.tensorAt(p);
        QString got =
            hit < 0 ? QString() : QString::fromStdString(ctx.plan()->tensors[size_t(hit)].id);
        QCOMPARE(got, expected);
        // Points outside the plot (gutter, axis strip) never hit.
        QCOMPARE(view.tensorAt(QPoint(plot.left() - 5, p.y())), -1);
        QCOMPARE(view.tensorAt(QPoint(p.x(), plot.bottom() + 5)), -1);
    }

    void everyViewPicksEachTensorAtItsCentre_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("live ranges") << "live";
        QTest::newRow("slots") << "slots";
        QTest::newRow("arena layout") << "layout";
    }
    void everyViewPicksEachTensorAtItsCentre() {
        QFETCH(QString, kind);
        // Sizes from 64 B to 64 MiB: many blocks are far thinner than a pixel in the layout.
        OffsetProblem problem = realistic_random_problem(3, 60);
        PlanContext ctx;
        ctx.setPlan(planOf(problem.buffers), nullptr);
        auto view = makeView(kind, &ctx);
        view->resize(1200, 800);
        QRectF plot = view->plotRect();
        // A rect as drawn: a sub-pixel extent fills the pixel holding its centre.
        auto drawn = [](QRectF r) {
            if (r.width() < 1) r = QRectF(std::floor(r.center().x()), r.top(), 1, r.height());
            if (r.height() < 1) r = QRectF(r.left(), std::floor(r.center().y()), r.width(), 1);
            return r;
        };
        int exact = 0;
        for (int i = 0; i < int(ctx.plan()->tensors.size()); ++i) {
            QRectF r = view->rectOf(i);
            QVERIFY2(!r.isNull(), "every tensor is drawn somewhere");
            QPointF c = r.center();
            if (!plot.contains(c)) continue;
            QPoint p(int(std::floor(c.x())), int(std::floor(c.y())));
            QPointF pixel = QPointF(p) + QPointF(0.5, 0.5);
            int hit = view->tensorAt(p);
            QVERIFY2(hit >= 0, "the centre of a drawn tensor always picks something");
            // Thin items may share their pixel with a neighbour; the pick must be drawn there.
            QVERIFY(drawn(view->rectOf(hit)).adjusted(-1e-9, -1e-9, 1e-9, 1e-9).contains(pixel));
            if (r.width() >= 2 && r.height() >= 2) {
                QCOMPARE(hit, i);
                ++exact;
            }
        }
        QVERIFY(exact >= 20);
    }

    void rectsFollowZoomAndPan() {
        PlanContext ctx;
        ctx.setPlan(planOf({buffer(0, 10, 100), buffer(5, 20, 100)}), nullptr);
        LiveRangeView view(&ctx);
        view.resize(700, 300);
        QRectF before = view.rectOf(1);
        view.zoomTime(2, view.plotRect().left()); // anchor at the left edge (time 0)
        QRectF after = view.rectOf(1);
        QVERIFY(std::fabs(after.width() - 2 * before.width()) < 1e-6);
        QVERIFY(std::fabs((after.left() - view.plotRect().left()) -
                          2 * (before.left() - view.plotRect().left())) < 1e-6);
        view.panBy(30, 0);
        QVERIFY(std::fabs(view.rectOf(1).left() - (after.left() - 30)) < 1e-6);
        view.resetZoom();
        QVERIFY(std::fabs(view.rectOf(1).left() - before.left()) < 1e-6);
    }
};

QTEST_MAIN(TestTimelineGeometry)
#include "test_timeline_geometry.moc"
