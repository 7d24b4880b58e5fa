// The studio's one background worker on its own: jobs run on one worker thread in submission
// order, continuations and throttled progress arrive on the UI thread, cancel and supersede by
// key, failures keep code / where / message, and destruction while a job runs cancels, joins
// and delivers nothing.
#include "core/failure.h"
#include "job_runner.h"
#include "studio_test_util.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

constexpr int kWaitMs = 10000;

// Work that runs until cancelled, then fails with CANCELLED as the engine does.
void untilCancelled(const Progress& p) {
    for (;;) {
        p.check_cancel("spinning");
        QThread::msleep(1);
    }
}

// What the continuations of one job saw.
struct Outcome {
    int done = 0;
    std::vector<JobFailure> failures;
    QThread* thread = nullptr;
};

JobRunner::Failed recordFailure(Outcome& o) {
    return [&o](const JobFailure& f) {
        o.failures.push_back(f);
        o.thread = QThread::currentThread();
    };
}

} // namespace

class TestJobRunner : public QObject {
    Q_OBJECT

  private slots:
    void runsJobsInOrderOnOneWorkerAndDeliversOnTheUiThread() {
        JobRunner runner;
        std::mutex mutex;
        std::vector<int> ran;
        std::vector<QThread*> workThreads;
        std::vector<int> delivered;
        std::vector<QThread*> doneThreads;
        for (int i = 0; i < 6; ++i)
            runner.submit(
                {QStringLiteral("job %1").arg(i)},
                [&, i](const Progress&) {
                    std::lock_guard lock(mutex);
                    ran.push_back(i);
                    workThreads.push_back(QThread::currentThread());
                    return i * 10;
                },
                [&](int value) {
                    delivered.push_back(value);
                    doneThreads.push_back(QThread::currentThread());
                });
        QVERIFY(runner.busy());
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(ran, (std::vector<int>{0, 1, 2, 3, 4, 5}));
        QCOMPARE(delivered, (std::vector<int>{0, 10, 20, 30, 40, 50}));
        QVERIFY(runner.workerThread() != QThread::currentThread());
        for (QThread* t : workThreads)
            QCOMPARE(t, runner.workerThread()); // one worker, created once
        for (QThread* t : doneThreads)
            QCOMPARE(t, runner.thread()); // the UI thread
        QCOMPARE(runner.thread(), QThread::currentThread());
        QVERIFY(!runner.busy());
    }

    // started, progress*, the continuation, finished; the next job starts only after that.
    void signalsAndContinuationsKeepTheirOrder() {
        JobRunner runner;
        QStringList events;
        connect(&runner, &JobRunner::jobStarted, this,
                [&](const QString& t) { events << "start " + t; });
        connect(&runner, &JobRunner::jobProgress, this,
                [&](double, const QString& s) { events << s; });
        connect(&runner, &JobRunner::jobFinished, this, [&](const QString& t, bool ok) {
            events << QStringLiteral("finish %1 %2").arg(t).arg(int(ok));
        });
        QSignalSpy busy(&runner, &JobRunner::busyChanged);
        runner.submit(
            {"a"}, [](const Progress& p) { p.report(0.5, "half"); }, [&] { events << "done a"; });
        runner.submit(
            {"b"}, [](const Progress&) { fail(FailureCode::IoError, "b.json", "unreadable"); },
            [&] { events << "done b"; }, [&](const JobFailure&) { events << "failed b"; });
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(events, QStringList({"start a", "half", "done a", "finish a 1", "start b",
                                      "failed b", "finish b 0"}));
        QCOMPARE(busy.count(), 2); // busy once for the whole batch, then idle
        QCOMPARE(busy.at(0).at(0).toBool(), true);
        QCOMPARE(busy.at(1).at(0).toBool(), false);
    }

