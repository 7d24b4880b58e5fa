#pragma once
// Live ranges: one horizontal bar per planned tensor across its lifetime [begin, end), rows
// grouped by arena (a band per arena) and ordered by birth, then id. Coloured by role or by
// slot (PlanContext::colorMode).
#include "timeline/timeline_view.h"

namespace tmmu::views {

class LiveRangeView : public TimelineView {
    Q_OBJECT
  public:
    explicit LiveRangeView(PlanContext* ctx, QWidget* parent = nullptr);

    int tensorAt(QPoint p) const override;
    QRectF rectOf(int planned) const override;
    int rowCount() const { return int(rows_.size()); }
    // Row of a planned tensor (-1 when unknown), and the tensor drawn in a row.
    int rowOf(int planned) const;
    int tensorInRow(int row) const { return int(rows_[size_t(row)].tensor); }

  protected:
    void rebuildData() override;
    double valueDomain() const override { return double(rows_.size()); }
    void buildGeometry(const FetchWindow& w, RectBatches& out,
                       std::vector<BarLabel>& labels) override;
    void paintBackdrop(QPainter& p, const QRect& plot) override;
    void paintGutter(QPainter& p, const QRect& gutter) override;
    QString headerText() const override;

  private:
    QRectF rowRect(int row) const;

    struct Row {
        uint32_t begin, end; // the tensor's lifetime, copied for cache-friendly scans
        uint32_t tensor;     // planned tensor index
    };
    std::vector<Row> rows_;
    std::vector<int> rowOf_; // row per planned tensor
    std::vector<ArenaBand> bands_;
    LaneMerger merger_;
};

} // namespace tmmu::views
