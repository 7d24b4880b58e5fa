#pragma once
// Pool memory over a lazy trace's events: bytes live, pending release and acquirable, stacked,
// with the context's current event as a line; a click moves the current event there. Columns
// are merged to one per pixel (the largest value in each), so 10k+ events draw at once.
#include "lazy/trace_state.h"

#include <QPointF>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace tmmu::views {

class PlanContext;

class EventMemoryChart : public QWidget {
    Q_OBJECT
  public:
    explicit EventMemoryChart(PlanContext* ctx, QWidget* parent = nullptr);
    void setTrace(const lazy::Trace* trace); // null clears; the caller keeps it alive
    const lazy::MemorySeries& series() const { return series_; }
    QSize sizeHint() const override { return {400, 140}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

  private:
    static QStringList legendNames();
    std::vector<QPointF> legendPositions() const; // the swatches' top left corners
    QRectF plotRect() const;
    PlanContext* ctx_;
    lazy::MemorySeries series_;
    uint64_t maxBytes_ = 0;
};

} // namespace tmmu::views
