#include "timeline/timeline_view.h"

#include "report/palette.h"
#include "style/text_format.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace tmmu::views {

namespace report = sessions::report;
namespace {

constexpr int kAxisHeight = 20;
constexpr int kDragThreshold = 3;
constexpr double kKeyZoom = 1.25;
// A colour key is a role, or a slot modulo the slot colours: geometry is batched per key.
constexpr size_t kColourKeys = std::max(kRoleCount, report::kSlotColors);

QColor textOn(const QColor& fill) {
    return qGray(fill.rgb()) > 130 ? Qt::black : Qt::white;
}

} // namespace

TimelineView::TimelineView(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), palette_(ViewPalette::fromApplication()) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setWhatsThis(navigationHelp());
    connect(ctx_, &PlanContext::planChanged, this, &TimelineView::onPlanChanged);
    connect(ctx_, &PlanContext::currentEventChanged, this, &TimelineView::onEventChanged);
    connect(ctx_, &PlanContext::timeWindowChanged, this, &TimelineView::onTimeWindowChanged);
    connect(ctx_, &PlanContext::selectionChanged, this, &TimelineView::onSelectionChanged);
    connect(ctx_, &PlanContext::colorModeChanged, this, &TimelineView::onColourModeChanged);
}

QString TimelineView::navigationHelp() {
    return tr("Wheel: zoom time around the cursor · Ctrl/Shift+wheel: zoom rows\n"
              "Drag: pan · W/S: zoom in/out · A/D: pan left/right · Shift+W/S: zoom rows\n"
              "PgUp/PgDn: scroll rows · Ctrl+0: reset zoom · Click: select tensor and step");
}

QRect TimelineView::plotRect() const {
    int left = gutterWidth();
    int top = topStripHeight();
    return QRect(left, top, std::max(1, width() - left - 1),
                 std::max(1, height() - top - kAxisHeight));
}

double TimelineView::cursorX() const {
    return xOfTime(double(ctx_->currentTime()) + 0.5);
}

void TimelineView::onPlanChanged() {
    plan_ = ctx_->planPtr();
    strip_ = {}; // a new plan may come at the old one's address
    hovered_ = -1;
    textCache_.clear();
    rolesPresent_ = 0;
    if (plan_)
        for (const auto& t : plan_->tensors)
            rolesPresent_ |= 1u << unsigned(t.role);
    onColourModeChanged();
    rebuildAll();
}

void TimelineView::onColourModeChanged() {
    colourKeys_.clear();
    if (plan_) {
        colourKeys_.reserve(plan_->tensors.size());
        for (const auto& t : plan_->tensors)
            colourKeys_.push_back(colourKey(t.role, t.slot));
    }
    update();
}

void TimelineView::rebuildAll() {
    if (plan_)
        rebuildData();
    else
        clearData();
    syncAxes();
    // Same domain and minimum span as the context's window, so applying it is exact.
    TimeWindow domain = ctx_->timeDomain();
    xAxis_.setDomain(domain.lo, domain.hi());
    xAxis_.setMinSpan(ctx_->minTimeSpan());
    TimeWindow shown = ctx_->timeWindow();
    xAxis_.setWindow(shown.lo, shown.span);
    yAxis_.setInverted(valuesInverted());
    yAxis_.setDomain(0, std::max(valueDomain(), 1.0));
    yAxis_.setMinSpan(minValueSpan());
    invalidateGeometry();
    update();
}

void TimelineView::onEventChanged() {
    ensureTimeVisible(double(ctx_->currentTime()) + 0.5);
    update();
}

void TimelineView::onTimeWindowChanged(TimeWindow window) {
    // Applies the shared window without writing it back: the context emits only on a change,
    // and this is the only path by which a view learns of another view's zoom.
    xAxis_.setWindow(window.lo, window.span);
    update();
}

void TimelineView::publishTimeWindow() {
    ctx_->setTimeWindow({xAxis_.visibleLo(), xAxis_.span()});
    update();
}

void TimelineView::onSelectionChanged(int planned) {
    selectionChangedFromContext(planned);
    update();
}

