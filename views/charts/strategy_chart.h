#pragma once
// Strategy comparison: for one model, each strategy's total height against the lower bound
// (bars) and its planning time (line on a second axis). The chart only draws what it is given;
// the studio's planning worker computes the results.
#include <QWidget>

#include <cstdint>
#include <string>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
QT_END_NAMESPACE

namespace tmmu::views {

struct StrategyResult {
    std::string strategy;
    uint64_t height = 0;      // sum of arena peaks
    uint64_t lower_bound = 0; // sum of arena lower bounds
    double ms = 0.0;          // strategy wall time over all arenas
    std::string error;        // non-empty: the strategy failed (e.g. "ARENA_TOO_SMALL at ...")
};

class StrategyChart : public QWidget {
    Q_OBJECT
  public:
    explicit StrategyChart(QWidget* parent = nullptr);

    // current names the strategy of the plan on screen; its category is marked.
    void setResults(std::vector<StrategyResult> results, const std::string& current);
    // Shows a one-line message instead of the chart ("Comparing strategies...").
    void showMessage(const QString& message);
    const std::vector<StrategyResult>& results() const { return results_; }
    QChart* chart() const { return chart_; }

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void rebuild();

    std::vector<StrategyResult> results_;
    std::string current_;
    QChart* chart_;
    QChartView* view_;
    QLabel* message_;
};

} // namespace tmmu::views
