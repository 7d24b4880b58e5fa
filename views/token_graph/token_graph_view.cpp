#include "token_graph/token_graph_view.h"

#include "context/plan_context.h"
#include "style/palette.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace tmmu::views {
namespace {

using lazy::EventKind;

// "mul, add, relu" out of a fused kernel's detail ("3 ops in one kernel (mul, add, relu), vec4").
QString fused_ops(const lazy::TraceEvent& e) {
    const auto open = e.detail.find('('), close = e.detail.find(')');
    if (open == std::string::npos || close == std::string::npos) return {};
    return QString::fromStdString(e.detail.substr(open + 1, close - open - 1));
}

bool is_fused(const lazy::TraceEvent& e) {
    return e.kind == EventKind::Op && e.op == "fused";
}

constexpr double kMinZoom = 0.02, kMaxZoom = 4.0;

} // namespace

QColor eventColour(const ViewPalette& pal, lazy::EventKind kind) {
    switch (kind) {
    case EventKind::Op:
        return pal.slot(0);
    case EventKind::LocLoad:
        return pal.slot(1);
    case EventKind::LocStore:
        return pal.slot(2);
    case EventKind::BaseCommit:
        return pal.slot(3);
    case EventKind::PublishSave:
    case EventKind::SavedCheck:
        return pal.slot(4);
    case EventKind::BackwardJob:
        return pal.slot(5);
    case EventKind::LocInvalidate:
        return pal.slot(6);
    case EventKind::CompiledCall:
        return pal.slot(7);
    default:
        return pal.dark() ? QColor(0x9a, 0x9a, 0x9a) : QColor(0x70, 0x70, 0x70); // joins
    }
}

TokenGraphView::TokenGraphView(PlanContext* ctx, QWidget* parent) : QWidget(parent), ctx_(ctx) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setMinimumSize(200, 120);
    connect(ctx_, &PlanContext::currentEventChanged, this, [this] {
        revealCurrent();
        update();
    });
}

void TokenGraphView::setTrace(std::shared_ptr<const lazy::Trace> trace) {
    trace_ = std::move(trace);
    expanded_.clear();
    layout_ = trace_ ? layout_token_graph(*trace_) : TokenGraphLayout{};
    matches_.clear();
    isMatch_.assign(layout_.nodes.size(), false);
    zoom_ = 1.0;
    scroll_ = {0, 0};
    revealCurrent();
    update();
    emit traceChanged();
}

void TokenGraphView::setSearch(const QString& text) {
    search_ = text;
    matches_.clear();
    isMatch_.assign(layout_.nodes.size(), false);
    if (trace_ && !text.isEmpty()) {
        const std::string needle = text.toLower().toStdString();
        const auto has = [&](std::string hay) {
            std::transform(hay.begin(), hay.end(), hay.begin(),
                           [](unsigned char c) { return char(std::tolower(c)); });
            return hay.find(needle) != std::string::npos;
        };
        for (size_t i = 0; i < layout_.nodes.size(); ++i) {
            const lazy::TraceEvent& e = trace_->events[layout_.nodes[i].event];
            if (has(e.op) || has(e.key) || has(e.site) || has(e.detail)) {
                isMatch_[i] = true;
                matches_.push_back(e.index);
            }
        }
        std::sort(matches_.begin(), matches_.end());
    }
    update();
}

bool TokenGraphView::findNext(bool backwards) {
    if (matches_.empty()) return false;
    const uint64_t at = ctx_->currentEvent();
    uint64_t target;
    if (!backwards) {
        auto it = std::upper_bound(matches_.begin(), matches_.end(), at);
        target = it == matches_.end() ? matches_.front() : *it; // wraps around
    } else {
        auto it = std::lower_bound(matches_.begin(), matches_.end(), at);
        target = it == matches_.begin() ? matches_.back() : *std::prev(it);
    }
    ctx_->setCurrentEvent(target);
    return true;
}

bool TokenGraphView::toggleCall(uint64_t event) {
    if (!trace_ || event >= trace_->events.size()) return false;
    const int64_t call = trace_->events[event].kind == EventKind::CompiledCall
                             ? int64_t(event)
                             : layout_.call_of[event];
    if (call < 0) return false;
    if (!expanded_.erase(uint64_t(call))) expanded_.insert(uint64_t(call));
    layout_ = layout_token_graph(*trace_, expanded_);
    setSearch(search_); // the nodes were renumbered
    revealCurrent();
    emit traceChanged();
    return true;
}

QString TokenGraphView::nodeLabel(const lazy::TraceEvent& e) const {
    if (e.kind == EventKind::CompiledCall) {
        const std::string name = e.detail.substr(0, e.detail.find(':'));
        const auto it = layout_.call_subevents.find(e.index);
        const uint32_t body = it == layout_.call_subevents.end() ? 0 : it->second;
        return (isExpanded(e.index) ? tr("▾ %1") : tr("▸ %1 (%2 events)"))
            .arg(QString::fromStdString(name))
            .arg(body);
    }
    if (is_fused(e)) return tr("fused: %1").arg(fused_ops(e));
    QString s = QString::fromStdString(e.op);
    if (e.loc >= 0) s += QStringLiteral(" L%1 v%2").arg(e.loc).arg(e.loc_version);
    if (e.base >= 0) s += QStringLiteral(" B%1 c%2").arg(e.base).arg(e.base_commit);
    return s;
}

