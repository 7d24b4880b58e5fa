// Charts, step control, command line and planning settings of the studio.
#include "charts/memory_chart.h"
#include "charts/strategy_chart.h"
#include "context/plan_context.h"
#include "core/failure.h"
#include "panels/step_control.h"
#include "plan/plan_summary.h"
#include "plan/planner.h"
#include "plan/random_problem.h"
#include "planning.h"
#include "source/model_source.h"
#include "studio_options.h"
#include "style/palette.h"
#include "test_support.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QSpinBox>
#include <QTest>

#include <memory>
#include <random>

using namespace tmmu;
using namespace tmmu::views;
using namespace tmmu::studio;

namespace {

std::shared_ptr<const LoadedModel> example(const char* name, Mode mode) {
    ModelRequest r;
    r.mode = mode;
    return std::make_shared<const LoadedModel>(
        load_model(std::string(TMMU_SOURCE_DIR "/resources/models/examples/") + name, r));
}

void showPlan(PlanContext& ctx, std::shared_ptr<const LoadedModel> model, Mode mode) {
    auto plan = std::make_shared<const Plan>(plan_model(*model, mode, PlanOptions{}, Progress{}));
    ctx.setPlan(plan, model);
}

std::vector<QLineSeries*> lineSeriesOf(QChart* chart) {
    std::vector<QLineSeries*> out;
    for (QAbstractSeries* s : chart->series())
        if (auto* l = qobject_cast<QLineSeries*>(s)) out.push_back(l);
    return out;
}

QLineSeries* seriesNamed(QChart* chart, const QString& name) {
    for (QLineSeries* s : lineSeriesOf(chart))
        if (s->name() == name) return s;
    return nullptr;
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
  private slots:
    void downsampleKeepsSmallSeriesExact() {
        std::vector<uint64_t> t{0, 2, 5}, v{10, 30, 20};
        auto p = downsampleMax(t, v, 8, 1000);
        QCOMPARE(p.size(), size_t(6));
        QCOMPARE(p[0], QPointF(0, 10));
        QCOMPARE(p[1], QPointF(2, 10));
        QCOMPARE(p[2], QPointF(2, 30));
        QCOMPARE(p[5], QPointF(8, 20));
        QVERIFY(downsampleMax({}, {}, 5, 1000).empty());
    }

    void downsampleKeepsThePeakOfEveryBucket() {
        const size_t n = 100000;
        std::vector<uint64_t> t(n), v(n);
        std::mt19937_64 rng(7);
        for (size_t i = 0; i < n; ++i) {
            t[i] = i;
            v[i] = rng() % 1000;
        }
        v[54321] = 5000; // a one-sample spike must survive
        auto p = downsampleMax(t, v, n, 1000);
        QCOMPARE(p.size(), size_t(2000));
        double top = 0;
        for (const QPointF& q : p)
            top = std::max(top, q.y());
        QCOMPARE(top, 5000.0);
        QCOMPARE(p.front().x(), 0.0);
        QCOMPARE(p.back().x(), double(n));
        // Bucket b covers 100 samples; its value is their maximum.
        for (size_t b : {0, 17, 999}) {
            uint64_t expect =
                *std::max_element(v.begin() + long(b * 100), v.begin() + long(b * 100 + 100));
            QCOMPARE(p[2 * b].y(), double(expect));
        }
    }

    void byteScalePicksReadableUnits() {
        QCOMPARE(byteScaleFor(500).unit, QString("B"));
        QCOMPARE(byteScaleFor(4096).unit, QString("KiB"));
        QCOMPARE(byteScaleFor(3ull << 20).unit, QString("MiB"));
        QCOMPARE(byteScaleFor(14ull << 30).unit, QString("GiB"));
        QCOMPARE(byteScaleFor(14ull << 30).divisor, double(1ull << 30));
    }

    void memoryChartDrawsSeriesAndFollowsTheStep() {
        PlanContext ctx;
        MemoryChart chart(&ctx);
        showPlan(ctx, example("residual_blocks.json", Mode::Training), Mode::Training);
        QCOMPARE(chart.chart()->animationOptions(), QChart::NoAnimation);
        QCOMPARE(chart.cursorX(), 0.5);
        ctx.setCurrentEvent(7);
        QCOMPARE(chart.cursorX(), 7.5);
        QVERIFY(seriesNamed(chart.chart(), "Σ lower bounds"));
        const Plan& plan = *ctx.plan();
        // One stacked area per arena, lower bound line at the sum of the arenas' bounds.
        int areas = 0;
        for (QAbstractSeries* s : chart.chart()->series())
            areas += s->type() == QAbstractSeries::SeriesTypeArea;
        QCOMPARE(areas, int(plan.arenas.size()));
        chart.setArena(1);
        QCOMPARE(chart.arena(), 1);
        QLineSeries* bound = seriesNamed(chart.chart(), "lower bound");
        QVERIFY(bound && seriesNamed(chart.chart(), "high-water"));
        QCOMPARE(chart.cursorX(), 7.5);
        QVERIFY(bound->at(0).y() > 0);
        chart.setArena(99); // out of range: all arenas
        QCOMPARE(chart.arena(), int(MemoryChart::kAllArenas));
    }
    // A training plan marks where its backward pass starts and what the forward pass leaves
    // it; inference has no backward pass, forward mode's runs after the chart.
    void memoryChartMarksTheBackwardPass() {
        PlanContext ctx;
        MemoryChart chart(&ctx);
        const auto backward = [&]() -> QLineSeries* {
            for (QLineSeries* s : lineSeriesOf(chart.chart()))
                if (s->name() == "backward") return s;
            return nullptr;
        };
        showPlan(ctx, example("views_and_inplace.json", Mode::Training), Mode::Training);
        const ActivationRetention& r = *ctx.plan()->retention;
        QVERIFY(r.backward_start > 0 && r.backward_start < ctx.plan()->execution_order.size());
        QLineSeries* line = backward();
        QVERIFY(line);
        QCOMPARE(line->property("tip").toString(),
                 QString("The backward pass starts at step %1. Activation retention: %2.")
                     .arg(r.backward_start)
                     .arg(QString::fromStdString(retention_text(*ctx.plan()))));
        QCOMPARE(line->at(0).x(), double(r.backward_start));
        QCOMPARE(line->at(1).x(), double(r.backward_start));
        chart.setArena(0); // every arena's chart has it
        QVERIFY(backward());
        showPlan(ctx, example("views_and_inplace.json", Mode::Inference), Mode::Inference);
        QVERIFY(!backward());
        showPlan(ctx, example("views_and_inplace.json", Mode::Forward), Mode::Forward);
        QVERIFY(!backward());
    }

    void clickingTheMemoryChartSetsTheStep() {
        PlanContext ctx;
        MemoryChart chart(&ctx);
        showPlan(ctx, example("residual_blocks.json", Mode::Training), Mode::Training);
        chart.resize(800, 400);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        auto* view = chart.findChild<QChartView*>("memoryChartView");
        QVERIFY(view);
        QLineSeries* bound = seriesNamed(chart.chart(), "Σ lower bounds");
        const uint64_t target = ctx.eventCount() / 3;
        QPointF inChart = chart.chart()->mapToPosition(
            QPointF(double(target) + 0.5, bound->at(0).y() / 2), bound);
        QPoint inView = view->mapFromScene(chart.chart()->mapToScene(inChart));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, inView);
        QCOMPARE(ctx.currentEvent(), target);
    }

