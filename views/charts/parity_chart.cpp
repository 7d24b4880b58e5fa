#include "charts/parity_chart.h"

#include "charts/memory_chart.h"
#include "style/palette.h"

#include <QBoxLayout>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedLayout>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace tmmu::views {

namespace {

constexpr double kFloor = 1e-18; // where a step whose logits match exactly is drawn

} // namespace

ParityChart::ParityChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), caption_(new QLabel(this)), message_(new QLabel(this)),
      stack_(new QStackedLayout) {
    setObjectName(QStringLiteral("parityChart"));
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->setMargins(QMargins(2, 2, 2, 2));
    auto* view = new QChartView(chart_, this);
    view->setRenderHint(QPainter::Antialiasing);
    caption_->setWordWrap(true);
    message_->setWordWrap(true);
    message_->setAlignment(Qt::AlignCenter);
    auto* page = new QWidget(this);
    auto* column = new QVBoxLayout(page);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(caption_);
    column->addWidget(view, 1);
    stack_->addWidget(message_);
    stack_->addWidget(page);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addLayout(stack_);
    showMessage(tr("Run on a GPU backend with \"Compare with CPU\" (Run panel) to see every "
                   "step's logits against the CPU backend's"));
}

void ParityChart::setParity(std::shared_ptr<const runtime::BackendParity> parity,
                            const QString& backend, double gate, bool passes) {
    parity_ = std::move(parity);
    backend_ = backend;
    gate_ = gate;
    passes_ = passes;
    if (!parity_ || parity_->steps.empty()) {
        showMessage(tr("No steps were compared"));
        return;
    }
    stack_->setCurrentIndex(1);
    rebuild();
}

void ParityChart::showMessage(const QString& message) {
    parity_.reset();
    clearChart(chart_);
    caption_->clear();
    message_->setText(message);
    stack_->setCurrentIndex(0);
}

QString ParityChart::caption() const {
    return caption_->text();
}

void ParityChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && parity_) rebuild();
}

void ParityChart::rebuild() {
    clearChart(chart_);
    const ViewPalette palette = ViewPalette::fromApplication();
    const runtime::BackendParity& p = *parity_;
    auto* nmse = new QLineSeries;
    nmse->setName(tr("NMSE per step"));
    nmse->setColor(palette.slot(1));
    nmse->setPointsVisible(true);
    auto* misses = new QScatterSeries;
    misses->setName(tr("argmax differs"));
    misses->setColor(palette.peak());
    misses->setMarkerSize(9);
    auto* gate = new QLineSeries;
    gate->setName(tr("gate %1").arg(gate_, 0, 'g', 1));
    QPen dashed(palette.lowerBound());
    dashed.setStyle(Qt::DashLine);
    gate->setPen(dashed);
    // log10 of the NMSE on a linear axis labelled as powers of ten: a log axis labels every
    // decade, and ten decades do not fit a dock's height.
    double low = std::log10(gate_), high = low;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const double y = std::log10(std::max(p.steps[s].nmse, kFloor));
        nmse->append(double(s), y);
        if (p.steps[s].same_argmax < p.steps[s].rows) misses->append(double(s), y);
        low = std::min(low, y);
        high = std::max(high, y);
    }
    const double last = double(std::max<size_t>(p.steps.size(), 2) - 1);
    gate->append(0, std::log10(gate_));
    gate->append(last, std::log10(gate_));
    for (QAbstractSeries* series :
         {static_cast<QAbstractSeries*>(gate), static_cast<QAbstractSeries*>(nmse),
          static_cast<QAbstractSeries*>(misses)})
        chart_->addSeries(series);
    auto* axisX = new QValueAxis;
    axisX->setRange(0, last);
    axisX->setLabelFormat(QStringLiteral("%.0f"));
    axisX->setTitleText(tr("step"));
    // Whole decades, a label every `step` of them: three labels fit a short dock unelided.
    const double bottom = std::floor(low), top = std::ceil(high) + 1;
    const double step = std::max(1.0, std::ceil((top - bottom) / 2));
    auto* axisY = new QValueAxis;
    axisY->setRange(bottom, bottom + step * std::ceil((top - bottom) / step));
    axisY->setTickType(QValueAxis::TicksDynamic);
    axisY->setTickAnchor(bottom);
    axisY->setTickInterval(step);
    axisY->setLabelFormat(QStringLiteral("1e%.0f"));
    axisY->setTitleText(tr("NMSE"));
    QFont small = axisY->labelsFont();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1.5));
    for (QAbstractAxis* axis :
         {static_cast<QAbstractAxis*>(axisX), static_cast<QAbstractAxis*>(axisY)}) {
        axis->setLabelsFont(small);
        axis->setTitleFont(small);
    }
    chart_->addAxis(axisX, Qt::AlignBottom);
    chart_->addAxis(axisY, Qt::AlignLeft);
    for (QAbstractSeries* series : chart_->series()) {
        series->attachAxis(axisX);
        series->attachAxis(axisY);
    }
    applyChartPalette(chart_, palette);
    connect(nmse, &QLineSeries::hovered, this, [this](const QPointF& point, bool on) {
        const auto s = size_t(std::lround(point.x()));
        if (!on || !parity_ || s >= parity_->steps.size()) {
            QToolTip::hideText();
            return;
        }
        const runtime::StepAgreement& a = parity_->steps[s];
        QToolTip::showText(QCursor::pos(),
                           tr("step %1: NMSE %2, argmax %3/%4 rows")
                               .arg(s)
                               .arg(a.nmse, 0, 'g', 2)
                               .arg(a.same_argmax)
                               .arg(a.rows),
                           this);
    });
    caption_->setText(tr("%1 vs cpu: %2, %3")
                          .arg(backend_, QString::fromStdString(runtime::describe(p)),
                               (passes_ ? tr("passes the gate (NMSE ≤ %1, at most 1 argmax "
                                             "miss in 64 rows)")
                                        : tr("FAILS the gate (NMSE ≤ %1, at most 1 argmax miss "
                                             "in 64 rows)"))
                                   .arg(gate_, 0, 'g', 1)));
}

} // namespace tmmu::views
