#pragma once
// tmmu-studio's entry point, kept out of main.cpp so tests drive the same code.
#include <QSize>
#include <QString>
#include <QStringList>

namespace tmmu::studio {

class MainWindow;
struct PlanSettings;

// Organisation "TMMU Studio", application "tmmu-studio" (QSettings), display name and icon.
void apply_application_identity();

// Runs the studio for the arguments after the program name; returns the exit code. Needs a
// QApplication.
int run_studio(const QStringList& args);

// Screenshot mode: plans `model` on the worker and waits, puts the step in the middle with a tensor
// selected, renders the window at `size` and writes a PNG. Returns an error message, empty on
// success. The user's settings are neither read nor written.
QString render_screenshot(MainWindow& window, const QString& model, const PlanSettings& settings,
                          const QString& file, QSize size = QSize(1600, 1000));
// The same for a recorded session of the window's open sessions database, shown as stored.
QString render_session_screenshot(MainWindow& window, qint64 session, const QString& file,
                                  QSize size = QSize(1600, 1000));

} // namespace tmmu::studio
