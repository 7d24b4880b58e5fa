#pragma once
// tmmu-studio's command line (QCommandLineParser; values validated by the same app-common
// functions as `tmmu`'s flags) and where its bundled resources live.
#include "planning.h"
#include "theme.h"

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace tmmu::studio {

struct StudioOptions {
    QString model; // empty: the bundled default model
    PlanSettings settings;
    QString screenshot; // non-empty: render the main window to this PNG and exit
    QSize screenshotSize{1600, 1000};
    QString screenshotPanel;      // non-empty: render only this panel (panel_names())
    std::optional<uint64_t> step; // the step shown first; default: the middle of the plan
    std::optional<Theme> theme;   // this run's theme; default: the one saved in View > Theme
    QString sessions;             // sessions database; empty: sessions::default_sessions_path()
    qint64 session = 0; // non-zero: show this recorded session instead of planning a model
    bool help = false;
    bool version = false;
};

// Parses arguments after the program name:
//   [MODEL] [--mode M] [--batch N] [--seq N] [--strategy S] [--dim NAME=VALUE]...
//   [--input-shape INPUT=AxB]... [--no-aliasing] [--step N] [--theme T]
//   [--screenshot FILE [--screenshot-size WxH] [--screenshot-panel NAME]]
//   [--sessions PATH] [--open-session ID] [--help] [--version]
// Throws Failure(InvalidArgument) naming the bad option. Needs no QCoreApplication.
StudioOptions parse_studio_options(const QStringList& args);
QString studio_usage();

// What --screenshot-panel accepts: "window" (the default), "arena-layout" (the central view) and
// each dock's name ("tensor-table", "live-ranges", "memory", ...).
QStringList panel_names();

// Parses the arguments (after the program name) into `options` and answers what needs no
// window: --help and --version (exit 0) and usage errors (exit 2, with the usage). Returns the
// exit code when answered, nothing when the studio should start. main() calls it before the
// QApplication exists (beforeQt), so none of this needs a display; arguments that may be Qt's
// own options are then left for QApplication to take, and run_studio reports errors after it.
std::optional<int> answer_command_line(const QStringList& args, StudioOptions& options,
                                       bool beforeQt);

// TMMU_RESOURCES, else the source tree's resources/, else the installed share/tmmu.
QString resource_dir();
QString default_model_path();

} // namespace tmmu::studio
