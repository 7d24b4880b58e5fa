#pragma once
// Runs planning jobs off the UI thread, one at a time. Engine progress arrives as queued
// signals; Cancel sets the engine's cancel flag. Starting a job while one runs cancels the
// running one and starts the new one as soon as it stops. Every signal is emitted on the
// thread that owns the runner, in the order: started, progress*, planned | failed,
// (compared | compareFailed), finished.
#include "planning.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QThread;
QT_END_NAMESPACE

namespace tmmu::studio {

class PlanRunner : public QObject {
    Q_OBJECT
  public:
    explicit PlanRunner(QObject* parent = nullptr);
    ~PlanRunner() override; // cancels and waits for the worker

    void start(PlanJob job);
    // Runs the job on the calling thread and emits the same signals before returning
    // (screenshot mode, where nothing may be left pending).
    void runSync(const PlanJob& job);
    void cancel();
    bool busy() const { return thread_ != nullptr; }

  signals:
    void started();
    void progress(double fraction, const QString& stage);
    void planned(const tmmu::studio::PlanOutcome& outcome);
    void failed(const QString& code, const QString& where, const QString& message);
    void compared(const std::vector<tmmu::views::StrategyResult>& results);
    void compareFailed(const QString& message);
    void finished(bool ok);

  private:
    using Post = std::function<void(std::function<void()>)>;
    void launch(PlanJob job);
    void onThreadFinished();
    void execute(const PlanJob& job, const std::atomic<bool>* cancel, const Post& post);

    QThread* thread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::optional<PlanJob> pending_;
};

} // namespace tmmu::studio

Q_DECLARE_METATYPE(tmmu::studio::PlanOutcome)
Q_DECLARE_METATYPE(std::vector<tmmu::views::StrategyResult>)