    // Only whole-percent changes and new stages cross threads.
    void progressIsThrottledBeforeCrossingThreads() {
        JobRunner runner;
        QSignalSpy progress(&runner, &JobRunner::jobProgress);
        runner.submit(
            {"steps"},
            [](const Progress& p) {
                for (int i = 0; i < 1000; ++i)
                    p.report(i / 1000.0, "arena activations");
                p.report(0.999, "arena gradients");
            },
            [] {});
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(progress.count(), 101);
        double last = -1.0;
        for (int i = 0; i < 100; ++i) {
            QCOMPARE(progress.at(i).at(1).toString(), QString("arena activations"));
            double f = progress.at(i).at(0).toDouble();
            QCOMPARE(int(f * 100.0 + 1e-9), i);
            QVERIFY(f > last);
            last = f;
        }
        QCOMPARE(progress.at(100).at(1).toString(), QString("arena gradients"));
    }

    void cancelStopsTheRunningJobOnly() {
        JobRunner runner;
        QSignalSpy started(&runner, &JobRunner::jobStarted);
        Outcome spinning, next;
        runner.submit(
            {"spinning"}, untilCancelled, [&] { ++spinning.done; }, recordFailure(spinning));
        runner.submit(
            {"next"}, [](const Progress& p) { return p.cancelled(); },
            [&](bool sawCancel) { next.done += sawCancel ? 100 : 1; }, recordFailure(next));
        QCOMPARE(started.count(), 1);
        runner.cancel();
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(spinning.done, 0);
        QCOMPARE(spinning.failures.size(), size_t(1));
        QVERIFY(spinning.failures[0].cancelled());
        QCOMPARE(spinning.failures[0].code, QString("CANCELLED"));
        QCOMPARE(spinning.failures[0].where, QString("spinning")); // the engine's stage
        QCOMPARE(spinning.thread, QThread::currentThread());
        QCOMPARE(next.done, 1); // queued behind it, started with a fresh flag
        QVERIFY(next.failures.empty());
    }

    // Work that ignores the flag and finishes anyway: its result never reaches `done`.
    void aCancelledResultIsNeverDelivered() {
        JobRunner runner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        Outcome o;
        runner.submit(
            {"stubborn"},
            [release](const Progress&) {
                while (!release->load())
                    QThread::msleep(1);
                return 42;
            },
            [&](int) { ++o.done; }, recordFailure(o));
        runner.cancel();
        release->store(true);
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(o.done, 0);
        QCOMPARE(o.failures.size(), size_t(1));
        QVERIFY(o.failures[0].cancelled());
        QCOMPARE(o.failures[0].where, QString("stubborn"));
    }

    // A re-plan replaces the previous planning job: the queued one never starts, the running
    // one is cancelled, and continuations still come in submission order.
    void supersedeByKeyDropsQueuedAndCancelsRunning() {
        JobRunner runner;
        QSignalSpy started(&runner, &JobRunner::jobStarted);
        auto release = std::make_shared<std::atomic<bool>>(false);
        std::atomic<bool> runningSawCancel{false}, queuedRan{false};
        QStringList order;
        auto failed = [&](const char* name) {
            return [&order, name](const JobFailure& f) {
                order << QStringLiteral("%1 %2%3").arg(name, f.code,
                                                       f.superseded ? " superseded" : "");
            };
        };
        runner.submit(
            {"plan A", "plan"},
            [&, release](const Progress& p) {
                while (!release->load())
                    QThread::msleep(1);
                runningSawCancel = p.cancelled();
                return 1;
            },
            [&](int) { order << "A done"; }, failed("A"));
        runner.submit(
            {"plan B", "plan"},
            [&](const Progress&) {
                queuedRan = true;
                return 2;
            },
            [&](int) { order << "B done"; }, failed("B"));
        runner.submit(
            {"other"}, [](const Progress&) { return 3; }, [&](int) { order << "other done"; },
            failed("other"));
        runner.submit(
            {"plan C", "plan"}, [](const Progress& p) { return p.cancelled() ? -1 : 3; },
            [&](int v) { order << QStringLiteral("C done %1").arg(v); }, failed("C"));
        release->store(true);
        QVERIFY(runner.waitForIdle(kWaitMs));
        QVERIFY(runningSawCancel);
        QVERIFY(!queuedRan);
        QCOMPARE(order, QStringList({"A CANCELLED superseded", "B CANCELLED superseded",
                                     "other done", "C done 3"}));
        QStringList titles;
        for (const QList<QVariant>& args : started)
            titles << args.at(0).toString();
        QCOMPARE(titles, QStringList({"plan A", "other", "plan C"}));
    }

