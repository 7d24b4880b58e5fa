#include "token_graph/event_memory_chart.h"

#include "context/plan_context.h"
#include "style/palette.h"
#include "style/text_format.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace tmmu::views {

EventMemoryChart::EventMemoryChart(PlanContext* ctx, QWidget* parent) : QWidget(parent), ctx_(ctx) {
    setMinimumHeight(110);
    connect(ctx_, &PlanContext::currentEventChanged, this, qOverload<>(&QWidget::update));
}

void EventMemoryChart::setTrace(const lazy::Trace* trace) {
    series_ = trace ? lazy::memory_series(*trace) : lazy::MemorySeries{};
    maxBytes_ = 0;
    for (size_t i = 0; i < series_.live.size(); ++i)
        maxBytes_ =
            std::max(maxBytes_, series_.live[i] + series_.pending[i] + series_.acquirable[i]);
    update();
}

namespace {

constexpr double kLegendRow = 16;

} // namespace

QStringList EventMemoryChart::legendNames() {
    return {tr("live"), tr("pending release"), tr("acquirable")};
}

// The legend's items flow into rows; an item is measured with the widest value it can show, so
// the plot keeps its place while the values change from event to event.
std::vector<QPointF> EventMemoryChart::legendPositions() const {
    const QFontMetrics fm = fontMetrics();
    const int widestValue = fm.horizontalAdvance(QStringLiteral(" 1023.99 MiB"));
    std::vector<QPointF> at;
    double x = 8, y = 23;
    for (const QString& name : legendNames()) {
        const double w = 14 + fm.horizontalAdvance(name) + widestValue;
        if (x > 8 && x + w > width() - 8) {
            x = 8;
            y += kLegendRow;
        }
        at.emplace_back(x, y);
        x += w + 12;
    }
    return at;
}

QRectF EventMemoryChart::plotRect() const {
    return QRectF(rect()).adjusted(8, legendPositions().back().y() + 17, -8, -6);
}

void EventMemoryChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const ViewPalette pal = ViewPalette::fromApplication();
    p.fillRect(rect(), pal.background());
    const QRectF plot = plotRect();
    const size_t n = series_.live.size();
    p.setPen(pal.text());
    if (n == 0 || maxBytes_ == 0) {
        p.drawText(rect(), Qt::AlignCenter, tr("No pool memory in this trace"));
        return;
    }
    const uint64_t at = std::min<uint64_t>(ctx_->currentEvent(), n - 1);
    const QColor colours[3] = {pal.slot(0), pal.slot(1), pal.grid()};
    // Two lines: the total at the cursor, then a legend that is also the breakdown.
    const uint64_t parts_at[3] = {series_.live[at], series_.pending[at], series_.acquirable[at]};
    p.drawText(QRectF(8, 2, width() - 16, 16), Qt::AlignLeft | Qt::AlignVCenter,
               tr("Pool at event %1: %2 held")
                   .arg(at)
                   .arg(humanBytes(parts_at[0] + parts_at[1] + parts_at[2])));
    const QStringList names = legendNames();
    const std::vector<QPointF> legend = legendPositions();
    for (int k = 0; k < 3; ++k) {
        p.fillRect(QRectF(legend[k], QSizeF(10, 10)), colours[k]);
        p.drawText(legend[k] + QPointF(14, 9),
                   QStringLiteral("%1 %2").arg(names[k], humanBytes(parts_at[k])));
    }
    const int columns = std::max(1, int(plot.width()));
    for (int c = 0; c < columns; ++c) {
        // The column's events; the tallest stack among them stands for all (no peak is lost).
        const auto lo = size_t(double(c) / columns * n);
        const auto hi = std::max(lo + 1, size_t(double(c + 1) / columns * n));
        size_t best = lo;
        for (size_t i = lo; i < std::min(hi, n); ++i)
            if (series_.live[i] + series_.pending[i] + series_.acquirable[i] >
                series_.live[best] + series_.pending[best] + series_.acquirable[best])
                best = i;
        const uint64_t parts[3] = {series_.live[best], series_.pending[best],
                                   series_.acquirable[best]};
        double y = plot.bottom();
        for (int k = 0; k < 3; ++k) {
            const double h = plot.height() * double(parts[k]) / double(maxBytes_);
            p.fillRect(QRectF(plot.left() + c, y - h, 1.0, h), colours[k]);
            y -= h;
        }
    }
    const double cursor = plot.left() + plot.width() * (double(at) + 0.5) / double(n);
    p.setPen(QPen(pal.cursor(), 1.5));
    p.drawLine(QPointF(cursor, plot.top()), QPointF(cursor, plot.bottom()));
}

void EventMemoryChart::mousePressEvent(QMouseEvent* event) {
    const QRectF plot = plotRect();
    if (series_.live.empty() || !plot.contains(event->position())) return;
    const double f = (event->position().x() - plot.left()) / plot.width();
    ctx_->setCurrentEvent(uint64_t(f * double(series_.live.size())));
}

} // namespace tmmu::views
