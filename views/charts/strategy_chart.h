#pragma once
// Strategy comparison: for one model, a row per strategy with its name and distance from the
// lower bound, a bar for its total height with the lower bound marked across it, and its
// planning time (a thin bar under it, and in figures). Rows of text beside horizontal bars read
// whole at any dock width, where upright labels under vertical bars were cut to a few letters;
// a dock too short for every row scrolls. The chart only draws what it is given; the studio's
// planning worker computes the results.
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <string>
#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QScrollArea;
QT_END_NAMESPACE

namespace tmmu::views {

struct StrategyResult {
    std::string strategy;
    uint64_t height = 0;      // sum of arena peaks
    uint64_t lower_bound = 0; // sum of arena lower bounds
    double ms = 0.0;          // strategy wall time over all arenas
    std::string error;        // non-empty: the strategy failed (e.g. "ARENA_TOO_SMALL at ...")
    // Sum of the arenas' aligned bounds (plan_summary.h): above lower_bound where padding no
    // plan avoids lifts them; 0 or lower_bound where it does not.
    uint64_t aligned_bound = 0;
};

class StrategyBars;
class StrategyLegend;

class StrategyChart : public QWidget {
    Q_OBJECT
  public:
    explicit StrategyChart(QWidget* parent = nullptr);

    // current names the strategy of the plan on screen; its row is marked ("[auto]", bold).
    void setResults(std::vector<StrategyResult> results, const std::string& current);
    // Shows a one-line message instead of the chart ("Comparing strategies...").
    void showMessage(const QString& message);
    const std::vector<StrategyResult>& results() const { return results_; }
    // Each row's label: "[auto] +0.00%", "slots +77.5%", "best-fit failed".
    QStringList labels() const;
    // Row i's tooltip: its height, lower bound, aligned bound where padding lifts it, and time.
    QString tooltip(size_t i) const;
    // The drawing (in its own coordinates): for tests and screenshots.
    QWidget* bars() const;
    // Row i's height bar and planning-time bar, in bars()' coordinates (empty for a failure).
    QRectF heightBar(size_t i) const;
    QRectF timeBar(size_t i) const;

  private:
    friend class StrategyBars;
    friend class StrategyLegend;

    std::vector<StrategyResult> results_;
    std::string current_;
    StrategyBars* bars_;
    QScrollArea* scroll_;
    QLabel* message_;
};

} // namespace tmmu::views