QPointF TokenGraphView::nodeCenter(size_t node) const {
    const GraphNode& n = layout_.nodes[node];
    return {(n.layer + 0.5) * layerWidth() - scroll_.x() + 8,
            (n.row + 0.5) * rowHeight() - scroll_.y() + 22};
}

QRectF TokenGraphView::nodeRect(size_t node) const {
    const QPointF c = nodeCenter(node);
    const double w = layerWidth() * 0.8, h = rowHeight() * 0.7;
    return {c.x() - w / 2, c.y() - h / 2, w, h};
}

int64_t TokenGraphView::nodeAt(QPointF pos) const {
    const double x = pos.x() + scroll_.x() - 8;
    if (x < 0 || layout_.nodes.empty()) return -1;
    const auto layer = uint32_t(x / layerWidth());
    const auto [first, last] = layout_.nodes_in_layers(layer, layer + 1);
    for (size_t i = first; i < last; ++i)
        if (nodeRect(i).contains(pos)) return int64_t(i);
    return -1;
}

void TokenGraphView::setZoom(double zoom, QPointF anchor) {
    zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
    const QPointF content = anchor + scroll_;
    scroll_ = content * (zoom / zoom_) - anchor;
    scroll_.setX(std::max(0.0, scroll_.x()));
    scroll_.setY(std::max(0.0, scroll_.y()));
    zoom_ = zoom;
    update();
}

void TokenGraphView::fitAll() {
    if (layout_.layers == 0) return;
    const double zx = (width() - 16) / (180.0 * layout_.layers);
    const double zy = (height() - 30) / (30.0 * std::max<uint32_t>(layout_.rows, 1));
    zoom_ = std::clamp(std::min(zx, zy), kMinZoom, kMaxZoom);
    scroll_ = {0, 0};
    update();
}

void TokenGraphView::revealCurrent() {
    if (!trace_ || layout_.node_at_event.empty()) return;
    const uint64_t ev = std::min<uint64_t>(ctx_->currentEvent(), layout_.node_at_event.size() - 1);
    const int64_t node = layout_.node_at_event[ev];
    if (node < 0) return;
    const QRectF r = nodeRect(size_t(node));
    if (rect().contains(r.toRect())) return;
    scroll_ += r.center() - QPointF(width() / 2.0, height() / 2.0);
    scroll_.setX(std::max(0.0, scroll_.x()));
    scroll_.setY(std::max(0.0, scroll_.y()));
}

void TokenGraphView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const ViewPalette pal = ViewPalette::fromApplication();
    p.fillRect(rect(), pal.background());
    if (!trace_ || layout_.nodes.empty()) {
        p.setPen(pal.text());
        p.drawText(rect(), Qt::AlignCenter,
                   trace_ ? tr("This trace has no forced plan yet")
                          : tr("Open a lazy program (File > Open) to see its token graph"));
        return;
    }
    const double lw = layerWidth();
    const auto lo = uint32_t(std::max(0.0, std::floor((scroll_.x() - 8) / lw)));
    const auto hi = uint32_t(std::max(0.0, std::ceil((scroll_.x() + width()) / lw)) + 1);
    const auto [first, last] = layout_.nodes_in_layers(lo, hi);
    const uint64_t ev = std::min<uint64_t>(ctx_->currentEvent(), layout_.node_at_event.size() - 1);
    const int64_t current = layout_.node_at_event[ev];
    p.setRenderHint(QPainter::Antialiasing, zoom_ > 0.3);
    drawBands(p, lo, hi);
    drawEdges(p, first, last, current);
    drawNodes(p, first, last, current);
}

void TokenGraphView::drawBands(QPainter& p, uint32_t lo, uint32_t hi) const {
    const ViewPalette pal = ViewPalette::fromApplication();
    p.setFont(font());
    for (const PlanBand& b : layout_.plans) {
        if (b.end_layer < lo || b.first_layer > hi) continue;
        const double x0 = b.first_layer * layerWidth() - scroll_.x() + 8;
        const double x1 = b.end_layer * layerWidth() - scroll_.x() + 8;
        QColor shade = pal.grid();
        shade.setAlpha(b.plan % 2 ? 60 : 25);
        p.fillRect(QRectF(x0, 0, x1 - x0, height()), shade);
        p.setPen(pal.text());
        const std::string& why = trace_->plans[b.plan].reason;
        const double w = std::max(x1 - x0 - 8, 40.0);
        // Elided, not cut mid-character where a plan's band is narrower than its reason.
        p.drawText(
            QRectF(x0 + 4, 2, w, 18), Qt::AlignLeft | Qt::AlignVCenter,
            fontMetrics().elidedText(tr("plan %1: %2").arg(b.plan).arg(QString::fromStdString(why)),
                                     Qt::ElideRight, int(w)));
    }
}

