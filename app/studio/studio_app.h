#pragma once
// tmmu-studio's entry point, kept out of main.cpp so tests drive the same code.
#include <QSize>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>

namespace tmmu::studio {

class MainWindow;
struct PlanSettings;
struct StudioOptions;

// Organisation "TMMU Studio", application "tmmu-studio" (QSettings), display name and icon.
void apply_application_identity();

// Runs the studio for the arguments after the program name; returns the exit code. Needs a
// QApplication.
int run_studio(const QStringList& args);

// What screenshot mode renders: the window (or one panel of it, studio_options.h:
// panel_names()) at `size`, at `step` (default: the middle of the plan) with a large tensor live
// there selected.
struct Screenshot {
    QString file; // the PNG written
    QSize size{1600, 1000};
    QString panel = QStringLiteral("window");
    std::optional<uint64_t> step{};
};

// Screenshot mode: plans `model` on the worker and waits, then renders `shot`. Returns an error
// message, empty on success. The user's settings are neither read nor written.
QString render_screenshot(MainWindow& window, const QString& model, const PlanSettings& settings,
                          const Screenshot& shot);
// The same for a recorded session of the window's open sessions database, shown as stored.
QString render_session_screenshot(MainWindow& window, qint64 session, const Screenshot& shot);

// What `tmmu-studio --screenshot FILE ...` renders, as `options` ask (studio_options.h): the
// model (or the recorded session) at the step, in the panel, size and theme asked for. Returns
// an error message, empty on success.
QString render_requested_screenshot(MainWindow& window, const StudioOptions& options);

} // namespace tmmu::studio
