#include "studio_app.h"

#include "context/plan_context.h"
#include "core/failure.h"
#include "job_runner.h"
#include "main_window.h"
#include "planning_controls.h"
#include "session_actions.h"
#include "session_store.h"
#include "studio_options.h"

#include <QApplication>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QStatusBar>
#include <QThread>

#include <cstdio>
#include <memory>

namespace tmmu::studio {
namespace {

QIcon app_icon() {
    for (const QString& path : {QStringLiteral(":/icons/tmmu-studio.svg"),
                                resource_dir() + QStringLiteral("/icons/tmmu-studio.svg")})
        if (QFileInfo::exists(path)) return QIcon(path);
    return {};
}

// Lets layouts, docks and charts settle: several rounds because docks lay out in steps.
void settle() {
    for (int i = 0; i < 8; ++i) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
}

} // namespace

void apply_application_identity() {
    QCoreApplication::setOrganizationName(QStringLiteral("TMMU Studio"));
    QCoreApplication::setApplicationName(QStringLiteral("tmmu-studio"));
    QGuiApplication::setApplicationDisplayName(QStringLiteral("TMMU Studio"));
    QGuiApplication::setDesktopFileName(QStringLiteral("tmmu-studio"));
    QIcon icon = app_icon();
    if (!icon.isNull()) QApplication::setWindowIcon(icon);
}

namespace {

// Why --step cannot be shown on the plan on screen (past its last event), empty when it can.
QString step_outside(const MainWindow& window, uint64_t step) {
    const views::PlanContext& ctx = *window.context();
    if (!ctx.plan() || step < ctx.eventCount()) return {};
    const QString unit = ctx.eventAxis().label();
    return QStringLiteral("INVALID_ARGUMENT at --step: %1 %2 is past the plan's last %1, %3")
        .arg(unit)
        .arg(step)
        .arg(ctx.eventCount() - 1);
}

QString save_png(MainWindow& window, const Screenshot& shot) {
    if (shot.step) {
        if (QString error = step_outside(window, *shot.step); !error.isEmpty()) return error;
        window.showStep(*shot.step);
    } else {
        window.showMiddleOfPlan();
    }
    window.show();
    window.fitDocks(shot.size);
    QWidget* panel = window.panel(shot.panel);
    if (!panel)
        return QStringLiteral("INVALID_ARGUMENT at --screenshot-panel: no panel '%1'")
            .arg(shot.panel);
    settle();
    QImage image = panel->grab().toImage();
    if (image.isNull()) return QStringLiteral("the window could not be rendered");
    if (!image.save(shot.file, "PNG"))
        return QStringLiteral("IO_ERROR at %1: cannot write the PNG").arg(shot.file);
    return {};
}

QString model_path(const StudioOptions& options) {
    return options.model.isEmpty() ? default_model_path() : options.model;
}

QString sessions_path(const StudioOptions& options) {
    return options.sessions.isEmpty() ? QString::fromStdString(sessions::default_sessions_path())
                                      : options.sessions;
}

// Shows a recorded session, opened on the worker, and waits for it; returns why it cannot be
// shown, empty on success.
QString show_session(MainWindow& window, qint64 session) {
    SessionActions* actions = window.sessions();
    if (!actions->store()) return actions->storeError();
    bool shown = false;
    QMetaObject::Connection c =
        QObject::connect(actions, &SessionActions::openFinished,
                         [&shown, session](qint64 id, bool ok) { shown |= ok && id == session; });
    actions->openSession(session);
    window.jobs()->waitForIdle();
    QObject::disconnect(c);
    return shown ? QString() : actions->lastMessage();
}

} // namespace

QString render_screenshot(MainWindow& window, const QString& model, const PlanSettings& settings,
                          const Screenshot& shot) {
    window.setPersistSettings(false);
    window.resize(shot.size);
    if (!window.openModelSync(model, settings)) {
        // A program that broke an engine rule shows its trace up to the error, as the window
        // does: the picture is taken, and the error said.
        if (!window.showsStoppedProgram()) return window.lastFailure();
        std::fprintf(stderr, "tmmu-studio: the program stopped: %s\n",
                     qPrintable(window.lastFailure()));
    }
    return save_png(window, shot);
}

QString render_session_screenshot(MainWindow& window, qint64 session, const Screenshot& shot) {
    window.setPersistSettings(false);
    window.resize(shot.size);
    QString error = show_session(window, session);
    return error.isEmpty() ? save_png(window, shot) : error;
}

QString render_requested_screenshot(MainWindow& window, const StudioOptions& options) {
    // Screenshots never record, nor create a database (a mistyped --sessions says so); they list
    // one only when it is named or shown.
    window.sessions()->setRecording(false);
    if (!options.sessions.isEmpty() || options.session)
        window.sessions()->openStore(sessions_path(options), sessions::StoreAccess::ExistingOnly);
    window.setTheme(options.theme.value_or(Theme::System));
    Screenshot shot{options.screenshot, options.screenshotSize, QStringLiteral("window"),
                    options.step};
    if (!options.screenshotPanel.isEmpty()) shot.panel = options.screenshotPanel;
    return options.session ? render_session_screenshot(window, options.session, shot)
                           : render_screenshot(window, model_path(options), options.settings, shot);
}

int run_studio(const QStringList& args) {
    apply_application_identity();
    StudioOptions options;
    if (auto code = answer_command_line(args, options, false)) return *code;
    MainWindow window;
    if (!options.screenshot.isEmpty()) {
        QString error = render_requested_screenshot(window, options);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "tmmu-studio: %s\n", qPrintable(error));
            return 1;
        }
        return 0;
    }
    window.restoreSettings();
    if (options.theme) window.setTheme(*options.theme); // this run only: not saved
    if (options.step) {
        // The first plan shown opens at the step asked for; past its end, at its last step,
        // saying so.
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = QObject::connect(&window, &MainWindow::planShown, &window,
                                 [&window, once, step = *options.step] {
                                     QObject::disconnect(*once);
                                     const QString outside = step_outside(window, step);
                                     window.showStep(step);
                                     if (!outside.isEmpty())
                                         window.statusBar()->showMessage(
                                             QObject::tr("%1: showing that one").arg(outside));
                                 });
    }
    window.sessions()->openStore(sessions_path(options));
    window.controls()->setSettings(options.settings);
    // A session that cannot be shown says why in the status bar; the default model opens.
    if (!options.session || !show_session(window, options.session).isEmpty())
        window.openModel(model_path(options), options.settings, !options.model.isEmpty());
    window.show();
    return QApplication::exec();
}

} // namespace tmmu::studio
