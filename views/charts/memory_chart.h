#pragma once
// Memory over time (heaptrack's "consumed" chart): per arena, live bytes and the high-water
// mark from Plan::series, with the lower bound and the plan height as horizontal lines and the
// current step as a vertical line. "All arenas" stacks the arenas' live bytes. Clicking the plot
// moves the current step. Series are down-sampled to at most kMaxBuckets buckets keeping each
// bucket's maximum, so peaks survive and 100k-point series stay fast.
#include <QPointF>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QComboBox;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace tmmu::views {

class PlanContext;
class ViewPalette;

// A step function: values[i] holds over [times[i], times[i+1]) and the last one up to end.
// Returns polyline points (two per bucket or sample) of at most 2 * buckets points, each bucket
// carrying the maximum of every sample overlapping it. times must be ascending and < end.
std::vector<QPointF> downsampleMax(const std::vector<uint64_t>& times,
                                   const std::vector<uint64_t>& values, uint64_t end,
                                   size_t buckets);

// Axis unit for byte values up to maxBytes: divisor and label ("GiB", "MiB", "KiB", "B").
struct ByteScale {
    double divisor = 1.0;
    QString unit = QStringLiteral("B");
};
ByteScale byteScaleFor(uint64_t maxBytes);

// Removes every series and axis, before a chart is filled again.
void clearChart(QChart* chart);

// The compact look of the studio's docked charts: no animation, thin margins, a small legend
// at the bottom.
void applyCompactChartLayout(QChart* chart);

// Colours a chart's background, axes, grid and legend from the view palette.
void applyChartPalette(QChart* chart, const ViewPalette& palette);

class MemoryChart : public QWidget {
    Q_OBJECT
  public:
    static constexpr size_t kMaxBuckets = 1000;
    static constexpr int kAllArenas = -1;

    explicit MemoryChart(PlanContext* ctx, QWidget* parent = nullptr);

    void setArena(int arena); // kAllArenas or an index into plan()->arenas
    int arena() const { return arena_; }
    QChart* chart() const { return chart_; }
    // x of the current-step line in chart values (tests).
    double cursorX() const;

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void onPlanChanged();
    void rebuild();
    void buildStacked(double divisor);
    void buildArena(size_t arena, double divisor);
    void addHorizontal(const QString& name, double y, const QColor& color, Qt::PenStyle style);
    void updateCursor();
    void stepFromChart(const QPointF& chartPos);

    PlanContext* ctx_;
    QComboBox* arenaBox_;
    QChart* chart_;
    QValueAxis* axisX_ = nullptr;
    QValueAxis* axisY_ = nullptr;
    QLineSeries* cursor_ = nullptr;
    double yMax_ = 1.0;
    int arena_ = kAllArenas;

    friend class MemoryChartView;
};

} // namespace tmmu::views
