#pragma once
// Arena layout: time (x) by byte offset (y, 0 at the bottom) rectangles for the buffers of
// one arena, with the lower-bound and peak lines, the cursor and the free gaps at the current
// event's step (holes between live buffers below the peak). An arena selector sits in the
// header; selecting a tensor of another arena anywhere switches to that arena. A buffer an
// in-place chain or an alias group shares is split along time into its tensors (tenure.h).
#include "timeline/tenure.h"
#include "timeline/timeline_view.h"

class QComboBox;

namespace tmmu::views {

class ArenaLayoutView : public TimelineView {
    Q_OBJECT
  public:
    explicit ArenaLayoutView(PlanContext* ctx, QWidget* parent = nullptr);

    struct Gap {
        uint64_t offset;
        uint64_t size;
    };

    int arena() const { return arena_; }
    void setArena(int arena);
    QComboBox* arenaSelector() const { return combo_; }

    int tensorAt(QPoint p) const override;
    QRectF rectOf(int planned) const override; // empty for tensors of other arenas
    // Holes in [0, peak) of the shown arena not covered by a buffer live at step, by offset.
    std::vector<Gap> freeGapsAt(uint64_t step) const;

  signals:
    void arenaChanged(int arena);

  protected:
    void rebuildData() override;
    void clearData() override;
    double valueDomain() const override;
    double minValueSpan() const override { return 64; }
    bool valuesInverted() const override { return true; }
    void buildGeometry(const FetchWindow& w, RectBatches& out,
                       std::vector<BarLabel>& labels) override;
    void paintBackdrop(QPainter& p, const QRect& plot) override;
    void paintOverlay(QPainter& p, const QRect& plot) override;
    void paintGutter(QPainter& p, const QRect& gutter) override;
    int gutterWidth() const override { return 78; }
    int stripRowHeight() const override;
    int headerIndent() const override;
    uint32_t legendRoles() const override { return arenaRoles_; }
    QString headerText() const override;
    QString tooltipText(int planned) const override;
    void selectionChangedFromContext(int planned) override;
    void resizeEvent(QResizeEvent* e) override;

  private:
    struct Block {
        uint64_t offset;
        uint64_t size;
        uint32_t begin;
        uint32_t end;
        int tensor; // planned tensor owning the buffer (its root), -1 when none
        Role role;
        uint32_t slot;
    };
    // A stretch of a block's time drawn as one of its tensors (the whole block when one).
    struct Piece {
        double begin;
        double end;
        int tensor;
        Role role;
    };
    // The block's tensors that take it over, end to end over [block begin, block end).
    std::vector<Piece> piecesOf(size_t buffer) const;
    static int defaultArena(const Plan& plan);
    void fillSelector();
    void placeSelector();
    QRectF blockRect(uint64_t offset, uint64_t size, uint32_t begin, uint32_t end) const;
    // A marker line at `bytes` (dashed: drawn over another), its label's box at labelTop.
    void paintLine(QPainter& p, const QRect& plot, uint64_t bytes, const QColor& colour,
                   const QString& label, bool dashed, int labelTop) const;
    void paintGaps(QPainter& p, const QRect& plot) const;
    uint64_t peak() const;
    uint64_t lowerBound() const;

    QComboBox* combo_;
    std::weak_ptr<const Plan> selectorPlan_; // plan the selector was filled from
    int arena_ = -1;
    uint32_t arenaRoles_ = 0;
    std::vector<Block> blocks_;               // per buffer of the shown arena
    std::vector<std::vector<int>> tensorsOf_; // per buffer: planned tensors mapped into it
    std::vector<std::vector<Piece>> pieces_;  // per buffer: what is drawn of it
    std::vector<Tenure> tenures_;             // per planned tensor
    IntervalIndex index_;                     // ids are buffer indices
    LaneMerger rows_;
    LaneMerger columns_;
};

} // namespace tmmu::views
