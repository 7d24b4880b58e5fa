#pragma once
// Memory over time (heaptrack's "consumed" chart): per arena, live bytes and the high-water
// mark from Plan::series, with the lower bound and the plan height as horizontal lines and the
// current event as a vertical line, and in training, a vertical line where the backward pass
// starts, named with the activations it holds. "All arenas" stacks the arenas' live bytes. Clicking
// the plot moves the current event. The x axis shows the context's time window, so the chart lines
// up with the timelines. Series are down-sampled to at most kMaxBuckets buckets keeping each
// bucket's maximum, so peaks survive and 100k-point series stay fast; the buckets cover the
// window plus one window either side and are re-sampled only when the window leaves them or
// narrows to less than half, so pans and small zooms only move the axis.
#include <QPointF>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QComboBox;
class QLineSeries;
class QCategoryAxis;
class QValueAxis;
QT_END_NAMESPACE

namespace tmmu::views {

class PlanContext;
class ViewPalette;
struct TimeWindow;

// The engine's downsample_max (plan/memory_series.h) as chart points: at most 2 * buckets
// points, each bucket carrying the maximum of every sample overlapping it.
std::vector<QPointF> downsampleMax(const std::vector<uint64_t>& times,
                                   const std::vector<uint64_t>& values, uint64_t end,
                                   size_t buckets);
// The same over the time range [from, to) only.
std::vector<QPointF> downsampleMax(const std::vector<uint64_t>& times,
                                   const std::vector<uint64_t>& values, uint64_t end,
                                   size_t buckets, double from, double to);

// Axis unit for byte values up to maxBytes: divisor and label ("GiB", "MiB", "KiB", "B").
struct ByteScale {
    double divisor = 1.0;
    QString unit = QStringLiteral("B");
};
ByteScale byteScaleFor(uint64_t maxBytes);

// A time axis over [lo, hi] with the timelines' ticks and labels (time_axis.h: at most maxTicks
// on round steps; tickLabel: "5,000", "150k"), so every chart reads times as they do.
void labelTimeAxis(QCategoryAxis& axis, double lo, double hi, int maxTicks);
// The distance between a value axis' ticks (after applyNiceNumbers: a round number).
double tickStep(const QValueAxis& axis);

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
    // x of the cursor line in chart values (tests).
    double cursorX() const;
    // Time range the series are currently sampled over (tests).
    double sampledLo() const { return sampled_.lo; }
    double sampledHi() const { return sampled_.hi; }

  protected:
    void changeEvent(QEvent* event) override;

  private:
    // A series drawn from a step function over time, re-sampled when the window moves away.
    struct Sampled {
        QLineSeries* line;
        std::vector<uint64_t> values; // at Plan::series.times
    };
    struct SampledRange {
        double lo = 0;
        double hi = 0;
        double forSpan = 0; // span of the window it was sampled for
    };

    void onPlanChanged();
    void rebuild();
    void buildStacked(double divisor);
    void buildArena(size_t arena, double divisor);
    void addHorizontal(const QString& name, double y, const QColor& color, Qt::PenStyle style);
    void addBackwardStart(const QColor& color);
    QLineSeries* sampledSeries(std::vector<uint64_t> values, QObject* parent);
    void showTimeWindow();
    void labelTimes(const TimeWindow& w);
    void resample(double lo, double span);
    void updateCursor();
    void eventFromChart(const QPointF& chartPos);

    PlanContext* ctx_;
    QComboBox* arenaBox_;
    QChart* chart_;
    QCategoryAxis* axisX_ = nullptr;
    QValueAxis* axisY_ = nullptr;
    QLineSeries* cursor_ = nullptr;
    double yMax_ = 1.0;
    double divisor_ = 1.0; // bytes per y unit
    int arena_ = kAllArenas;
    std::vector<Sampled> series_;
    SampledRange sampled_;

    friend class MemoryChartView;
};

} // namespace tmmu::views
