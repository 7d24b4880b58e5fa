#include "charts/memory_chart.h"

#include "context/plan_context.h"
#include "plan/memory_series.h"
#include "plan/plan_summary.h"
#include "style/palette.h"
#include "style/text_format.h"
#include "timeline/time_axis.h"

#include <QAreaSeries>
#include <QBoxLayout>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <cmath>

namespace tmmu::views {

namespace {

std::vector<QPointF> toPoints(const std::vector<SeriesPoint>& series) {
    std::vector<QPointF> points;
    points.reserve(series.size());
    for (const SeriesPoint& s : series)
        points.emplace_back(s.time, double(s.value));
    return points;
}

} // namespace

std::vector<QPointF> downsampleMax(const std::vector<uint64_t>& times,
                                   const std::vector<uint64_t>& values, uint64_t end,
                                   size_t buckets) {
    return toPoints(downsample_max(times, values, end, buckets));
}

std::vector<QPointF> downsampleMax(const std::vector<uint64_t>& times,
                                   const std::vector<uint64_t>& values, uint64_t end,
                                   size_t buckets, double from, double to) {
    return toPoints(downsample_max(times, values, end, buckets, from, to));
}

ByteScale byteScaleFor(uint64_t maxBytes) {
    static const std::array<const char*, 4> units{"B", "KiB", "MiB", "GiB"};
    ByteScale s;
    for (size_t u = 1; u < units.size() && double(maxBytes) >= std::ldexp(1.0, int(10 * u)); ++u)
        s = ByteScale{std::ldexp(1.0, int(10 * u)), QString::fromLatin1(units[u])};
    return s;
}

void labelTimeAxis(QCategoryAxis& axis, double lo, double hi, int maxTicks) {
    for (const QString& label : axis.categoriesLabels())
        axis.remove(label);
    axis.setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    const double step = std::max(1.0, niceTickStep(hi - lo, maxTicks, 1));
    axis.setStartValue(lo);
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step)
        axis.append(tickLabel(v, step), v);
    axis.setRange(lo, hi);
}

double tickStep(const QValueAxis& axis) {
    return (axis.max() - axis.min()) / std::max(1, axis.tickCount() - 1);
}

void clearChart(QChart* chart) {
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
}

void applyCompactChartLayout(QChart* chart) {
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->legend()->setAlignment(Qt::AlignBottom);
    QFont legendFont = chart->legend()->font();
    legendFont.setPointSizeF(std::max(7.0, legendFont.pointSizeF() - 1));
    chart->legend()->setFont(legendFont);
}

void applyChartPalette(QChart* chart, const ViewPalette& palette) {
    chart->setBackgroundBrush(palette.background());
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    chart->setTitleBrush(palette.text());
    chart->legend()->setLabelColor(palette.text());
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setLabelsColor(palette.text());
        axis->setTitleBrush(palette.text());
        axis->setGridLineColor(palette.grid());
        axis->setLinePenColor(palette.grid());
    }
}

// Clicking or dragging on the plot area moves the current event.
class MemoryChartView : public QChartView {
  public:
    MemoryChartView(QChart* chart, MemoryChart* owner) : QChartView(chart), owner_(owner) {
        setRenderHint(QPainter::Antialiasing, false);
        setToolTip(tr("Click to move the cursor"));
    }

  protected:
    void mousePressEvent(QMouseEvent* e) override {
        if (e->button() == Qt::LeftButton) owner_->eventFromChart(e->position());
        QChartView::mousePressEvent(e);
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        if (e->buttons() & Qt::LeftButton) owner_->eventFromChart(e->position());
        QChartView::mouseMoveEvent(e);
    }

  private:
    MemoryChart* owner_;
};

namespace {

QLineSeries* lineSeries(const std::vector<QPointF>& points, QObject* parent = nullptr) {
    auto* s = new QLineSeries(parent);
    s->replace(QList<QPointF>(points.begin(), points.end()));
    return s;
}

QList<QPointF> scaled(const std::vector<QPointF>& points, double divisor) {
    QList<QPointF> out;
    out.reserve(qsizetype(points.size()));
    for (const QPointF& p : points)
        out.append(QPointF(p.x(), p.y() / divisor));
    return out;
}

void hideFromLegend(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* m : chart->legend()->markers(series))
        m->setVisible(false);
}

} // namespace

MemoryChart::MemoryChart(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), arenaBox_(new QComboBox(this)), chart_(new QChart) {
    applyCompactChartLayout(chart_);
    auto* view = new MemoryChartView(chart_, this);
    view->setObjectName(QStringLiteral("memoryChartView"));

    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 2, 4, 0);
    top->addWidget(new QLabel(tr("Arena:"), this));
    top->addWidget(arenaBox_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(view, 1);

    connect(arenaBox_, &QComboBox::activated, this,
            [this](int index) { setArena(arenaBox_->itemData(index).toInt()); });
    connect(ctx_, &PlanContext::planChanged, this, &MemoryChart::onPlanChanged);
    connect(ctx_, &PlanContext::currentEventChanged, this, &MemoryChart::updateCursor);
    connect(ctx_, &PlanContext::timeWindowChanged, this, &MemoryChart::showTimeWindow);
    onPlanChanged();
}