void TimelineView::selectionChangedFromContext(int planned) {
    if (planned < 0) return;
    QRectF r = rectOf(planned);
    if (r.isEmpty() && r.width() <= 0 && r.height() <= 0) return;
    QRect plot = plotRect();
    double dx = 0, dy = 0;
    if (r.right() < plot.left() || r.left() > plot.right()) dx = r.center().x() - plot.center().x();
    if (r.bottom() < plot.top() || r.top() > plot.bottom()) dy = r.center().y() - plot.center().y();
    if (dx != 0 || dy != 0) panBy(dx, dy);
}

void TimelineView::ensureTimeVisible(double t) {
    syncAxes();
    if (t >= xAxis_.visibleLo() && t <= xAxis_.visibleHi()) return;
    // Keeps the span bit-identical, so the scroll does not rebuild geometry.
    xAxis_.setWindow(t - xAxis_.span() / 2, xAxis_.span());
    publishTimeWindow();
}

void TimelineView::zoomTime(double factor, double atX) {
    syncAxes();
    xAxis_.zoomAround(atX - plotRect().left(), factor);
    publishTimeWindow();
}

void TimelineView::zoomValues(double factor, double atY) {
    syncAxes();
    yAxis_.zoomAround(atY - plotRect().top(), factor);
    update();
}

void TimelineView::panBy(double dx, double dy) {
    syncAxes();
    xAxis_.pan(dx);
    yAxis_.pan(dy);
    publishTimeWindow();
}

void TimelineView::setTimeRange(double lo, double hi) {
    syncAxes();
    xAxis_.setVisible(lo, hi);
    publishTimeWindow();
}

void TimelineView::resetZoom() {
    xAxis_.reset();
    yAxis_.reset();
    publishTimeWindow();
}

void TimelineView::syncAxes() const {
    QRect plot = plotRect();
    xAxis_.setLength(plot.width());
    yAxis_.setLength(plot.height());
}

uint8_t TimelineView::colourKey(Role role, uint32_t slot) const {
    return ctx_->colorMode() == ColorMode::Role ? uint8_t(role)
                                                : uint8_t(slot % report::kSlotColors);
}

QColor TimelineView::colourOf(uint8_t key) const {
    return ctx_->colorMode() == ColorMode::Role ? palette_.role(Role(key % kRoleCount))
                                                : palette_.slot(key);
}

QString TimelineView::tensorLabel(int planned) const {
    const PlannedTensor& t = plan_->tensors[size_t(planned)];
    return QString::fromStdString(t.name.empty() ? t.id : t.name);
}

double TimelineView::distanceTo(QRectF r, QPoint p) {
    if (r.width() < 1) r = QRectF(std::floor(r.center().x()), r.top(), 1, r.height());
    if (r.height() < 1) r = QRectF(r.left(), std::floor(r.center().y()), r.width(), 1);
    QPointF c = QPointF(p) + QPointF(0.5, 0.5);
    double dx = std::max({r.left() - c.x(), 0.0, c.x() - r.right()});
    double dy = std::max({r.top() - c.y(), 0.0, c.y() - r.bottom()});
    return std::hypot(dx, dy);
}

QString TimelineView::tooltipText(int planned) const {
    const PlannedTensor& t = plan_->tensors[size_t(planned)];
    QString name = QString::fromStdString(t.name.empty() ? t.id : t.name).toHtmlEscaped();
    QString text = QStringLiteral("<b>%1</b>").arg(name);
    if (!t.name.empty() && t.name != t.id)
        text += QStringLiteral(" <small>(%1)</small>")
                    .arg(QString::fromStdString(t.id).toHtmlEscaped());
    QString arena = t.arena < plan_->arenas.size()
                        ? QString::fromStdString(plan_->arenas[t.arena].config.name)
                        : QStringLiteral("?");
    text +=
        tr("<br>%1 in %2, slot %3")
            .arg(QString::fromUtf8(role_name(t.role).data(), qsizetype(role_name(t.role).size())),
                 arena.toHtmlEscaped())
            .arg(t.slot);
    text += tr("<br>size %1 (%2 B)").arg(humanBytes(t.size)).arg(t.size);
    text += tr("<br>offset %1 (0x%2)").arg(humanBytes(t.offset)).arg(t.offset, 0, 16);
    text += tr("<br>live [%1, %2): %3")
                .arg(t.life.begin)
                .arg(t.life.end)
                .arg(ctx_->timeSpanText(t.life.end - t.life.begin));
    const auto& order = plan_->execution_order;
    if (t.life.begin < order.size() && t.life.end >= 1 && t.life.end - 1 < order.size())
        text += tr("<br>from %1 to %2")
                    .arg(QString::fromStdString(order[t.life.begin]).toHtmlEscaped(),
                         QString::fromStdString(order[t.life.end - 1]).toHtmlEscaped());
    return text;
}

