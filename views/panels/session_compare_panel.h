#pragma once
// Two plans side by side (two sessions, or a session and its replay): a headline ("identical" or
// what changed), metric deltas per arena, the tensors placed differently, and memory over time
// of both plans overlaid (live bytes and high-water; plan A solid, plan B dashed) for one arena
// or all arenas summed. It shows a sessions::PlanComparison; it never computes plans.
#include "session_diff.h"

#include <QString>
#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QChart;
class QComboBox;
class QLabel;
class QTableView;
class QTableWidget;
QT_END_NAMESPACE

namespace tmmu::views {

class TensorMoveModel;

// One side of a comparison: what to call it and the plan it shows (null: not available).
struct CompareSide {
    QString label; // "session 12 (baseline)"
    std::shared_ptr<const Plan> plan;
};

// Per-point sums over every arena of live bytes (or high-water when highWater is set); the
// series of arena `arena` alone when arena >= 0. Empty when the arena index is out of range.
std::vector<uint64_t> arenaSeries(const Plan& plan, int arena, bool highWater);

class SessionComparePanel : public QWidget {
    Q_OBJECT
  public:
    enum ArenaColumn {
        ArenaName,
        PeakBefore,
        PeakAfter,
        PeakDelta,
        BoundBefore,
        BoundAfter,
        BoundDelta,
        ArenaColumnCount
    };

    explicit SessionComparePanel(QWidget* parent = nullptr);
    ~SessionComparePanel() override;

    void setComparison(const sessions::PlanComparison& comparison, CompareSide before,
                       CompareSide after);
    void showMessage(const QString& text); // clears the comparison
    // "" = all arenas summed; else an arena name present in either plan.
    void setArena(const QString& name);
    QString arena() const;

    const sessions::PlanComparison& comparison() const { return comparison_; }
    QString headline() const;
    QTableWidget* arenaTable() const { return arenas_; }
    QTableView* movedTable() const { return moved_; }
    QChart* chart() const { return chart_; }

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void fillArenas();
    void rebuildChart();
    void addSeries(const Plan& plan, int arena, bool highWater, const QString& name,
                   const QColor& color, Qt::PenStyle style, double divisor, uint64_t end);

    sessions::PlanComparison comparison_;
    CompareSide before_, after_;
    QLabel* headline_;
    QTableWidget* arenas_;
    QTableView* moved_;
    TensorMoveModel* moveModel_;
    QComboBox* arenaBox_;
    QChart* chart_;
    QLabel* legend_; // the series' colours, wrapped to the dock's width
};

} // namespace tmmu::views