void MemoryChart::setArena(int arena) {
    const Plan* plan = ctx_->plan();
    if (!plan || arena < kAllArenas || arena >= int(plan->arenas.size())) arena = kAllArenas;
    arena_ = arena;
    arenaBox_->setCurrentIndex(std::max(0, arenaBox_->findData(arena)));
    rebuild();
}

double MemoryChart::cursorX() const {
    return cursor_ && cursor_->count() > 0 ? cursor_->at(0).x() : -1.0;
}

void MemoryChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) rebuild();
}

void MemoryChart::onPlanChanged() {
    arenaBox_->clear();
    arenaBox_->addItem(tr("All arenas (stacked)"), kAllArenas);
    if (const Plan* plan = ctx_->plan())
        for (size_t a = 0; a < plan->arenas.size(); ++a)
            arenaBox_->addItem(QString::fromStdString(plan->arenas[a].config.name), int(a));
    setArena(arena_);
}

void MemoryChart::rebuild() {
    clearChart(chart_);
    cursor_ = nullptr;
    series_.clear();
    sampled_ = {};
    axisX_ = new QCategoryAxis;
    axisY_ = new QValueAxis;
    chart_->addAxis(axisX_, Qt::AlignBottom);
    chart_->addAxis(axisY_, Qt::AlignLeft);
    const Plan* plan = ctx_->plan();
    if (!plan || plan->series.times.empty()) {
        applyChartPalette(chart_, ViewPalette::fromApplication());
        return;
    }
    const uint64_t top = arena_ == kAllArenas ? plan_totals(*plan).peak_bytes
                                              : plan->arenas[size_t(arena_)].metrics.peak_bytes;
    ByteScale scale = byteScaleFor(top);
    yMax_ = std::max(1e-9, double(top) / scale.divisor * 1.08);
    divisor_ = scale.divisor;
    if (arena_ == kAllArenas)
        buildStacked(scale.divisor);
    else
        buildArena(size_t(arena_), scale.divisor);

    showTimeWindow();
    axisX_->setTitleText(ctx_->timeUnit());
    axisY_->setRange(0, yMax_);
    axisY_->applyNiceNumbers();
    yMax_ = axisY_->max();
    axisY_->setLabelFormat(axisLabelFormat(tickStep(*axisY_)));
    axisY_->setTitleText(scale.unit);
    ViewPalette palette = ViewPalette::fromApplication();
    addBackwardStart(palette.text());

    cursor_ = new QLineSeries;
    cursor_->setName(tr("cursor"));
    chart_->addSeries(cursor_);
    cursor_->attachAxis(axisX_);
    cursor_->attachAxis(axisY_);
    cursor_->setPen(QPen(palette.cursor(), 2));
    hideFromLegend(chart_, cursor_);
    applyChartPalette(chart_, palette);
    updateCursor();
}

void MemoryChart::buildStacked(double divisor) {
    const Plan& plan = *ctx_->plan();
    const MemorySeries& s = plan.series;
    ViewPalette palette = ViewPalette::fromApplication();
    const std::vector<std::vector<uint64_t>> stack =
        stack_over_arenas(s.live_bytes, s.times.size());
    QLineSeries* below = nullptr;
    for (size_t a = 0; a < plan.arenas.size() && a < stack.size(); ++a) {
        auto* area = new QAreaSeries;
        QLineSeries* upper = sampledSeries(stack[a], area);
        area->setUpperSeries(upper);
        if (below) area->setLowerSeries(below);
        area->setName(QString::fromStdString(plan.arenas[a].config.name));
        QColor color = palette.arena(plan, uint32_t(a));
        area->setPen(QPen(color.darker(130), 1));
        area->setBrush(color);
        chart_->addSeries(area);
        area->attachAxis(axisX_);
        area->attachAxis(axisY_);
        below = upper;
    }
    const PlanTotals totals = plan_totals(plan);
    addHorizontal(tr("Σ lower bounds"), double(totals.lower_bound) / divisor, palette.lowerBound(),
                  Qt::DashLine);
    if (totals.peak_bytes != totals.lower_bound)
        addHorizontal(tr("total height"), double(totals.peak_bytes) / divisor, palette.peak(),
                      Qt::DotLine);
}