void TimelineView::ensureGeometry() {
    syncAxes();
    QRect plot = plotRect();
    const FetchWindow& w = cache_.window;
    double sx = xAxis_.scale(), sy = yAxis_.scale();
    double ex = 1e-9 * xAxis_.span(), ey = 1e-9 * yAxis_.span();
    bool reusable = cache_.valid && cache_.plot == plot.size() &&
                    cache_.mode == ctx_->colorMode() && w.sx == sx && w.sy == sy &&
                    xAxis_.visibleLo() >= w.x0 - ex && xAxis_.visibleHi() <= w.x1 + ex &&
                    yAxis_.visibleLo() >= w.y0 - ey && yAxis_.visibleHi() <= w.y1 + ey;
    if (reusable) return;
    FetchWindow nw;
    overFetch(xAxis_.visibleLo(), xAxis_.visibleHi(), xAxis_.domainLo(), xAxis_.domainHi(), nw.x0,
              nw.x1);
    overFetch(yAxis_.visibleLo(), yAxis_.visibleHi(), yAxis_.domainLo(), yAxis_.domainHi(), nw.y0,
              nw.y1);
    nw.sx = sx;
    nw.sy = sy;
    nw.yInverted = valuesInverted();
    cache_.window = nw;
    cache_.plot = plot.size();
    cache_.mode = ctx_->colorMode();
    cache_.batches.reset(kColourKeys);
    cache_.labels.clear();
    buildGeometry(nw, cache_.batches, cache_.labels);
    cache_.valid = true;
    ++builds_;
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette_.background());
    QRect plot = plotRect();
    if (!plan_) {
        p.setPen(palette_.text());
        p.drawText(rect(), Qt::AlignCenter, tr("No plan"));
        return;
    }
    syncAxes();
    ensureGeometry();
    p.save();
    p.setClipRect(plot);
    paintBackdrop(p, plot);
    paintItems(p, plot);
    paintLabels(p, plot);
    paintOverlay(p, plot);
    paintMarks(p, plot);
    p.restore();
    p.save();
    QRect gutter(0, plot.top(), plot.left(), plot.height());
    p.setClipRect(gutter);
    paintGutter(p, gutter);
    p.restore();
    paintTimeAxis(p, plot);
    paintHeader(p);
    p.setPen(palette_.grid());
    p.setBrush(Qt::NoBrush);
    p.drawRect(plot.adjusted(-1, -1, 0, 0));
}

void TimelineView::paintItems(QPainter& p, const QRect& plot) {
    // Vertical time grid first so the items sit on top of it.
    double step = std::max(1.0, niceTickStep(xAxis_.span(), plot.width(), 90));
    p.setPen(palette_.grid());
    for (double t = std::ceil(xAxis_.visibleLo() / step) * step; t <= xAxis_.visibleHi();
         t += step) {
        int x = int(std::lround(xOfTime(t)));
        p.drawLine(x, plot.top(), x, plot.bottom());
    }
    const FetchWindow& w = cache_.window;
    double ty = yAxis_.xOf(w.yInverted ? w.y1 : w.y0);
    p.save();
    p.translate(QPoint(int(std::lround(plot.left() + xAxis_.xOf(w.x0))),
                       int(std::lround(plot.top() + ty))));
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::NoPen);
    for (size_t k = 0; k < cache_.batches.byColour.size(); ++k) {
        const auto& rects = cache_.batches.byColour[k];
        if (rects.empty()) continue;
        p.setBrush(colourOf(uint8_t(k)));
        p.drawRects(rects.data(), int(rects.size()));
    }
    p.restore();
}

