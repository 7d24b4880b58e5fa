#pragma once
// The main window's status bar: a summary of the plan on screen (model, mode and the rank of a
// distributed run, strategy, height,
// % over the lower bound, plan hash prefix) as permanent fields, plus a progress bar with a
// Cancel button for the worker's running job. They appear only when the worker stays busy longer
// than kProgressDelayMs, so quick jobs do not flicker, and stay up across back-to-back jobs. A
// message too long for the room the fields leave hides fields until it fits.
#include <QStatusBar>

#include <vector>

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
    QString model, modelTip, mode, modeTip, strategy, strategyTip, height, heightTip, overBound,
        overBoundTip, hash, hashTip;
    static PlanSummary of(const Plan& plan, const LoadedModel* model);
};

class StudioStatusBar : public QStatusBar {
    Q_OBJECT
  public:
    static constexpr int kProgressDelayMs = 300;

    explicit StudioStatusBar(QWidget* parent = nullptr);

    void showPlan(const Plan& plan, const LoadedModel* model);
    void clearPlan(); // no plan on screen: the summary fields are empty
    void jobStarted(const QString& title);
    void jobProgress(double fraction, const QString& stage);
    void jobsStopped(); // the worker is idle

    bool progressVisible() const;
    QLabel* field(const char* name) const; // "model", "mode", "strategy", "height", "over", "hash"

  signals:
    void cancelRequested(); // cancel the running job

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    // A summary field and the rule before it (none before the first).
    struct Field {
        QLabel* label;
        QWidget* rule;
    };
    QLabel* addField(const char* name, int minChars);
    // Hides summary fields while the message needs their room; shows them all again after.
    void fitMessage();

    std::vector<Field> fields_;
    QProgressBar* bar_;
    QToolButton* cancel_;
    QTimer* delay_;
    bool running_ = false;
};

} // namespace tmmu::studio
