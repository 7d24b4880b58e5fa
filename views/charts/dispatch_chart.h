#pragma once
// Adapter dispatches of a model run (seed 002, A8) per opcode: one step's counts, or the
// cumulative counts through that step split into prefill and decode. The chart draws the run's
// recorded counters; it never runs anything.
#include "runtime/run_record.h"

#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QSlider;
class QStackedLayout;
QT_END_NAMESPACE

namespace tmmu::views {

class DispatchChart : public QWidget {
    Q_OBJECT
  public:
    enum class Mode { PerStep, Cumulative };

    explicit DispatchChart(QWidget* parent = nullptr);

    // Shows the run at its last step; a run recorded without counters shows a message instead.
    void setRun(std::shared_ptr<const runtime::RunResult> run);
    void showMessage(const QString& message);
    void setMode(Mode mode);
    void setStep(int step); // clamped to the run's steps
    Mode mode() const { return mode_; }
    int step() const { return step_; }
    QChart* chart() const { return chart_; }
    QString caption() const; // the line above the chart: which step, how many dispatches

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void rebuild();

    std::shared_ptr<const runtime::RunResult> run_;
    Mode mode_ = Mode::Cumulative;
    int step_ = 0;
    QChart* chart_;
    QChartView* view_;
    QComboBox* modeBox_;
    QSlider* slider_;
    QLabel* caption_;
    QLabel* message_;
    QStackedLayout* stack_;
};

} // namespace tmmu::views