void TimelineView::paintLabels(QPainter& p, const QRect& plot) {
    if (cache_.labels.empty()) return;
    const FetchWindow& w = cache_.window;
    QPoint origin(int(std::lround(plot.left() + xAxis_.xOf(w.x0))),
                  int(std::lround(plot.top() + yAxis_.xOf(w.yInverted ? w.y1 : w.y0))));
    QFontMetrics fm(font());
    int minWidth = 6 * fm.averageCharWidth() + 6;
    for (const BarLabel& l : cache_.labels) {
        QRect r = l.rect.translated(origin).intersected(plot);
        if (r.width() < minWidth || r.height() < fm.height()) continue;
        p.setPen(textOn(colourOf(l.colour)));
        drawCachedText(p, r.adjusted(3, 0, -3, 0), TextKind::BarLabel, uint32_t(l.tensor), false,
                       Qt::ElideRight, [&] { return tensorLabel(l.tensor); });
    }
}

void TimelineView::drawCachedText(QPainter& p, const QRectF& box, TextKind kind, uint32_t index,
                                  bool alignRight, Qt::TextElideMode elide,
                                  const std::function<QString()>& text) const {
    int width = std::max(0, int(box.width()));
    quint64 key = (quint64(kind) << 56) | (quint64(index) << 20) | quint64(width & 0xFFFFF);
    auto it = textCache_.find(key);
    if (it == textCache_.end()) {
        if (textCache_.size() > 20000) textCache_.clear(); // bounded: labels churn while zooming
        QString full = text();
        QString shown = QFontMetrics(font()).elidedText(full, elide, width);
        // Stumps ("t3…") say nothing: show at least six characters or the whole text.
        if (shown != full && shown.size() - 1 < 6) shown.clear();
        QStaticText st(shown);
        st.setTextFormat(Qt::PlainText);
        st.prepare(QTransform(), font());
        it = textCache_.insert(key, st);
    }
    QSizeF size = it->size();
    double x = alignRight ? box.right() - size.width() : box.left();
    p.drawStaticText(QPointF(x, box.center().y() - size.height() / 2), *it);
}

void TimelineView::paintMarks(QPainter& p, const QRect& plot) {
    auto outline = [&](int planned, const QColor& c, int width) {
        if (planned < 0) return;
        QRectF r = rectOf(planned);
        if (r.isNull()) return;
        // Thin items get a visible minimum box around them.
        if (r.width() < 5) r.adjust(-(5 - r.width()) / 2, 0, (5 - r.width()) / 2, 0);
        if (r.height() < 5) r.adjust(0, -(5 - r.height()) / 2, 0, (5 - r.height()) / 2);
        QRectF clipped = r.intersected(QRectF(plot).adjusted(-4, -4, 4, 4));
        if (clipped.isEmpty()) return;
        p.setPen(QPen(c, width));
        p.setBrush(Qt::NoBrush);
        p.drawRect(clipped.toAlignedRect());
    };
    outline(hovered_ != ctx_->selectedTensor() ? hovered_ : -1, palette_.text(), 1);
    outline(ctx_->selectedTensor(), palette_.selection(), 2);
    double x = cursorX();
    if (x >= plot.left() && x <= plot.right() + 1) {
        int xi = int(std::lround(x));
        // A halo keeps the line visible over bars of a similar colour.
        p.setPen(QPen(palette_.background(), 4));
        p.drawLine(xi, plot.top(), xi, plot.bottom());
        p.setPen(QPen(palette_.cursor(), 2));
        p.drawLine(xi, plot.top(), xi, plot.bottom());
    }
}

void TimelineView::paintTimeAxis(QPainter& p, const QRect& plot) {
    QRect strip(plot.left(), plot.bottom() + 1, plot.width(), kAxisHeight - 1);
    p.fillRect(QRect(0, strip.top(), width(), strip.height() + 1), palette_.background());
    double step = std::max(1.0, niceTickStep(xAxis_.span(), plot.width(), 90));
    QFontMetrics fm(font());
    // The current event's time sits on the axis under the cursor; ticks give way to it.
    double cx = cursorX();
    QRect cursorBox;
    QString cursorLabel = QString::number(ctx_->currentTime());
    if (cx >= plot.left() && cx <= plot.right() + 1) {
        int w = fm.horizontalAdvance(cursorLabel) + 6;
        int lx = std::clamp(int(cx) - w / 2, plot.left(), plot.right() - w);
        cursorBox = QRect(lx, strip.top() + 2, w, strip.height() - 2);
    }
    p.setPen(palette_.text());
    for (double t = std::ceil(xAxis_.visibleLo() / step) * step; t <= xAxis_.visibleHi();
         t += step) {
        int x = int(std::lround(xOfTime(t)));
        p.drawLine(x, strip.top(), x, strip.top() + 4);
        QString label = tickLabel(t, step);
        int w = fm.horizontalAdvance(label);
        QRect box(std::clamp(x - w / 2, plot.left(), plot.right() - w), strip.top() + 4, w + 2,
                  strip.height() - 4);
        if (!cursorBox.isNull() && box.adjusted(-4, 0, 4, 0).intersects(cursorBox)) continue;
        p.drawText(box, Qt::AlignLeft, label);
    }
    p.drawText(QRect(0, strip.top() + 4, plot.left() - 6, strip.height() - 4), Qt::AlignRight,
               ctx_->timeUnit());
    if (!cursorBox.isNull()) {
        p.fillRect(cursorBox, palette_.cursor());
        p.setPen(Qt::white);
        p.drawText(cursorBox, Qt::AlignCenter, cursorLabel);
    }
}

