#pragma once
// The Run panel: runs a transformer config on a backend off the UI thread (the studio's
// worker), with progress and Cancel; records the run in the sessions database when asked; lists
// recorded runs and replays one, reporting "identical" or the first step that differs. What a
// run gives is handed to the main window (runShown), which puts its registers, instructions and
// dispatch counters on screen. The panel computes nothing itself.
#include "run_jobs.h"

#include <QWidget>

#include <functional>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace tmmu::studio {

class JobRunner;
struct JobFailure;

// Jobs of the Run panel share this key: a new run or replay supersedes a running one.
inline const QString kModelRunKey = QStringLiteral("model run");

class RunPanel : public QWidget {
    Q_OBJECT
  public:
    // sessionsPath answers where runs are recorded and listed ("" when no database is open).
    RunPanel(JobRunner* jobs, std::function<QString()> sessionsPath, QWidget* parent = nullptr);

    // The config to run (a GPT-2, Llama, Mistral or Qwen2 config.json); the bundled GPT-2 small by
    // default.
    void setConfigPath(const QString& path);
    QString configPath() const { return configPath_; }
    RunJob job() const; // what Run would submit now

    void run();                 // Run
    void replay(int64_t runId); // Replay on a recorded run
    void refreshRecordedRuns(); // fills the recorded-runs list (off the UI thread)
    bool running() const { return running_; }

    QComboBox* backendBox() const { return backend_; }
    QSpinBox* batchBox() const { return batch_; }
    QSpinBox* promptBox() const { return prompt_; }
    QSpinBox* decodeBox() const { return decode_; }
    QCheckBox* countersBox() const { return counters_; }
    QCheckBox* recordBox() const { return record_; }
    QCheckBox* compareBox() const { return compare_; }
    QComboBox* precisionBox() const { return precision_; }
    QComboBox* recordedRunsBox() const { return recorded_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QString summaryText() const; // the result text under the controls

  signals:
    void runShown(const tmmu::studio::RunShown& shown);
    void runFailed(const QString& text);

  private:
    QWidget* buildSettings();
    void setRunning(bool on, const QString& what = {});
    void submit(const QString& title, std::function<RunShown(const Progress&)> work);
    void onShown(const RunShown& shown);
    void onFailed(const JobFailure& failure);

    JobRunner* jobs_;
    std::function<QString()> sessionsPath_;
    QString configPath_;
    QLabel* config_;
    QComboBox* backend_;
    QSpinBox *batch_, *prompt_, *decode_, *seed_;
    QCheckBox *counters_, *checkMemory_, *record_, *compare_;
    QComboBox* precision_; // weights on a GPU backend: f32 or f16
    QPushButton *run_, *cancel_, *replay_;
    QComboBox* recorded_;
    QProgressBar* progress_;
    QPlainTextEdit* summary_;
    bool running_ = false;
};

} // namespace tmmu::studio