    // A running job that a newer one replaces, and that fails on its own before it looks at its
    // cancel flag, keeps its failure and says it was superseded.
    void aSupersededJobsOwnFailureSaysSo() {
        JobRunner runner;
        Outcome replaced, newer;
        auto release = std::make_shared<std::atomic<bool>>(false);
        runner.submit(
            {"old", "k"},
            [release](const Progress&) {
                while (!release->load())
                    QThread::msleep(1);
                fail(FailureCode::UnboundDimension, "x", "dimension 'n' has no value");
            },
            [&] { ++replaced.done; }, recordFailure(replaced));
        runner.submit(
            {"new", "k"}, [](const Progress&) {}, [&] { ++newer.done; }, recordFailure(newer));
        release->store(true);
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(replaced.failures.size(), size_t(1));
        QCOMPARE(replaced.failures[0].code, QString("UNBOUND_DIMENSION"));
        QVERIFY(replaced.failures[0].superseded);
        QCOMPARE(newer.done, 1);
    }

    // A job the caller cancelled stays cancelled by the caller when a newer one of its key comes.
    void cancelByKeyLeavesOtherJobs() {
        JobRunner runner;
        Outcome keyed, plain, newer;
        auto release = holdWorker(runner, "hold");
        runner.submit(
            {"keyed", "k"}, [](const Progress&) {}, [&] { ++keyed.done; }, recordFailure(keyed));
        runner.submit(
            {"plain"}, [](const Progress&) {}, [&] { ++plain.done; }, recordFailure(plain));
        runner.cancel("k");
        runner.submit(
            {"newer", "k"}, [](const Progress&) {}, [&] { ++newer.done; }, recordFailure(newer));
        release->store(true);
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(keyed.done, 0);
        QCOMPARE(keyed.failures.size(), size_t(1));
        QVERIFY(keyed.failures[0].cancelled());
        QVERIFY(!keyed.failures[0].superseded);
        QCOMPARE(plain.done, 1);
        QCOMPARE(newer.done, 1);
    }

    void failuresKeepCodeWhereAndMessage() {
        JobRunner runner;
        Outcome engine, other;
        runner.submit(
            {"engine"},
            [](const Progress&) -> int {
                fail(FailureCode::ArenaTooSmall, "arena 'activations'", "needs 2 KiB");
            },
            [&](int) { ++engine.done; }, recordFailure(engine));
        runner.submit(
            {"other"}, [](const Progress&) { throw std::runtime_error("boom"); },
            [&] { ++other.done; }, recordFailure(other));
        int after = 0;
        runner.submit(
            {"after"}, [](const Progress&) { return 7; }, [&](int v) { after = v; });
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(engine.done, 0);
        QCOMPARE(engine.failures.size(), size_t(1));
        const JobFailure& f = engine.failures[0];
        QCOMPARE(f.code, QString("ARENA_TOO_SMALL"));
        QCOMPARE(f.where, QString("arena 'activations'"));
        QCOMPARE(f.message, QString("needs 2 KiB"));
        QCOMPARE(f.text(), QString("ARENA_TOO_SMALL at arena 'activations': needs 2 KiB"));
        QVERIFY(!f.cancelled());
        QCOMPARE(engine.thread, QThread::currentThread());
        QCOMPARE(other.failures.size(), size_t(1));
        QCOMPARE(other.failures[0].code, QString("ERROR"));
        QVERIFY(other.failures[0].where.isEmpty());
        QCOMPARE(other.failures[0].text(), QString("ERROR: boom"));
        QCOMPARE(after, 7); // the worker survives a throwing job
    }