namespace {

constexpr int kStripRow = 22; // height of one row of the top strip (stripRowHeight)

} // namespace

QString TimelineView::slotNote() {
    return tr("colour: slot (%1 colours, cycling)").arg(report::kSlotColors);
}

int TimelineView::legendWidth(const QFontMetrics& fm) const {
    if (ctx_->colorMode() == ColorMode::Slot) return fm.horizontalAdvance(slotNote());
    int w = 0;
    for (int r = 0; r <= int(Role::Workspace); ++r)
        if (legendRoles() & (1u << unsigned(r))) w += fm.horizontalAdvance(roleLabel(Role(r))) + 22;
    return w;
}

QString TimelineView::roleLabel(Role r) {
    auto name = role_name(r);
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}

namespace {

const QString kPartSeparator = QStringLiteral(" · ");

} // namespace

QStringList TimelineView::flowHeader(const QFontMetrics& fm, const QString& header, int first,
                                     int rest, int slack, int maxLines) {
    QStringList lines;
    QString line;
    int available = first;
    for (const QString& part : header.split(kPartSeparator)) {
        const QString joined = line.isEmpty() ? part : line + kPartSeparator + part;
        const bool fits = fm.horizontalAdvance(joined) + slack <= available;
        if (fits || int(lines.size()) + 1 >= maxLines ||
            (line.isEmpty() && available == rest)) { // too long for any row: elided there
            line = joined;
            continue;
        }
        lines << line; // empty when the first part did not fit beside the indent
        line = part;
        available = rest;
    }
    lines << line;
    return lines;
}

bool TimelineView::legendOwnRow() const {
    const QFontMetrics fm(font());
    return 12 + headerIndent() + fm.horizontalAdvance(headerText()) + 20 + legendWidth(fm) >
           width();
}

int TimelineView::legendRows(const QFontMetrics& fm, int available) const {
    if (ctx_->colorMode() == ColorMode::Slot) return 1;
    int rows = 1, x = available;
    for (int r = int(Role::Workspace); r >= 0; --r) {
        if (!(legendRoles() & (1u << unsigned(r)))) continue;
        // As paintHeader lays them out: swatch and label, then a gap of 8.
        const int w = fm.horizontalAdvance(roleLabel(Role(r))) + 14;
        if (x - w < 0 && x != available) {
            ++rows;
            x = available;
        }
        x -= w + 8;
    }
    return rows;
}

int TimelineView::stripRowHeight() const {
    return kStripRow;
}

int TimelineView::headerLines() const {
    topStripHeight(); // measures when the key changed
    return strip_.headerLines;
}

int TimelineView::topStripHeight() const {
    const StripHeight key{width(), ctx_->colorMode(), legendRoles(), plan_.get(), 0, 1};
    if (key.width != strip_.width || key.mode != strip_.mode || key.roles != strip_.roles ||
        key.plan != strip_.plan) {
        strip_ = key;
        if (legendOwnRow()) {
            const QFontMetrics fm(font());
            const int rest = width() - 12;
            strip_.headerLines = int(flowHeader(fm, headerText(), rest - headerIndent(), rest,
                                                fm.horizontalAdvance(QStringLiteral("0000")))
                                         .size());
            strip_.height = stripRowHeight() * (strip_.headerLines + legendRows(fm, rest));
        } else {
            strip_.height = stripRowHeight();
        }
    }
    return strip_.height;
}

