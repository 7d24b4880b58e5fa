#include "charts/strategy_chart.h"

#include "charts/memory_chart.h"
#include "style/palette.h"

#include <QBoxLayout>
#include <QEvent>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QStackedLayout>
#include <QTimer>
#include <QToolTip>

#include <algorithm>

namespace tmmu::views {
namespace {

QString percentOver(uint64_t height, uint64_t bound) {
    if (bound == 0) return QStringLiteral("+0%");
    double pct = 100.0 * (double(height) - double(bound)) / double(bound);
    return QStringLiteral("+%1%").arg(pct, 0, 'f', pct < 10 ? 2 : 1);
}

QString overBound(const StrategyResult& r) {
    if (!r.error.empty()) return QObject::tr("failed");
    return percentOver(r.height, r.lower_bound);
}

QString tooltipFor(const StrategyResult& r, const ByteScale& scale) {
    if (!r.error.empty())
        return QStringLiteral("%1: %2").arg(QString::fromStdString(r.strategy),
                                            QString::fromStdString(r.error));
    const QString aligned = r.aligned_bound > r.lower_bound
                                ? QObject::tr(", the least aligned buffers allow %1 %2 (%3)")
                                      .arg(double(r.aligned_bound) / scale.divisor, 0, 'f', 2)
                                      .arg(scale.unit, percentOver(r.height, r.aligned_bound))
                                : QString();
    return QObject::tr("%1: height %2 %4, lower bound %3 %4 (%5)%6, planned in %7 ms")
        .arg(QString::fromStdString(r.strategy))
        .arg(double(r.height) / scale.divisor, 0, 'f', 2)
        .arg(double(r.lower_bound) / scale.divisor, 0, 'f', 2)
        .arg(scale.unit, overBound(r), aligned)
        .arg(r.ms, 0, 'f', 2);
}

QString msText(double ms) {
    return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 2 : ms < 100 ? 1 : 0);
}

} // namespace

// The drawing: a legend line, then one row per result.
//   [name +x%]  [height bar, lower bound marked      ]  [height unit · time ms]
//               [time bar                 ]
// Columns are as wide as their widest text, the bars take the rest; bars scale to the tallest
// height (time bars to the slowest strategy).
class StrategyBars : public QWidget {
  public:
    explicit StrategyBars(const StrategyChart* chart) : chart_(chart) {}

    int rowHeight() const { return fontMetrics().height() + 6; }
    QSize sizeHint() const override {
        return {320, rowHeight() * int(chart_->results_.size()) + 4};
    }
    QSize minimumSizeHint() const override { return {160, sizeHint().height()}; }

    struct Layout {
        int nameRight = 0, barLeft = 0, barRight = 0;
        uint64_t top = 1;
        double slowest = 0;
        ByteScale scale;
    };
    Layout measure() const {
        const QFontMetrics fm = fontMetrics();
        Layout l;
        int names = 0, figures = 0;
        for (size_t i = 0; i < chart_->results_.size(); ++i) {
            const StrategyResult& r = chart_->results_[i];
            l.top = std::max({l.top, r.height, r.lower_bound});
            l.slowest = std::max(l.slowest, r.ms);
        }
        l.scale = byteScaleFor(l.top);
        const QStringList labels = chart_->labels();
        for (size_t i = 0; i < chart_->results_.size(); ++i) {
            names = std::max(names, bold(i).horizontalAdvance(labels[int(i)]));
            figures = std::max(figures, fm.horizontalAdvance(figuresText(i, l.scale)));
        }
        l.nameRight = 6 + names;
        l.barLeft = l.nameRight + 8;
        l.barRight = std::max(l.barLeft + 20, width() - 8 - figures - 8);
        return l;
    }
    QRectF rowRect(size_t i) const { return QRectF(0, rowTop(i), width(), rowHeight()); }
    QRectF heightBar(size_t i, const Layout& l) const {
        const StrategyResult& r = chart_->results_[i];
        if (!r.error.empty()) return {};
        const double w = double(l.barRight - l.barLeft) * double(r.height) / double(l.top);
        return QRectF(l.barLeft, rowTop(i) + 2, w, rowHeight() - 8);
    }
    QRectF timeBar(size_t i, const Layout& l) const {
        const StrategyResult& r = chart_->results_[i];
        if (!r.error.empty() || l.slowest <= 0) return {};
        const double w = double(l.barRight - l.barLeft) * r.ms / l.slowest;
        return QRectF(l.barLeft, rowTop(i) + rowHeight() - 5, std::max(w, 1.0), 3);
    }

  protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const ViewPalette palette = ViewPalette::fromApplication();
        p.fillRect(rect(), palette.background());
        const Layout l = measure();
        const QFontMetrics fm = fontMetrics();
        const QStringList labels = chart_->labels();
        for (size_t i = 0; i < chart_->results_.size(); ++i) {
            const StrategyResult& r = chart_->results_[i];
            const int top = rowTop(i);
            p.setFont(boldFont(i));
            p.setPen(palette.text());
            p.drawText(QRect(6, top, l.nameRight - 6, rowHeight()), Qt::AlignVCenter,
                       labels[int(i)]);
            p.setFont(font());
            if (!r.error.empty()) {
                const QRect reason(l.barLeft, top, width() - l.barLeft - 6, rowHeight());
                p.drawText(
                    reason, Qt::AlignVCenter,
                    fm.elidedText(QString::fromStdString(r.error), Qt::ElideRight, reason.width()));
                continue;
            }
            p.fillRect(heightBar(i, l), palette.role(Role::Parameter));
            p.fillRect(timeBar(i, l), palette.cursor());
            const double bound =
                l.barLeft + double(l.barRight - l.barLeft) * double(r.lower_bound) / double(l.top);
            p.fillRect(QRectF(bound - 1, top + 1, 2, rowHeight() - 2), palette.lowerBound());
            p.drawText(QRect(l.barRight + 8, top, width() - l.barRight - 14, rowHeight()),
                       Qt::AlignVCenter | Qt::AlignRight, figuresText(i, l.scale));
        }
    }

    bool event(QEvent* event) override {
        if (event->type() != QEvent::ToolTip) return QWidget::event(event);
        const auto* help = static_cast<QHelpEvent*>(event);
        const int row = (help->pos().y() - 2) / rowHeight();
        if (help->pos().y() >= 2 && row >= 0 && size_t(row) < chart_->results_.size())
            QToolTip::showText(help->globalPos(),
                               tooltipFor(chart_->results_[size_t(row)], measure().scale), this);
        else
            QToolTip::hideText();
        return true;
    }

  private:
    int rowTop(size_t i) const { return 2 + int(i) * rowHeight(); }
    bool current(size_t i) const { return chart_->results_[i].strategy == chart_->current_; }
    QFont boldFont(size_t i) const {
        QFont f = font();
        f.setBold(current(i));
        return f;
    }
    QFontMetrics bold(size_t i) const { return QFontMetrics(boldFont(i)); }
    QString figuresText(size_t i, const ByteScale& scale) const {
        const StrategyResult& r = chart_->results_[i];
        if (!r.error.empty()) return {};
        return QStringLiteral("%1 %2 · %3")
            .arg(double(r.height) / scale.divisor, 0, 'f', 2)
            .arg(scale.unit, msText(r.ms));
    }
    const StrategyChart* chart_;
};

// The legend above the rows (which scroll under it).
class StrategyLegend : public QWidget {
  public:
    explicit StrategyLegend(const StrategyChart* chart) : chart_(chart) {}
    QSize sizeHint() const override { return {320, fontMetrics().height() + 8}; }
    QSize minimumSizeHint() const override { return {0, sizeHint().height()}; }

  protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const ViewPalette palette = ViewPalette::fromApplication();
        p.fillRect(rect(), palette.background());
        uint64_t top = 1;
        for (const StrategyResult& r : chart_->results_)
            top = std::max({top, r.height, r.lower_bound});
        const QFontMetrics fm = fontMetrics();
        int x = 6;
        const int y = height() / 2;
        auto item = [&](const QColor& colour, QSize swatch, const QString& text) {
            p.fillRect(QRect(QPoint(x, y - swatch.height() / 2), swatch), colour);
            x += swatch.width() + 4;
            p.setPen(palette.text());
            p.drawText(QRect(x, 0, fm.horizontalAdvance(text) + 2, height()), Qt::AlignVCenter,
                       text);
            x += fm.horizontalAdvance(text) + 12;
        };
        item(palette.role(Role::Parameter), QSize(10, 10),
             tr("height (%1)").arg(byteScaleFor(top).unit));
        item(palette.lowerBound(), QSize(2, 12), tr("lower bound"));
        item(palette.cursor(), QSize(10, 3), tr("planning time"));
    }

  private:
    const StrategyChart* chart_;
};

StrategyChart::StrategyChart(QWidget* parent)
    : QWidget(parent), bars_(new StrategyBars(this)), scroll_(new QScrollArea(this)),
      message_(new QLabel(this)) {
    bars_->setObjectName(QStringLiteral("strategyBars"));
    scroll_->setWidget(bars_);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    auto* shown = new QWidget(this);
    auto* column = new QVBoxLayout(shown);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(new StrategyLegend(this));
    column->addWidget(scroll_, 1);
    auto* stack = new QStackedLayout(this);
    stack->addWidget(shown);
    stack->addWidget(message_);
    showMessage(tr("No comparison yet"));
}

void StrategyChart::setResults(std::vector<StrategyResult> results, const std::string& current) {
    results_ = std::move(results);
    current_ = current;
    // Every row at its height: a shorter dock scrolls, to the plan on screen's row once the
    // scroll area has taken the new height.
    bars_->setMinimumHeight(bars_->sizeHint().height());
    bars_->update();
    static_cast<QStackedLayout*>(layout())->setCurrentIndex(0);
    const auto row = std::find_if(results_.begin(), results_.end(),
                                  [&](const StrategyResult& r) { return r.strategy == current; });
    if (row != results_.end())
        QTimer::singleShot(0, this, [this, i = size_t(row - results_.begin())] {
            const QRectF bar = bars_->rowRect(i);
            scroll_->ensureVisible(0, int(bar.center().y()), 0, scroll_->viewport()->height() / 2);
        });
}

void StrategyChart::showMessage(const QString& message) {
    message_->setText(message);
    static_cast<QStackedLayout*>(layout())->setCurrentWidget(message_);
}

QStringList StrategyChart::labels() const {
    QStringList labels;
    for (const StrategyResult& r : results_) {
        QString name = QString::fromStdString(r.strategy);
        if (r.strategy == current_) name = QStringLiteral("[%1]").arg(name);
        labels << QStringLiteral("%1 %2").arg(name, overBound(r));
    }
    return labels;
}

QString StrategyChart::tooltip(size_t i) const {
    return tooltipFor(results_.at(i), bars_->measure().scale);
}

QWidget* StrategyChart::bars() const {
    return bars_;
}

QRectF StrategyChart::heightBar(size_t i) const {
    return bars_->heightBar(i, bars_->measure());
}

QRectF StrategyChart::timeBar(size_t i) const {
    return bars_->timeBar(i, bars_->measure());
}

} // namespace tmmu::views