    // Continuations run inside the event loop: what they throw must not end the program. A
    // result that cannot be shown fails its job; work that throws a non-std exception too.
    void throwingContinuationsFailTheirJob() {
        JobRunner runner;
        Outcome shown, odd;
        runner.submit(
            {"shown"}, [](const Progress&) { return 1; },
            [&](int) {
                ++shown.done;
                fail(FailureCode::AllocationOverflow, "totals.peak_bytes", "too big to show");
            },
            recordFailure(shown));
        runner.submit(
            {"odd"}, [](const Progress&) { throw 42; }, [&] { ++odd.done; }, recordFailure(odd));
        runner.submit(
            {"unhandled"}, [](const Progress&) {}, [] { throw std::runtime_error("lost"); });
        int after = 0;
        runner.submit(
            {"after"}, [](const Progress&) { return 3; }, [&](int v) { after = v; });
        QTest::ignoreMessage(QtWarningMsg, "tmmu-studio: unhandled: ERROR: lost");
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(shown.done, 1);
        QCOMPARE(shown.failures.size(), size_t(1));
        QCOMPARE(shown.failures[0].code, QString("ALLOCATION_OVERFLOW"));
        QCOMPARE(odd.done, 0);
        QCOMPARE(odd.failures.size(), size_t(1));
        QCOMPARE(odd.failures[0].code, QString("ERROR"));
        QCOMPARE(after, 3);
    }

    void continuationsMayChainJobsAndWaitForIdleWaitsForThem() {
        JobRunner runner;
        QStringList order;
        runner.submit(
            {"first"}, [](const Progress&) { return 1; },
            [&](int) {
                order << "first";
                runner.submit(
                    {"chained"}, [](const Progress&) { QThread::msleep(50); },
                    [&] { order << "chained"; });
            });
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(order, QStringList({"first", "chained"}));
    }

    void continuationsOfADestroyedContextAreDropped() {
        JobRunner runner;
        auto context = std::make_unique<QObject>();
        auto release = std::make_shared<std::atomic<bool>>(false);
        int delivered = 0;
        runner.submit(
            {"orphan", QString(), context.get()},
            [release](const Progress&) {
                while (!release->load())
                    QThread::msleep(1);
            },
            [&] { ++delivered; }, [&](const JobFailure&) { ++delivered; });
        QObject alive;
        int aliveDelivered = 0;
        runner.submit(
            {"alive", QString(), &alive}, [](const Progress&) {}, [&] { ++aliveDelivered; });
        context.reset();
        release->store(true);
        QVERIFY(runner.waitForIdle(kWaitMs));
        QCOMPARE(delivered, 0);
        QCOMPARE(aliveDelivered, 1);
    }

    // Closing the window mid-job: the destructor cancels, joins, and nothing is delivered into
    // the objects that die with it.
    void destructionWhileAJobRunsCancelsJoinsAndDeliversNothing() {
        auto runner = std::make_unique<JobRunner>();
        QSignalSpy started(runner.get(), &JobRunner::jobStarted);
        auto sawCancel = std::make_shared<std::atomic<bool>>(false);
        auto queuedRan = std::make_shared<std::atomic<bool>>(false);
        auto delivered = std::make_shared<int>(0);
        runner->submit(
            {"long"},
            [sawCancel](const Progress& p) {
                while (!p.cancelled())
                    QThread::msleep(1);
                sawCancel->store(true);
            },
            [delivered] { ++*delivered; }, [delivered](const JobFailure&) { ++*delivered; });
        runner->submit(
            {"queued"}, [queuedRan](const Progress&) { queuedRan->store(true); },
            [delivered] { ++*delivered; }, [delivered](const JobFailure&) { ++*delivered; });
        QCOMPARE(started.count(), 1);
        QThread::msleep(20); // the worker is inside the long job
        QElapsedTimer t;
        t.start();
        runner.reset();
        QVERIFY2(t.elapsed() < 5000, qPrintable(QString("%1 ms to join").arg(t.elapsed())));
        QVERIFY(sawCancel->load());
        QTest::qWait(50); // anything posted before the join would arrive now
        QCOMPARE(*delivered, 0);
        QVERIFY(!queuedRan->load());
    }
};

QTEST_MAIN(TestJobRunner)
#include "test_job_runner.moc"
