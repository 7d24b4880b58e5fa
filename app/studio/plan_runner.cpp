#include "plan_runner.h"

#include "core/failure.h"

#include <QThread>

#include <cmath>

namespace tmmu::studio {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

PlanRunner::PlanRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<PlanOutcome>();
    qRegisterMetaType<std::vector<views::StrategyResult>>();
}

PlanRunner::~PlanRunner() {
    pending_.reset();
    if (thread_) {
        cancel_->store(true);
        thread_->wait();
        delete thread_;
    }
}

void PlanRunner::start(PlanJob job) {
    if (thread_) {
        pending_ = std::move(job);
        cancel_->store(true);
        return;
    }
    launch(std::move(job));
}

void PlanRunner::cancel() {
    pending_.reset();
    if (cancel_) cancel_->store(true);
}

void PlanRunner::runSync(const PlanJob& job) {
    std::atomic<bool> never{false};
    emit started();
    execute(job, &never, [](const std::function<void()>& fn) { fn(); });
}

void PlanRunner::launch(PlanJob job) {
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> cancel = cancel_;
    // The destructor waits for the thread, so `this` outlives everything posted to it.
    Post post = [this](std::function<void()> fn) {
        QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
    };
    thread_ = QThread::create(
        [this, job = std::move(job), cancel, post] { execute(job, cancel.get(), post); });
    thread_->setObjectName(QStringLiteral("tmmu-planner"));
    connect(thread_, &QThread::finished, this, &PlanRunner::onThreadFinished);
    emit started();
    thread_->start(QThread::LowPriority);
}

void PlanRunner::onThreadFinished() {
    delete thread_;
    thread_ = nullptr;
    if (pending_) {
        PlanJob next = std::move(*pending_);
        pending_.reset();
        launch(std::move(next));
    }
}

void PlanRunner::execute(const PlanJob& job, const std::atomic<bool>* cancel, const Post& post) {
    Progress progress;
    progress.cancel_flag = cancel;
    // Only whole-percent changes and new stages cross threads: the engine may report often.
    progress.on_progress = [this, post, last = -1.0,
                            stage = std::string()](double f, std::string_view s) mutable {
        double pct = std::floor(f * 100.0);
        if (pct == last && s == stage) return;
        last = pct;
        stage = s;
        QString text = qs(s);
        post([this, f, text] { emit this->progress(f, text); });
    };
    PlanOutcome outcome;
    try {
        outcome = run_plan_job(job, progress);
    } catch (const Failure& f) {
        QString code = qs(failure_code_name(f.code()));
        QString where = QString::fromStdString(f.where());
        QString message = QString::fromStdString(f.message());
        post([this, code, where, message] {
            emit failed(code, where, message);
            emit finished(false);
        });
        return;
    } catch (const std::exception& e) {
        QString message = QString::fromUtf8(e.what());
        post([this, message] {
            emit failed(QStringLiteral("ERROR"), QString(), message);
            emit finished(false);
        });
        return;
    }
    post([this, outcome] { emit planned(outcome); });
    if (job.compare) {
        try {
            auto results = compare_strategies(*outcome.model, job.settings, progress);
            post([this, results] { emit compared(results); });
        } catch (const std::exception& e) {
            QString message = QString::fromUtf8(e.what());
            post([this, message] { emit compareFailed(message); });
        }
    }
    post([this] { emit finished(true); });
}

} // namespace tmmu::studio