void TimelineView::paintHeader(QPainter& p) {
    const QRect strip(0, 0, width(), topStripHeight());
    p.fillRect(strip, palette_.background());
    const QFontMetrics fm(font());
    const int row = stripRowHeight();
    // One row: the header on the left, the legend on the right. Else the header flows into rows
    // of its own (as many as it was measured to need) and the legend below it, wrapped into as
    // many rows as it needs, so that it explains every colour drawn.
    const bool ownRows = strip.height() > row;
    const QString header = headerText();
    const int rest = width() - 12;
    const QStringList lines =
        ownRows ? flowHeader(fm, header, rest - headerIndent(), rest, 0, headerLines())
                : QStringList{header};
    QRect legendRow = ownRows ? QRect(0, row * int(lines.size()), width(), row) : strip;
    const int headerLeft = 6 + headerIndent();
    const int legendLeft = ownRows ? 6 : headerLeft + fm.horizontalAdvance(header) + 20;
    // Legend from the right: swatch + name for each role present (or the slot note).
    int x = legendRow.right() - 6;
    p.setPen(palette_.text());
    if (ctx_->colorMode() == ColorMode::Slot) {
        const QString note = slotNote();
        x -= fm.horizontalAdvance(note);
        p.drawText(QRect(x, legendRow.top(), fm.horizontalAdvance(note) + 2, legendRow.height()),
                   Qt::AlignVCenter, note);
    } else {
        for (int r = int(Role::Workspace); r >= 0; --r) {
            if (!(legendRoles() & (1u << unsigned(r)))) continue;
            const QString label = roleLabel(Role(r));
            int w = fm.horizontalAdvance(label) + 14;
            if (x - w < legendLeft) {
                if (!ownRows || x == legendRow.right() - 6) break; // no room left at all
                legendRow.translate(0, row);                       // the next row
                x = legendRow.right() - 6;
            }
            x -= w;
            p.fillRect(QRect(x, legendRow.center().y() - 4, 9, 9), palette_.role(Role(r)));
            p.setPen(palette_.text());
            p.drawText(QRect(x + 12, legendRow.top(), w, legendRow.height()), Qt::AlignVCenter,
                       label);
            x -= 8;
        }
    }
    p.setPen(palette_.text());
    for (int i = 0; i < int(lines.size()); ++i) {
        const int left = i == 0 ? headerLeft : 6;
        const int right = ownRows ? width() - 6 : x - 8;
        const QRect area(left, i * row, std::max(0, right - left), row);
        p.drawText(area, Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(lines[i], Qt::ElideRight, area.width()));
    }
}

void TimelineView::paintBandTints(QPainter& p, const QRect& plot,
                                  const std::vector<ArenaBand>& bands) const {
    QColor tint = palette_.grid();
    tint.setAlpha(palette_.dark() ? 90 : 110);
    for (size_t i = 0; i < bands.size(); ++i) {
        double y0 = yOfValue(bands[i].first), y1 = yOfValue(bands[i].first + bands[i].count);
        if (i % 2 == 1) p.fillRect(QRectF(plot.left(), y0, plot.width(), y1 - y0), tint);
        if (i > 0) {
            p.setPen(palette_.grid());
            p.drawLine(QPointF(plot.left(), y0), QPointF(plot.right(), y0));
        }
    }
}

int TimelineView::paintBandNames(QPainter& p, const QRect& gutter,
                                 const std::vector<ArenaBand>& bands) const {
    QRect strip(gutter.left(), gutter.top(), bandStripWidth(), gutter.height());
    QFontMetrics fm(font());
    for (size_t i = 0; i < bands.size(); ++i) {
        double y0 = std::max(yOfValue(bands[i].first), double(strip.top()));
        double y1 = std::min(yOfValue(bands[i].first + bands[i].count), double(strip.bottom() + 1));
        if (y1 <= y0) continue;
        QColor fill = palette_.grid();
        if (i % 2 == 1) fill = fill.darker(palette_.dark() ? 70 : 112);
        p.fillRect(QRectF(strip.left(), y0, strip.width(), y1 - y0), fill);
        const ArenaPlan& arena = plan_->arenas[bands[i].arena];
        QString name = QString::fromStdString(arena.config.name);
        // The whole name or none: a cut name ("param…") says less than the band's row label
        // beside it, which names the arena too.
        if (fm.horizontalAdvance(name) > int(y1 - y0) - 6) continue;
        p.save();
        p.translate(strip.left() + (strip.width() + fm.ascent() - fm.descent()) / 2.0, y1 - 3);
        p.rotate(-90);
        p.setPen(palette_.text());
        p.drawText(QPointF(0, 0), name);
        p.restore();
    }
    return strip.width();
}

