#pragma once
// The token graph of a lazy program's trace: each forced plan's events as a layered DAG (data
// edges solid, token edges dashed), zoomable and searchable, following the context's current
// event (the trace's events are its axis). Left/Right step through the events; a click makes
// an event current. Drawing stays fast on 10k+ events: only the visible layers' nodes (binary
// search on the layer-sorted nodes) and their edges are drawn, and labels drop out when nodes
// are a few pixels tall. A compiled call is one node until it is expanded (double-click it, or
// Enter on the current event) into its body's subevents; double-click one of those, or Enter,
// collapses it again. Fused kernels are framed twice and named by the ops they ran.
#include "token_graph/token_graph_layout.h"

#include <QColor>
#include <QWidget>

#include <memory>
#include <set>

namespace tmmu::views {

class PlanContext;
class ViewPalette;

// The colour of an event family in the graph and its legend (one place for both).
QColor eventColour(const ViewPalette& pal, lazy::EventKind kind);

class TokenGraphView : public QWidget {
    Q_OBJECT
  public:
    explicit TokenGraphView(PlanContext* ctx, QWidget* parent = nullptr);

    void setTrace(std::shared_ptr<const lazy::Trace> trace); // null clears
    const lazy::Trace* trace() const { return trace_.get(); }
    const TokenGraphLayout& layout() const { return layout_; }

    // Events whose op, key, site or words contain text (case-insensitive); empty clears.
    void setSearch(const QString& text);
    const std::vector<uint64_t>& matches() const { return matches_; }
    // Moves the current event to the next (or previous) match; false when there is none.
    bool findNext(bool backwards = false);

    // Zoom 1 is the readable size; fitAll() shows every layer.
    double zoom() const { return zoom_; }
    void setZoom(double zoom, QPointF anchor);
    void fitAll();
    // Scrolls so the current event's node is in view (no-op when it already is).
    void revealCurrent();
    // Expands or collapses the compiled call that `event` is, or is inside; false when it is in
    // none.
    bool toggleCall(uint64_t event);
    bool isExpanded(uint64_t call_event) const { return expanded_.count(call_event) > 0; }
    // The node at a widget position, or -1.
    int64_t nodeAt(QPointF pos) const;
    QRectF nodeRect(size_t node) const; // in widget coordinates
    QSize sizeHint() const override { return {900, 420}; }

  signals:
    void traceChanged();

  protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

  private:
    double layerWidth() const { return 180.0 * zoom_; }
    double rowHeight() const { return 30.0 * zoom_; }
    void drawBands(QPainter& p, uint32_t lo, uint32_t hi) const;
    void drawEdges(QPainter& p, size_t first, size_t last, int64_t current) const;
    void drawNodes(QPainter& p, size_t first, size_t last, int64_t current) const;
    QPointF nodeCenter(size_t node) const;
    QString nodeLabel(const lazy::TraceEvent& e) const;

    PlanContext* ctx_;
    std::shared_ptr<const lazy::Trace> trace_;
    TokenGraphLayout layout_;
    std::vector<uint64_t> matches_;
    std::vector<bool> isMatch_;   // per node
    std::set<uint64_t> expanded_; // compiled call events shown with their bodies
    QString search_;
    double zoom_ = 1.0;
    QPointF scroll_{0, 0}; // content offset of the widget's top-left, in pixels
    QPoint dragFrom_;
    bool dragging_ = false;
};

} // namespace tmmu::views