void TokenGraphView::drawEdges(QPainter& p, size_t first, size_t last, int64_t current) const {
    const ViewPalette pal = ViewPalette::fromApplication();
    QPen data(pal.grid().darker(pal.dark() ? 60 : 160), 1.0);
    QPen token(pal.slot(1), 1.0, Qt::DashLine);
    const auto draw = [&](const GraphEdge& e, bool strong) {
        QPen pen = e.token ? token : data;
        if (strong) {
            pen.setWidthF(2.5);
            pen.setColor(pal.cursor());
        }
        p.setPen(pen);
        const QPointF a = nodeCenter(e.from) + QPointF(layerWidth() * 0.4, 0);
        const QPointF b = nodeCenter(e.to) - QPointF(layerWidth() * 0.4, 0);
        QPainterPath path(a);
        const double bend = std::min(std::abs(b.x() - a.x()) / 2, layerWidth());
        path.cubicTo(a + QPointF(bend, 0), b - QPointF(bend, 0), b);
        p.drawPath(path);
    };
    // Each visible node's incoming edges, and outgoing ones whose target is off to the right.
    for (size_t i = first; i < last; ++i) {
        for (uint32_t k : layout_.in_edges[i])
            draw(layout_.edges[k], false);
        for (uint32_t k : layout_.out_edges[i])
            if (layout_.edges[k].to >= last) draw(layout_.edges[k], false);
    }
    if (current < 0) return;
    for (uint32_t k : layout_.in_edges[size_t(current)])
        draw(layout_.edges[k], true);
    for (uint32_t k : layout_.out_edges[size_t(current)])
        draw(layout_.edges[k], true);
}

void TokenGraphView::drawNodes(QPainter& p, size_t first, size_t last, int64_t current) const {
    const ViewPalette pal = ViewPalette::fromApplication();
    const bool labels = rowHeight() * 0.7 >= 12;
    for (size_t i = first; i < last; ++i) {
        const QRectF r = nodeRect(i);
        if (r.bottom() < 0 || r.top() > height()) continue;
        const lazy::TraceEvent& e = trace_->events[layout_.nodes[i].event];
        QColor fill = eventColour(pal, e.kind);
        fill.setAlpha(labels ? 70 : 200);
        const bool isCurrent = int64_t(i) == current;
        p.setPen(isCurrent     ? QPen(pal.cursor(), 3)
                 : isMatch_[i] ? QPen(pal.selection(), 2)
                               : QPen(eventColour(pal, e.kind), 1));
        if (labels) {
            // The tint is translucent: an opaque base keeps the edges passing behind a node from
            // striking through its label.
            p.setBrush(pal.background());
            p.drawRoundedRect(r, 4, 4);
            p.setBrush(fill);
            p.drawRoundedRect(r, 4, 4);
        } else {
            p.setBrush(fill);
            p.drawRect(r);
        }
        if (!labels) continue;
        if (is_fused(e) || e.kind == EventKind::CompiledCall) { // a group: framed twice
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r.adjusted(3, 3, -3, -3), 3, 3);
        }
        p.setPen(pal.text());
        p.drawText(r.adjusted(5, 0, -5, 0), Qt::AlignCenter,
                   fontMetrics().elidedText(nodeLabel(e), Qt::ElideRight, int(r.width() - 10)));
    }
}

void TokenGraphView::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (event->modifiers() & Qt::ShiftModifier) {
        scroll_.setX(std::max(0.0, scroll_.x() - steps * layerWidth()));
        update();
    } else {
        setZoom(zoom_ * std::pow(1.25, steps), event->position());
    }
    event->accept();
}

void TokenGraphView::mousePressEvent(QMouseEvent* event) {
    setFocus();
    if (event->button() != Qt::LeftButton) return;
    const int64_t node = nodeAt(event->position());
    if (node >= 0) {
        ctx_->setCurrentEvent(layout_.nodes[size_t(node)].event);
        return;
    }
    dragging_ = true;
    dragFrom_ = event->position().toPoint();
}

void TokenGraphView::mouseDoubleClickEvent(QMouseEvent* event) {
    const int64_t node = nodeAt(event->position());
    if (event->button() == Qt::LeftButton && node >= 0)
        toggleCall(layout_.nodes[size_t(node)].event);
}

void TokenGraphView::mouseMoveEvent(QMouseEvent* event) {
    if (!dragging_) return;
    const QPoint at = event->position().toPoint();
    scroll_ -= QPointF(at - dragFrom_);
    scroll_.setX(std::max(0.0, scroll_.x()));
    scroll_.setY(std::max(0.0, scroll_.y()));
    dragFrom_ = at;
    update();
}

void TokenGraphView::mouseReleaseEvent(QMouseEvent*) {
    dragging_ = false;
}

void TokenGraphView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Left:
        ctx_->stepBy(-1);
        break;
    case Qt::Key_Right:
        ctx_->stepBy(1);
        break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        setZoom(zoom_ * 1.25, rect().center());
        break;
    case Qt::Key_Minus:
        setZoom(zoom_ / 1.25, rect().center());
        break;
    case Qt::Key_Home:
        fitAll();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        toggleCall(ctx_->currentEvent());
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

} // namespace tmmu::views