void TimelineView::paintRowLabels(QPainter& p, const QRect& area, uint32_t rows,
                                  const std::function<QString(uint32_t)>& label) const {
    QFontMetrics fm(font());
    if (yAxis_.scale() < fm.height() - 1) return;
    double lo = std::max(0.0, std::floor(yAxis_.visibleLo()));
    double hi = std::min(double(rows), std::ceil(yAxis_.visibleHi()));
    p.setPen(palette_.text());
    for (auto r = uint32_t(lo); r < uint32_t(hi); ++r) {
        double y0 = yOfValue(r), y1 = yOfValue(r + 1);
        QRectF box(area.left() + 4, std::min(y0, y1), area.width() - 8, std::fabs(y1 - y0));
        drawCachedText(p, box, TextKind::RowLabel, r, true, Qt::ElideMiddle,
                       [&] { return label(r); });
    }
}

void TimelineView::resetRowLanes(LaneMerger& m, const FetchWindow& w, int r0, int r1) {
    m.reset(LaneMerger::Axis::Horizontal, w.sy >= 1.5 ? std::max(0, r1 - r0) : w.height() + 2);
}

int TimelineView::rowLane(LaneMerger& m, const FetchWindow& w, int r, int r0) {
    if (w.sy < 1.5) return int(std::floor(w.py(r + 0.5)));
    int lane = r - r0;
    int gap = w.sy >= 5 ? 1 : 0;
    m.setBand(lane, int(std::lround(w.py(r))), int(std::lround(w.py(r + 1))) - gap);
    return lane;
}

void TimelineView::paintBandedGutter(QPainter& p, const QRect& gutter,
                                     const std::vector<ArenaBand>& bands, uint32_t rows,
                                     const std::function<QString(uint32_t)>& rowLabel,
                                     const std::function<QString(const ArenaBand&)>& bandSummary) {
    int strip = paintBandNames(p, gutter, bands);
    QRect area = gutter.adjusted(strip, 0, 0, 0);
    QFontMetrics fm(font());
    if (valueAxis().scale() >= fm.height() - 1) {
        paintRowLabels(p, area, rows, rowLabel);
        return;
    }
    // Rows too thin to name: a sticky summary at the top of each visible band, on two lines,
    // or on one (the summary dropped if need be) where the band is one line high.
    p.setPen(viewPalette().text());
    for (const ArenaBand& b : bands) {
        double y0 = std::max(yOfValue(b.first), double(gutter.top()));
        double y1 = std::min(yOfValue(b.first + b.count), double(gutter.bottom()));
        if (y1 - y0 < fm.height() + 2) continue;
        QRectF box(area.left() + 4, y0 + 1, area.width() - 8, y1 - y0 - 2);
        const QString name = QString::fromStdString(plan()->arenas[b.arena].config.name);
        QString text = name + '\n' + bandSummary(b);
        if (y1 - y0 < 2 * fm.height() + 4) {
            text = name + QStringLiteral(" · ") + bandSummary(b);
            if (fm.horizontalAdvance(text) > box.width()) text = name;
            if (fm.horizontalAdvance(text) > box.width()) continue; // whole or not at all
        }
        p.drawText(box, Qt::AlignTop | Qt::AlignLeft, text);
    }
}

void TimelineView::addRowBar(LaneMerger& m, const FetchWindow& w, int lane, int r, double a0,
                             double a1, int tensor, uint8_t colour, bool labelled,
                             std::vector<BarLabel>& labels) {
    constexpr double kLabelMinPx = 40;
    m.add(lane, a0, a1, colour);
    if (!labelled || a1 - a0 < kLabelMinPx) return;
    int x0 = int(std::lround(std::max(a0, -2.0)));
    int x1 = int(std::lround(std::min(a1, double(w.width()) + 2)));
    int y0 = int(std::lround(w.py(r))), y1 = int(std::lround(w.py(r + 1)));
    labels.push_back({QRect(x0, y0, x1 - x0, y1 - y0), tensor, colour});
}