void MemoryChart::buildArena(size_t arena, double divisor) {
    const Plan& plan = *ctx_->plan();
    const MemorySeries& s = plan.series;
    const ArenaPlan& a = plan.arenas[arena];
    ViewPalette palette = ViewPalette::fromApplication();
    QColor color = palette.arena(plan, uint32_t(arena));
    if (arena < s.live_bytes.size()) {
        auto* area = new QAreaSeries;
        area->setUpperSeries(sampledSeries(s.live_bytes[arena], area));
        area->setName(tr("live bytes"));
        QColor fill = color;
        fill.setAlpha(170);
        area->setBrush(fill);
        area->setPen(QPen(color.darker(130), 1));
        chart_->addSeries(area);
        area->attachAxis(axisX_);
        area->attachAxis(axisY_);
    }
    if (arena < s.high_water.size()) {
        QLineSeries* hw = sampledSeries(s.high_water[arena], nullptr);
        hw->setName(tr("high-water"));
        hw->setPen(QPen(palette.text(), 1.5));
        chart_->addSeries(hw);
        hw->attachAxis(axisX_);
        hw->attachAxis(axisY_);
    }
    addHorizontal(tr("lower bound"), double(a.metrics.lower_bound) / divisor, palette.lowerBound(),
                  Qt::DashLine);
    addHorizontal(tr("height"), double(a.metrics.peak_bytes) / divisor, palette.peak(),
                  Qt::DotLine);
}

void MemoryChart::addHorizontal(const QString& name, double y, const QColor& color,
                                Qt::PenStyle style) {
    double end = double(ctx_->timeEnd());
    QLineSeries* line = lineSeries({QPointF(0, y), QPointF(end, y)});
    line->setName(name);
    line->setPen(QPen(color, 2, style));
    chart_->addSeries(line);
    line->attachAxis(axisX_);
    line->attachAxis(axisY_);
}

// Where a training schedule's backward pass starts; hovering it tells what the forward pass
// leaves it (the plan's activation retention): the memory that activation checkpointing would
// give back. Forward mode's backward pass runs after the chart ends, so it has no line.
void MemoryChart::addBackwardStart(const QColor& color) {
    const Plan& plan = *ctx_->plan();
    if (plan.mode != Mode::Training || !plan.retention || plan.retention->backward_start == kNone)
        return;
    const double x = double(plan.retention->backward_start);
    QLineSeries* line = lineSeries({QPointF(x, 0), QPointF(x, yMax_)});
    line->setName(tr("backward")); // short enough for a docked chart's legend
    line->setPen(QPen(color, 1.5, Qt::DashDotLine));
    const QString tip = tr("The backward pass starts at step %1. Activation retention: %2.")
                            .arg(plan.retention->backward_start)
                            .arg(QString::fromStdString(retention_text(plan)));
    line->setProperty("tip", tip); // tests read it
    connect(line, &QLineSeries::hovered, this, [this, tip](const QPointF&, bool on) {
        if (on)
            QToolTip::showText(QCursor::pos(), tip, this);
        else
            QToolTip::hideText();
    });
    chart_->addSeries(line);
    line->attachAxis(axisX_);
    line->attachAxis(axisY_);
}

QLineSeries* MemoryChart::sampledSeries(std::vector<uint64_t> values, QObject* parent) {
    auto* line = new QLineSeries(parent);
    series_.push_back({line, std::move(values)});
    return line;
}

void MemoryChart::showTimeWindow() {
    const Plan* plan = ctx_->plan();
    if (!plan || plan->series.times.empty()) return; // nothing drawn, axes left empty
    TimeWindow w = ctx_->timeWindow();
    labelTimes(w);
    bool covered = w.lo >= sampled_.lo && w.hi() <= sampled_.hi && 2 * w.span >= sampled_.forSpan;
    if (!covered) resample(w.lo, w.span);
}

void MemoryChart::labelTimes(const TimeWindow& w) {
    labelTimeAxis(*axisX_, w.lo, w.hi(), 6);
}

void MemoryChart::resample(double lo, double span) {
    TimeWindow domain = ctx_->timeDomain();
    sampled_.lo = std::max(domain.lo, lo - span);
    sampled_.hi = std::min(domain.hi(), lo + 2 * span);
    sampled_.forSpan = span;
    const std::vector<uint64_t>& times = ctx_->plan()->series.times;
    for (const Sampled& s : series_)
        s.line->replace(scaled(
            downsampleMax(times, s.values, ctx_->timeEnd(), kMaxBuckets, sampled_.lo, sampled_.hi),
            divisor_));
}

void MemoryChart::updateCursor() {
    if (!cursor_) return;
    double x = double(ctx_->currentTime()) + 0.5;
    cursor_->replace(QList<QPointF>{QPointF(x, 0), QPointF(x, yMax_)});
}

void MemoryChart::eventFromChart(const QPointF& viewPos) {
    if (!ctx_->plan() || !cursor_) return;
    auto* view = findChild<QChartView*>();
    QPointF scenePos = view->mapToScene(viewPos.toPoint());
    QPointF chartPos = chart_->mapFromScene(scenePos);
    if (!chart_->plotArea().contains(chartPos)) return;
    double x = chart_->mapToValue(chartPos, cursor_).x();
    ctx_->setCurrentEvent(ctx_->eventAxis().eventAt(uint64_t(std::max(0.0, std::floor(x)))));
}

} // namespace tmmu::views
