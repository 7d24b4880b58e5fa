#pragma once
// Helpers shared by the studio suites: small planning requests and waiting for the planning
// worker, which reports through queued signals.
#include "main_window.h"
#include "plan_runner.h"
#include "planning.h"
#include "studio_app.h"

#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QString>
#include <QTest>

#include <functional>
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

// Runs `start` and waits until the window shows a plan.
inline bool waitForPlan(MainWindow& w, const std::function<void()>& start) {
    QSignalSpy shown(&w, &MainWindow::planShown);
    start();
    return shown.wait(30000);
}

// The comparison runs after the plan is shown; some tests need the runner quiet.
inline bool waitIdle(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.runner()->busy(); }, 30000);
}

} // namespace tmmu::studio::testing
