#pragma once
// The Lazy traces panel: the lazy program traces recorded in the sessions database (by the
// studio when it runs a program with recording on, or by `tmmu lazy run --record`), newest
// first. Replay asks the main window to run the selected one again from its stored program and
// show it; the verdict against the recording comes back here (showReplay). The panel lists and
// reports, and computes nothing itself.
#include <QWidget>

#include <cstdint>
#include <functional>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
QT_END_NAMESPACE

namespace tmmu::studio {

class JobRunner;
struct ReplayedLazyTrace;

class LazyTracesPanel : public QWidget {
    Q_OBJECT
  public:
    // sessionsPath answers where traces are recorded and listed ("" when no database is open).
    LazyTracesPanel(JobRunner* jobs, std::function<QString()> sessionsPath,
                    QWidget* parent = nullptr);

    void refresh(); // lists the recorded traces again (off the UI thread), newest selected
    void showReplay(const ReplayedLazyTrace& replayed);

    QComboBox* tracesBox() const { return traces_; }
    QPushButton* replayButton() const { return replay_; }
    QPushButton* refreshButton() const { return refresh_; }
    QString summaryText() const;

  signals:
    void replayRequested(qint64 id);

  private:
    void showSelected(); // the selected trace's recorded details

    JobRunner* jobs_;
    std::function<QString()> sessionsPath_;
    QLabel* where_;
    QComboBox* traces_;
    QPushButton* replay_;
    QPushButton* refresh_;
    QPlainTextEdit* summary_;
};

} // namespace tmmu::studio
