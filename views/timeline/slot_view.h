#pragma once
// Slot colouring: one row per logical slot (the seed's linear-scan slots, grouped by arena),
// with the tensors that share the slot drawn as bars along time in that row; a buffer's in-place
// chain split into its tensors at the hand-over steps (tenure.h).
#include "timeline/tenure.h"
#include "timeline/timeline_view.h"

namespace tmmu::views {

class SlotView : public TimelineView {
    Q_OBJECT
  public:
    explicit SlotView(PlanContext* ctx, QWidget* parent = nullptr);

    int tensorAt(QPoint p) const override;
    QRectF rectOf(int planned) const override;
    int rowCount() const { return int(rows_.size()); }
    // Row of a planned tensor (-1 when unknown); arena and slot a row shows.
    int rowOf(int planned) const;
    uint32_t arenaOfRow(int row) const { return rows_[size_t(row)].arena; }
    uint32_t slotOfRow(int row) const { return rows_[size_t(row)].slot; }

  protected:
    void rebuildData() override;
    double valueDomain() const override { return double(rows_.size()); }
    double minValueSpan() const override { return 2; }
    void buildGeometry(const FetchWindow& w, RectBatches& out,
                       std::vector<BarLabel>& labels) override;
    void paintBackdrop(QPainter& p, const QRect& plot) override;
    void paintGutter(QPainter& p, const QRect& gutter) override;
    QString headerText() const override;

  private:
    struct Row {
        uint32_t arena;
        uint32_t slot;
        SortedIntervals items; // ids are planned tensor indices
    };
    QRectF barRect(int row, double begin, double end) const;

    std::vector<Row> rows_;
    std::vector<Tenure> tenures_; // per planned tensor: where its bar is drawn
    std::vector<int> rowOf_;
    std::vector<ArenaBand> bands_;
    LaneMerger merger_;
};

} // namespace tmmu::views
