#pragma once
// Helpers shared by the studio suites: small planning requests, waiting for the studio's worker
// (it reports through queued events), and holding it busy.
#include "job_runner.h"
#include "main_window.h"
#include "planning.h"
#include "studio_app.h"

#include <QAction>
#include <QThread>

#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QString>
#include <QTest>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace tmmu::studio::testing {

// Keeps the user's settings and data out of the tests: QSettings in `dir`, test-mode paths.
inline void isolateSettings(const QString& dir) {
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir);
    apply_application_identity();
}

// A small request keeps the tests fast; a few plan the real default.
inline PlanSettings smallSettings(const std::string& strategy = "auto") {
    PlanSettings s;
    s.batch = 1;
    s.seq = 64;
    s.strategy = strategy;
    return s;
}

// The window's action with this menu text ("&Apply to host memory…"), or null.
inline QAction* findAction(QWidget& w, const QString& text) {
    for (QAction* a : w.findChildren<QAction*>())
        if (a->text() == text) return a;
    return nullptr;
}

// Runs `start` and waits until the window shows a plan.
inline bool waitForPlan(MainWindow& w, const std::function<void()>& start) {
    QSignalSpy shown(&w, &MainWindow::planShown);
    start();
    return shown.wait(30000);
}

// The comparison runs after the plan is shown; some tests need the worker quiet. Comparing
// every strategy (optimal among them) on the default model has taken over 30 s on a loaded
// 2-core machine: the bound is for a worker that never settles, not for a slow one.
inline bool waitIdle(MainWindow& w) {
    return w.jobs()->waitForIdle(120000);
}

// Submits a job that holds the worker until the returned flag is set or the job is cancelled
// (then it fails with CANCELLED), so tests can queue work behind it or cancel it.
inline std::shared_ptr<std::atomic<bool>> holdWorker(JobRunner& jobs, const QString& title,
                                                     JobRunner::Failed failed = {}) {
    auto release = std::make_shared<std::atomic<bool>>(false);
    jobs.submit(
        {title},
        [release](const Progress& p) {
            while (!release->load()) {
                p.check_cancel("held");
                QThread::msleep(1);
            }
        },
        [] {}, std::move(failed));
    return release;
}

} // namespace tmmu::studio::testing
