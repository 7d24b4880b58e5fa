#pragma once
// The studio's one background worker, in the spirit of RenderDoc's single replay thread: every
// long job (loading and planning a model, comparing strategies, opening, replaying, comparing
// and exporting sessions) runs on one worker thread, one job at a time, in submission order.
// The UI thread never decodes, plans or replays; it only shows results.
//
// Invariants:
// - Work runs on the worker and touches no UI object: it captures values and immutable shared
//   data only, and polls the Progress it is given (engine calls do) so that cancelling, and the
//   destructor, return promptly. Continuations run on the runner's thread (the UI thread).
// - Every job ends in `done` with the work's result, or in `failed` with what it threw (an
//   engine Failure keeps its code, where and message; other exceptions read "ERROR"). A `done`
//   that throws is followed by `failed` with what it threw; what no handler takes is logged,
//   never thrown into the event loop. Nothing is delivered once the job's context object or the
//   runner is destroyed.
// - A job's continuation runs before the next job starts, so results arrive in submission order
//   and a continuation may submit follow-up jobs.
// - Cancel sets the job's flag, which the engine polls. A job cancelled before its continuation
//   runs reports CANCELLED even if its work finished: a cancelled result never reaches the
//   screen, and nothing it would have chained is started. Jobs with the same non-empty key
//   supersede each other: submitting one cancels the running one and the queued ones (which
//   then never start), and their failures say `superseded`, so that a handler can tell a job
//   the user cancelled from one a newer request replaced.
// - The destructor cancels the running job, drops the queue and joins the worker.
#include "core/progress.h"

#include <QObject>
#include <QString>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

QT_BEGIN_NAMESPACE
class QThread;
QT_END_NAMESPACE

namespace tmmu {
class Failure;
}

namespace tmmu::studio {

struct JobFailure {
    QString code; // failure_code_name(), or "ERROR" for an exception that is no Failure
    QString where;
    QString message;
    // Cancelled because a newer job with its key was submitted: whatever the job ended in (its
    // CANCELLED, or a failure it met before it looked), the newer job answers for the screen.
    bool superseded = false;

    static JobFailure of(const Failure& f);
    bool cancelled() const; // by the user or, when superseded, by a newer job
    QString text() const;   // "CODE at WHERE: MESSAGE", or "CODE: MESSAGE" when where is empty
};

struct JobSpec {
    QString title{};            // what the status bar shows while the job runs
    QString key{};              // jobs sharing a non-empty key supersede each other
    QObject* context = nullptr; // continuations are dropped once it is destroyed (null: none)
};

class JobRunner : public QObject {
    Q_OBJECT
  public:
    using Failed = std::function<void(const JobFailure&)>;

    explicit JobRunner(QObject* parent = nullptr);
    ~JobRunner() override;

    // Queues `work`, called on the worker as work(const tmmu::Progress&). Its result goes to
    // `done` (done() for void work), a failure to `failed`, both on this thread. Returns at once.
    // A new job kind is one call:
    //   jobs->submit({tr("Running on the GPU"), "gpu run", this},
    //                [plan](const Progress& p) { return run_plan(*plan, p); },
    //                [this](RunResult r) { showRun(r); },
    //                [this](const JobFailure& f) { report(f.text()); });
    template <class Work, class Done>
    void submit(JobSpec spec, Work work, Done done, Failed failed = {});

    void cancel();                   // the running job (the status bar's Cancel)
    void cancel(const QString& key); // every queued or running job with this key
    void cancelAll();
    // A job is queued, running, or its continuation is running.
    bool busy() const { return running_ || delivering_ || !queue_.empty(); }
    // Spins a local event loop until the runner is idle (jobs submitted by continuations
    // included); false after timeoutMs (-1: no limit). For screenshot mode and tests; never
    // call it from a continuation, which keeps the runner busy.
    bool waitForIdle(int timeoutMs = -1);
    QThread* workerThread() const { return worker_.get(); }

  signals:
    void jobStarted(const QString& title);
    // The running job's progress, at most once per whole percent unless the stage changes.
    void jobProgress(double fraction, const QString& stage);
    void jobFinished(const QString& title, bool ok); // after its continuation; started jobs only
    void busyChanged(bool busy);

  private:
    struct Job;
    using ErasedWork = std::function<void(const Progress&)>;

    void enqueue(JobSpec spec, ErasedWork work, std::function<void()> done, Failed failed);
    void supersede(const QString& key);
    void startNext();
    void setBusy(bool busy);
    void deliver(Job& job, const std::optional<JobFailure>& failure);
    void finish(const std::shared_ptr<Job>& job, std::optional<JobFailure> failure);
    void workerLoop();
    std::optional<JobFailure> execute(Job& job);

    // UI thread only.
    std::deque<std::shared_ptr<Job>> queue_;
    std::shared_ptr<Job> running_; // handed to the worker, its continuation not yet run
    bool delivering_ = false;      // a continuation runs: jobs it submits wait for it
    bool busy_ = false;            // last busyChanged value
    uint64_t nextId_ = 0;
    // Shared with the worker, under mutex_.
    std::mutex mutex_;
    std::condition_variable wake_;
    std::shared_ptr<Job> handoff_;
    bool quit_ = false;
    std::unique_ptr<QThread> worker_;
};

template <class Work, class Done>
void JobRunner::submit(JobSpec spec, Work work, Done done, Failed failed) {
    using Result = std::invoke_result_t<Work&, const Progress&>;
    if constexpr (std::is_void_v<Result>) {
        enqueue(std::move(spec), std::move(work), std::move(done), std::move(failed));
    } else {
        // Written on the worker, read here after the job's finish event, which orders the two.
        auto result = std::make_shared<std::optional<Result>>();
        enqueue(
            std::move(spec),
            [result, work = std::move(work)](const Progress& p) mutable {
                result->emplace(work(p));
            },
            [result, done = std::move(done)]() mutable { done(std::move(**result)); },
            std::move(failed));
    }
}

} // namespace tmmu::studio
