#include "charts/strategy_chart.h"

#include "charts/memory_chart.h"
#include "style/palette.h"
#include "style/text_format.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
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

namespace tmmu::views {
namespace {

QString overBound(const StrategyResult& r) {
    if (!r.error.empty()) return QObject::tr("failed");
    if (r.lower_bound == 0) return QStringLiteral("+0%");
    double pct = 100.0 * (double(r.height) - double(r.lower_bound)) / double(r.lower_bound);
    return QStringLiteral("+%1%").arg(pct, 0, 'f', pct < 10 ? 2 : 1);
}

QString tooltipFor(const StrategyResult& r, const ByteScale& scale) {
    if (!r.error.empty())
        return QStringLiteral("%1: %2").arg(QString::fromStdString(r.strategy),
                                            QString::fromStdString(r.error));
    return QObject::tr("%1: height %2 %4, lower bound %3 %4 (%5), planned in %6 ms")
        .arg(QString::fromStdString(r.strategy))
        .arg(double(r.height) / scale.divisor, 0, 'f', 2)
        .arg(double(r.lower_bound) / scale.divisor, 0, 'f', 2)
        .arg(scale.unit, overBound(r))
        .arg(r.ms, 0, 'f', 2);
}

} // namespace

StrategyChart::StrategyChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)),
      message_(new QLabel(this)) {
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setMargins(QMargins(2, 2, 2, 2));
    chart_->legend()->setAlignment(Qt::AlignBottom);
    QFont legendFont = chart_->legend()->font();
    legendFont.setPointSizeF(std::max(7.0, legendFont.pointSizeF() - 1));
    chart_->legend()->setFont(legendFont);
    view_->setObjectName(QStringLiteral("strategyChartView"));
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    auto* stack = new QStackedLayout(this);
    stack->addWidget(view_);
    stack->addWidget(message_);
    showMessage(tr("No comparison yet"));
}

void StrategyChart::setResults(std::vector<StrategyResult> results, const std::string& current) {
    results_ = std::move(results);
    current_ = current;
    rebuild();
    static_cast<QStackedLayout*>(layout())->setCurrentWidget(view_);
}

void StrategyChart::showMessage(const QString& message) {
    message_->setText(message);
    static_cast<QStackedLayout*>(layout())->setCurrentWidget(message_);
}

void StrategyChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) rebuild();
}

void StrategyChart::rebuild() {
    clearChart(chart_);
    ViewPalette palette = ViewPalette::fromApplication();
    uint64_t top = 0;
    double slowest = 0;
    for (const StrategyResult& r : results_) {
        top = std::max({top, r.height, r.lower_bound});
        slowest = std::max(slowest, r.ms);
    }
    ByteScale scale = byteScaleFor(top);

    auto* height = new QBarSet(tr("height"));
    auto* bound = new QBarSet(tr("lower bound"));
    height->setColor(palette.role(Role::Parameter));
    height->setBorderColor(palette.role(Role::Parameter).darker(130));
    bound->setColor(palette.lowerBound());
    bound->setBorderColor(palette.lowerBound().darker(130));
    auto* time = new QLineSeries;
    time->setName(tr("planning time (ms)"));
    time->setPen(QPen(palette.cursor(), 2));
    time->setPointsVisible(true);
    QStringList categories;
    for (size_t i = 0; i < results_.size(); ++i) {
        const StrategyResult& r = results_[i];
        height->append(double(r.height) / scale.divisor);
        bound->append(double(r.lower_bound) / scale.divisor);
        time->append(double(i), r.ms);
        QString name = QString::fromStdString(r.strategy);
        if (r.strategy == current_) name = QStringLiteral("[%1]").arg(name);
        categories << QStringLiteral("%1 %2").arg(name, overBound(r));
    }
    auto* bars = new QBarSeries;
    bars->append(height);
    bars->append(bound);
    bars->setBarWidth(0.7);
    chart_->addSeries(bars);
    chart_->addSeries(time);

    auto* axisX = new QBarCategoryAxis;
    axisX->append(categories);
    QFont small = axisX->labelsFont();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1.5));
    axisX->setLabelsFont(small);
    // Fifteen strategies: level labels would be elided to their first letters; upright ones
    // keep a category one text line wide.
    axisX->setLabelsAngle(-90);
    auto* axisY = new QValueAxis;
    axisY->setRange(0, std::max(1e-9, double(top) / scale.divisor * 1.1));
    axisY->setTickCount(3);
    axisY->applyNiceNumbers();
    axisY->setLabelFormat(axisLabelFormat(tickStep(*axisY)));
    axisY->setTitleText(scale.unit);
    auto* axisMs = new QValueAxis;
    axisMs->setRange(0, std::max(0.001, slowest * 1.2));
    axisMs->setTickCount(3); // a short dock fits three labels without eliding them
    axisMs->applyNiceNumbers();
    axisMs->setLabelFormat(axisLabelFormat(tickStep(*axisMs)));
    axisMs->setTitleText(tr("ms"));
    chart_->addAxis(axisX, Qt::AlignBottom);
    chart_->addAxis(axisY, Qt::AlignLeft);
    chart_->addAxis(axisMs, Qt::AlignRight);
    bars->attachAxis(axisX);
    bars->attachAxis(axisY);
    time->attachAxis(axisX);
    time->attachAxis(axisMs);
    axisMs->setGridLineVisible(false);
    applyChartPalette(chart_, palette);

    connect(bars, &QBarSeries::hovered, this, [this, scale](bool on, int index, QBarSet*) {
        if (on && index >= 0 && size_t(index) < results_.size())
            QToolTip::showText(QCursor::pos(), tooltipFor(results_[size_t(index)], scale), this);
        else
            QToolTip::hideText();
    });
}

} // namespace tmmu::views
