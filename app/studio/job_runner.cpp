#include "job_runner.h"

#include "core/failure.h"

#include <QEventLoop>
#include <QPointer>
#include <QScopedValueRollback>
#include <QThread>
#include <QTimer>

#include <cmath>

namespace tmmu::studio {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

const QString kCancelled = qs(failure_code_name(FailureCode::Cancelled));

} // namespace

struct JobRunner::Job {
    uint64_t id = 0;
    QString title;
    QString key;
    bool hasContext = false;
    QPointer<QObject> context;
    ErasedWork work;
    std::function<void()> done;
    Failed failed;
    std::atomic<bool> cancel{false};
    bool superseded = false; // UI thread only: cancel was set by a newer job with this key
};

namespace {

JobFailure cancelledFailure(const QString& title, bool superseded) {
    if (superseded)
        return {kCancelled, title, QStringLiteral("replaced by a newer job of its kind"), true};
    return {kCancelled, title, QStringLiteral("cancelled by the caller")};
}

// Runs fn and turns whatever it throws into a JobFailure: an engine Failure keeps its code,
// anything else reads "ERROR".
template <class Fn>
std::optional<JobFailure> guarded(Fn&& fn) {
    try {
        fn();
    } catch (const Failure& f) {
        return JobFailure::of(f);
    } catch (const std::exception& e) {
        return JobFailure{QStringLiteral("ERROR"), QString(), QString::fromUtf8(e.what())};
    } catch (...) {
        return JobFailure{QStringLiteral("ERROR"), QString(),
                          QStringLiteral("an exception that is not a std::exception")};
    }
    return std::nullopt;
}

} // namespace

JobFailure JobFailure::of(const Failure& f) {
    return {qs(failure_code_name(f.code())), QString::fromStdString(f.where()),
            QString::fromStdString(f.message())};
}

bool JobFailure::cancelled() const {
    return code == kCancelled;
}

QString JobFailure::text() const {
    return where.isEmpty() ? QStringLiteral("%1: %2").arg(code, message)
                           : QStringLiteral("%1 at %2: %3").arg(code, where, message);
}

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
    worker_.reset(QThread::create([this] { workerLoop(); }));
    worker_->setObjectName(QStringLiteral("tmmu-jobs"));
    worker_->start(QThread::LowPriority);
}

JobRunner::~JobRunner() {
    // Nothing is delivered from here on: the queue is dropped without continuations, and the
    // running job's finish event, if the worker posts one, dies with this object.
    queue_.clear();
    if (running_) running_->cancel.store(true);
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
        handoff_.reset();
    }
    wake_.notify_one();
    worker_->wait();
}

void JobRunner::enqueue(JobSpec spec, ErasedWork work, std::function<void()> done, Failed failed) {
    if (!spec.key.isEmpty()) supersede(spec.key);
    auto job = std::make_shared<Job>();
    job->id = ++nextId_;
    job->title = std::move(spec.title);
    job->key = std::move(spec.key);
    job->hasContext = spec.context != nullptr;
    job->context = spec.context;
    job->work = std::move(work);
    job->done = std::move(done);
    job->failed = std::move(failed);
    queue_.push_back(std::move(job));
    setBusy(true);
    if (!running_ && !delivering_) startNext();
}

void JobRunner::cancel() {
    if (running_) running_->cancel.store(true);
}

void JobRunner::cancel(const QString& key) {
    for (const auto& job : queue_)
        if (job->key == key) job->cancel.store(true);
    if (running_ && running_->key == key) running_->cancel.store(true);
}

// A job the user cancelled already stays cancelled by the user.
void JobRunner::supersede(const QString& key) {
    const auto mark = [](Job& job) {
        if (!job.cancel.exchange(true)) job.superseded = true;
    };
    for (const auto& job : queue_)
        if (job->key == key) mark(*job);
    if (running_ && running_->key == key) mark(*running_);
}

void JobRunner::cancelAll() {
    for (const auto& job : queue_)
        job->cancel.store(true);
    cancel();
}

bool JobRunner::waitForIdle(int timeoutMs) {
    if (!busy()) return true;
    QEventLoop loop;
    connect(this, &JobRunner::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    if (timeoutMs >= 0) QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return !busy();
}

void JobRunner::setBusy(bool busy) {
    if (busy == busy_) return;
    busy_ = busy;
    emit busyChanged(busy);
}

// Hands the first job that was not cancelled to the worker; cancelled queued jobs report
// CANCELLED in their turn without running, so continuations keep submission order.
void JobRunner::startNext() {
    while (!running_ && !queue_.empty()) {
        std::shared_ptr<Job> job = std::move(queue_.front());
        queue_.pop_front();
        if (job->cancel.load()) {
            deliver(*job, cancelledFailure(job->title, job->superseded));
            continue;
        }
        running_ = job;
        emit jobStarted(job->title);
        {
            std::lock_guard lock(mutex_);
            handoff_ = std::move(job);
        }
        wake_.notify_one();
    }
    if (!busy()) setBusy(false);
}

void JobRunner::deliver(Job& job, const std::optional<JobFailure>& failure) {
    if (job.hasContext && !job.context) return;
    QScopedValueRollback guard(delivering_, true);
    // A continuation runs inside the event loop, where an exception would end the program: a
    // result that cannot be shown fails the job instead, and what no handler takes is logged.
    std::optional<JobFailure> thrown;
    std::optional<JobFailure> shown = failure;
    if (!shown) shown = thrown = guarded([&] { job.done(); });
    if (shown && job.failed) thrown = guarded([&] { job.failed(*shown); });
    if (thrown) qWarning("tmmu-studio: %s: %s", qPrintable(job.title), qPrintable(thrown->text()));
}

void JobRunner::finish(const std::shared_ptr<Job>& job, std::optional<JobFailure> failure) {
    running_.reset();
    if (job->cancel.load()) {
        if (!failure)
            failure = cancelledFailure(job->title, job->superseded);
        else // the engine's own CANCELLED, naming its stage, or what failed before it looked
            failure->superseded = job->superseded;
    }
    deliver(*job, failure);
    emit jobFinished(job->title, !failure);
    startNext();
}

void JobRunner::workerLoop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return quit_ || handoff_; });
        if (quit_) return;
        std::shared_ptr<Job> job = std::move(handoff_);
        lock.unlock();
        std::optional<JobFailure> failure = execute(*job);
        // Queued to this object: if it is being destroyed, the event is discarded with it. The
        // job moves into the event, so its continuations are destroyed on the UI thread.
        QMetaObject::invokeMethod(
            this, [this, job = std::move(job), failure] { finish(job, failure); },
            Qt::QueuedConnection);
        lock.lock();
    }
}

std::optional<JobFailure> JobRunner::execute(Job& job) {
    Progress progress;
    progress.cancel_flag = &job.cancel;
    // Only whole-percent changes and new stages cross threads: the engine may report often.
    progress.on_progress = [this, id = job.id, last = -1.0,
                            stage = std::string()](double f, std::string_view s) mutable {
        double pct = std::floor(f * 100.0);
        if (pct == last && s == stage) return;
        last = pct;
        stage = s;
        QMetaObject::invokeMethod(
            this,
            [this, id, f, text = qs(s)] {
                if (running_ && running_->id == id) emit jobProgress(f, text);
            },
            Qt::QueuedConnection);
    };
    return guarded([&] { job.work(progress); });
}

} // namespace tmmu::studio