    void memoryChartStaysFastOnHugePlans() {
        OffsetProblem p = realistic_random_problem(3, 100000);
        std::vector<std::string> ids(p.buffers.size());
        for (size_t i = 0; i < ids.size(); ++i)
            ids[i] = "b" + std::to_string(i);
        PlanOptions o;
        o.strategy = "greedy-size";
        auto plan = std::make_shared<const Plan>(plan_problem(p, ids, o, Progress{}, "random"));
        QVERIFY2(plan->series.times.size() > 20 * MemoryChart::kMaxBuckets,
                 qPrintable(QString::number(plan->series.times.size())));
        PlanContext ctx;
        MemoryChart chart(&ctx);
        ctx.setPlan(plan, nullptr); // its speed: tmmu-views-bench --view panels
        for (QLineSeries* s : lineSeriesOf(chart.chart()))
            QVERIFY(s->count() <= int(2 * MemoryChart::kMaxBuckets));
        QCOMPARE(chart.chart()->axes(Qt::Horizontal).value(0)->property("max").toDouble(),
                 double(ctx.timeEnd()));
    }

    void chartsFollowTheDarkPalette() {
        QPalette saved = QApplication::palette();
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(220, 220, 220));
        QApplication::setPalette(dark);
        PlanContext ctx;
        MemoryChart memory(&ctx);
        StrategyChart strategies;
        showPlan(ctx, example("linear_chain.json", Mode::Inference), Mode::Inference);
        strategies.setResults({{"auto", 100, 90, 0.5, {}}}, "auto");
        QCOMPARE(memory.chart()->backgroundBrush().color(), ViewPalette(true).background());
        strategies.resize(400, 300);
        QCOMPARE(strategies.bars()->grab().toImage().pixelColor(2, 2),
                 ViewPalette(true).background());
        QApplication::setPalette(saved);
        QCoreApplication::processEvents();
        QCOMPARE(memory.chart()->backgroundBrush().color(), ViewPalette(false).background());
    }

    void strategyChartDrawsHeightBoundAndTime() {
        StrategyChart chart;
        std::vector<StrategyResult> results{{"slots", 1200, 1000, 1.5, {}},
                                            {"ffd", 1000, 1000, 0.5, {}},
                                            {"best-fit", 0, 0, 0.0, "ARENA_TOO_SMALL at arena"}};
        chart.setResults(results, "ffd");
        chart.resize(500, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        const QStringList labels = chart.labels();
        QCOMPARE(labels.size(), 3);
        QVERIFY2(labels[0].contains("+20.0%"), qPrintable(labels[0]));
        QVERIFY(labels[1].startsWith("[ffd]"));
        QVERIFY(labels[2].contains("failed"));
        // Padding no plan avoids is named in the tooltip where it lifts the bound.
        QVERIFY2(!chart.tooltip(0).contains("aligned"), qPrintable(chart.tooltip(0)));
        std::vector<StrategyResult> padded = results;
        padded[0].aligned_bound = 1100;
        chart.setResults(padded, "ffd");
        QVERIFY2(chart.tooltip(0).contains(", the least aligned buffers allow ") &&
                     chart.tooltip(0).contains("(+9.09%)"),
                 qPrintable(chart.tooltip(0)));
        chart.setResults(results, "ffd");
        // Bars scale to the tallest height, time bars to the slowest strategy; a failure has
        // neither.
        const QRectF tallest = chart.heightBar(0), ffd = chart.heightBar(1);
        QVERIFY(tallest.width() > 50);
        QCOMPARE(ffd.width() / tallest.width(), 1000.0 / 1200.0);
        QCOMPARE(chart.timeBar(1).width() / chart.timeBar(0).width(), 0.5 / 1.5);
        QVERIFY(chart.heightBar(2).isEmpty() && chart.timeBar(2).isEmpty());
        // Rows do not overlap, and the names column leaves the bars room.
        QVERIFY(tallest.bottom() <= ffd.top());
        const QImage image = chart.bars()->grab().toImage();
        const ViewPalette palette = ViewPalette::fromApplication();
        QCOMPARE(image.pixelColor(tallest.center().toPoint()), palette.role(Role::Parameter));
        // The lower bound crosses the bar that is above it: 1000 of 1200.
        const int boundX = int(tallest.left() + tallest.width() * 1000.0 / 1200.0);
        bool marked = false;
        for (int dx = -2; dx <= 2; ++dx)
            marked |=
                image.pixelColor(boundX + dx, int(tallest.center().y())) == palette.lowerBound();
        QVERIFY(marked);
    }

    void stepControlShowsStepAndNode() {
        PlanContext ctx;
        StepControl control(&ctx);
        QVERIFY(!control.isEnabled());
        auto model = example("residual_blocks.json", Mode::Inference);
        showPlan(ctx, model, Mode::Inference);
        QVERIFY(control.isEnabled());
        ctx.setCurrentEvent(3);
        QCOMPARE(control.positionText(), QString("step 3 of %1").arg(ctx.eventCount()));
        const std::string& id = ctx.plan()->execution_order[3];
        const Graph& g = *model->graph;
        auto node =
            std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.id == id; });
        QVERIFY(control.nodeText().contains(QString::fromStdString(id)));
        QVERIFY(control.nodeText().contains(QString::fromStdString(node->opcode)));
        control.spinBox()->setValue(5);
        QCOMPARE(ctx.currentEvent(), uint64_t(5));
        QCOMPARE(control.spinBox()->maximum(), int(ctx.eventCount() - 1));
    }

    void parsesTheCommandLine() {
        StudioOptions o =
            parse_studio_options({"m.json", "--mode", "inference", "--batch", "2", "--seq", "16",
                                  "--strategy", "ffd", "--screenshot", "x.png"});
        QCOMPARE(o.model, QString("m.json"));
        QCOMPARE(o.settings.mode, Mode::Inference);
        QCOMPARE(o.settings.batch, uint64_t(2));
        QCOMPARE(o.settings.seq, uint64_t(16));
        QCOMPARE(o.settings.strategy, std::string("ffd"));
        QCOMPARE(o.screenshot, QString("x.png"));
        const StudioOptions arenas = parse_studio_options(
            {"--align", "1KiB", "--arena", "parameters=:4KiB", "--arena", "activations=2GiB"});
        QCOMPARE(arenas.settings.alignment, uint64_t(1024));
        QCOMPARE(format_arena_settings(arenas.settings.arenas),
                 std::string("parameters=:4KiB, activations=2GiB"));
        TMMU_EXPECT_FAILURE(parse_studio_options({"--align", "0"}), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--arena", "activations"}),
                            FailureCode::InvalidArgument);
        const StudioOptions routes = parse_studio_options(
            {"--route", "workspace=scratch", "--route", "gradient=activations"});
        QCOMPARE(format_routes(routes.settings.routes),
                 std::string("workspace=scratch, gradient=activations"));
        TMMU_EXPECT_FAILURE(parse_studio_options({"--route", "gradients=activations"}),
                            FailureCode::InvalidArgument);
        QCOMPARE(parse_studio_options({"--memory-budget", "2GiB"}).settings.memory_budget,
                 uint64_t(2) << 30);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--memory-budget", "0"}),
                            FailureCode::InvalidArgument);
        QCOMPARE(parse_studio_options({"--world-size", "8", "--rank", "7", "--shard", "parameter"})
                     .settings.shard,
                 (ShardSpec{8, 7, {Role::Parameter}}));
        TMMU_EXPECT_FAILURE(parse_studio_options({"--shard", "input"}),
                            FailureCode::InvalidArgument);
        StudioOptions d = parse_studio_options({});
        QVERIFY(d.model.isEmpty());
        QCOMPARE(d.settings.batch, uint64_t(8));
        QCOMPARE(d.settings.seq, uint64_t(1024));
        QCOMPARE(d.settings.mode, Mode::Training);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--mode", "sideways"}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--batch", "0"}), FailureCode::InvalidArgument);
        // Past what the toolbar holds: refused, not clamped to another batch than planned.
        QCOMPARE(parse_studio_options({"--batch", "1048576"}).settings.batch, uint64_t(1048576));
        TMMU_EXPECT_FAILURE(parse_studio_options({"--batch", "1048577"}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--seq", "4294967296"}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--strategy", "magic"}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--screenshot"}), FailureCode::InvalidArgument);
        QCOMPARE(d.screenshotSize, QSize(1600, 1000));
        QCOMPARE(parse_studio_options({"--screenshot", "s.png", "--screenshot-size", "1280x800"})
                     .screenshotSize,
                 QSize(1280, 800));
        for (const char* bad : {"1280", "1280x", "x800", "100x100", "99999x800", "axb"})
            TMMU_EXPECT_FAILURE(
                parse_studio_options({"--screenshot", "s.png", "--screenshot-size", bad}),
                FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--screenshot-size", "1280x800"}),
                            FailureCode::InvalidArgument); // without --screenshot
        // A panel, a step and a theme (what the user guide's screenshots are made with).
        const StudioOptions shot =
            parse_studio_options({"--screenshot", "s.png", "--screenshot-panel", "live-ranges",
                                  "--step", "0", "--theme", "dark"});
        QCOMPARE(shot.screenshotPanel, QString("live-ranges"));
        QCOMPARE(shot.step, std::optional<uint64_t>(0));
        QCOMPARE(shot.theme, std::optional<Theme>(Theme::Dark));
        QVERIFY(!d.step && !d.theme && d.screenshotPanel.isEmpty());
        QCOMPARE(parse_studio_options({"--theme", "system"}).theme,
                 std::optional<Theme>(Theme::System));
        for (const QStringList& bad :
             {QStringList{"--screenshot-panel", "memory"}, // without --screenshot
              QStringList{"--screenshot", "s.png", "--screenshot-panel", "nowhere"},
              QStringList{"--step", "-1"}, QStringList{"--step", "ten"},
              QStringList{"--theme", "sepia"}})
            TMMU_EXPECT_FAILURE(parse_studio_options(bad), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--frobnicate"}), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"a.json", "b.json"}),
                            FailureCode::InvalidArgument);
        QVERIFY(QFile::exists(default_model_path()));
    }

    void parsesArenaSettingsAndBuildsOptions() {
        ArenaSettings c = parse_arena_settings("activations=8GiB:256, gradients=512MiB");
        QCOMPARE(c.size(), size_t(2));
        QCOMPARE(c[0].name, std::string("activations"));
        QCOMPARE(c[0].capacity, std::optional<uint64_t>(8ull << 30));
        QCOMPARE(c[0].alignment, std::optional<uint64_t>(256));
        QCOMPARE(c[1].capacity, std::optional<uint64_t>(512ull << 20));
        QVERIFY(!c[1].alignment);
        QVERIFY(parse_arena_settings("  ").empty());
        QCOMPARE(parse_arena_settings(format_arena_settings(c)), c);
        const ArenaSettings only = parse_arena_settings("parameters=:4KiB");
        QCOMPARE(format_arena_settings(only), std::string("parameters=:4KiB"));
        QCOMPARE(parse_arena_settings(format_arena_settings(only)), only);
        TMMU_EXPECT_FAILURE(parse_arena_settings("activations"), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_arena_settings("activations=lots"), FailureCode::InvalidArgument);
        PlanSettings s;
        s.arenas = c;
        PlanOptions o = make_options(s, ModelKind::TransformerConfig);
        QCOMPARE(o.policy.find("activations")->capacity, 8ull << 30);
        QCOMPARE(o.policy.find("activations")->alignment, uint64_t(256));
        QCOMPARE(o.policy.find("gradients")->alignment, uint64_t(128));
        TMMU_EXPECT_FAILURE(make_options(s, ModelKind::DsaCsv), FailureCode::InvalidArgument);
        s.arenas = {{"arena", 4096}};
        PlanOptions csv = make_options(s, ModelKind::DsaCsv);
        QCOMPARE(csv.policy.find("arena")->capacity, uint64_t(4096));
        QCOMPARE(csv.policy.find("arena")->alignment, uint64_t(1));
        s.arenas.clear();
        s.alignment = 48;
        TMMU_EXPECT_FAILURE(make_options(s, ModelKind::IrJson), FailureCode::AlignmentViolation);
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
