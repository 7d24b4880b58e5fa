#pragma once
// The main window's status bar: a summary of the plan on screen (model, mode, strategy, height,
// % over the lower bound, plan hash prefix) as permanent fields, plus a progress bar with a
// Cancel button that appears only when planning takes longer than kProgressDelayMs.
#include <QStatusBar>

QT_BEGIN_NAMESPACE
class QLabel;
class QProgressBar;
class QTimer;
class QToolButton;
QT_END_NAMESPACE

namespace tmmu {
struct Plan;
struct LoadedModel;
} // namespace tmmu

namespace tmmu::studio {

// The summary's texts, separate from the widgets so tests can read them.
struct PlanSummary {
    QString model, modelTip, mode, strategy, strategyTip, height, overBound, hash, hashTip;
    static PlanSummary of(const Plan& plan, const LoadedModel* model);
};

class StudioStatusBar : public QStatusBar {
    Q_OBJECT
  public:
    static constexpr int kProgressDelayMs = 300;

    explicit StudioStatusBar(QWidget* parent = nullptr);

    void showPlan(const Plan& plan, const LoadedModel* model);
    void planningStarted();
    void planningProgress(double fraction, const QString& stage);
    void planningStopped();
    bool progressVisible() const;
    QLabel* field(const char* name) const; // "model", "mode", "strategy", "height", "over", "hash"

  signals:
    void cancelRequested();

  private:
    QLabel* addField(const char* name, int minChars);

    QProgressBar* bar_;
    QToolButton* cancel_;
    QTimer* delay_;
    bool running_ = false;
};

} // namespace tmmu::studio