void TimelineView::resizeEvent(QResizeEvent* e) {
    syncAxes();
    QWidget::resizeEvent(e);
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    QPoint d = e->angleDelta();
    QPointF pos = e->position();
    bool otherAxis = e->modifiers() & (Qt::ControlModifier | Qt::ShiftModifier);
    int delta = d.y() != 0 ? d.y() : d.x();
    if (delta == 0) return e->ignore();
    double factor = std::pow(1.0015, delta); // one notch (120) zooms by about 20 %
    if (otherAxis)
        zoomValues(factor, pos.y());
    else if (d.y() != 0)
        zoomTime(factor, pos.x());
    else
        panBy(-d.x() / 2.0, 0); // horizontal touchpad scroll pans
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
    pressed_ = true;
    dragging_ = false;
    pressPos_ = lastPos_ = e->position().toPoint();
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    QPoint pos = e->position().toPoint();
    if (pressed_ && (e->buttons() & Qt::LeftButton)) {
        if (!dragging_ && (pos - pressPos_).manhattanLength() > kDragThreshold) {
            dragging_ = true;
            setCursor(Qt::ClosedHandCursor);
        }
        if (dragging_) {
            QPoint d = pos - lastPos_;
            lastPos_ = pos;
            panBy(-d.x(), -d.y());
        }
        return;
    }
    int h = plan_ && plotRect().contains(pos) ? tensorAt(pos) : -1;
    if (h != hovered_) {
        hovered_ = h;
        update();
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(e);
    if (pressed_ && !dragging_) clickAt(e->position().toPoint());
    if (dragging_) unsetCursor();
    pressed_ = dragging_ = false;
}

void TimelineView::clickAt(QPoint pos) {
    if (!plan_ || !plotRect().contains(pos)) return;
    ctx_->selectTensor(tensorAt(pos));
    ctx_->setCurrentEvent(ctx_->eventAxis().eventAt(xAxis_.stepAt(pos.x() - plotRect().left())));
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    Qt::KeyboardModifiers mods = e->modifiers() & ~Qt::KeypadModifier;
    QRect plot = plotRect();
    QPoint local = mapFromGlobal(QCursor::pos());
    QPoint anchor = plot.contains(local) ? local : plot.center();
    bool shift = mods & Qt::ShiftModifier;
    if (e->key() == Qt::Key_0 && mods == Qt::ControlModifier) return resetZoom();
    // Left/Right/Home/End belong to the step control; chorded keys to the main window.
    if (mods & ~Qt::ShiftModifier) return QWidget::keyPressEvent(e);
    switch (e->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        return shift && e->key() == Qt::Key_W ? zoomValues(kKeyZoom, anchor.y())
                                              : zoomTime(kKeyZoom, anchor.x());
    case Qt::Key_S:
    case Qt::Key_Minus:
        return shift && e->key() == Qt::Key_S ? zoomValues(1 / kKeyZoom, anchor.y())
                                              : zoomTime(1 / kKeyZoom, anchor.x());
    case Qt::Key_A:
        return panBy(-0.1 * plot.width(), 0);
    case Qt::Key_D:
        return panBy(0.1 * plot.width(), 0);
    case Qt::Key_PageUp:
        return panBy(0, -0.8 * plot.height());
    case Qt::Key_PageDown:
        return panBy(0, 0.8 * plot.height());
    default:
        return QWidget::keyPressEvent(e);
    }
}

void TimelineView::leaveEvent(QEvent* e) {
    if (hovered_ != -1) {
        hovered_ = -1;
        update();
    }
    QWidget::leaveEvent(e);
}

void TimelineView::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange ||
        e->type() == QEvent::StyleChange || e->type() == QEvent::FontChange) {
        palette_ = ViewPalette::fromApplication();
        textCache_.clear();
        strip_ = {}; // text sizes changed: measure again
        update();
    }
    QWidget::changeEvent(e);
}

bool TimelineView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        int i = plan_ && plotRect().contains(he->pos()) ? tensorAt(he->pos()) : -1;
        QToolTip::showText(he->globalPos(), i >= 0 ? tooltipText(i) : navigationHelp(), this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace tmmu::views
