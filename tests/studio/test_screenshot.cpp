// Screenshot mode, offscreen: the default plan is drawn, every panel shows something, and the
// palette's colours appear inside the panels that should draw them.
#include "charts/memory_chart.h"
#include "context/plan_context.h"
#include "main_window.h"
#include "planning.h"
#include "session_actions.h"
#include "studio_app.h"
#include "studio_options.h"
#include "studio_test_util.h"
#include "style/palette.h"

#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;
using namespace tmmu::studio;
using tmmu::studio::testing::findAction;
using tmmu::views::ViewPalette;

namespace {

// Pixels within a small distance of `color` (antialiasing and blending shift edges only).
int countNear(const QImage& image, const QRect& area, const QColor& color, int tolerance = 6) {
    int n = 0;
    QRect r = area.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y) {
        const QRgb* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
        for (int x = r.left(); x <= r.right(); ++x) {
            QRgb p = line[x];
            if (std::abs(qRed(p) - color.red()) <= tolerance &&
                std::abs(qGreen(p) - color.green()) <= tolerance &&
                std::abs(qBlue(p) - color.blue()) <= tolerance)
                ++n;
        }
    }
    return n;
}

int distinctColours(const QImage& image, const QRect& area) {
    QSet<QRgb> seen;
    QRect r = area.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); y += 2)
        for (int x = r.left(); x <= r.right(); x += 2)
            seen.insert(image.pixel(x, y));
    return int(seen.size());
}

} // namespace

class TestScreenshot : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QRect areaOf(MainWindow& w, QWidget* widget) {
        return QRect(widget->mapTo(&w, QPoint(0, 0)), widget->size());
    }

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
        apply_application_identity();
    }

    void defaultPlanIsDrawnInEveryPanel() {
        MainWindow w;
        const QString file = dir_.filePath("studio.png");
        QString error = render_screenshot(w, default_model_path(), PlanSettings{}, {.file = file});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QImage image(file);
        QVERIFY(!image.isNull());
        image = image.convertToFormat(QImage::Format_RGB32);
        QCOMPARE(image.size(), QSize(1600, 1000));
        QVERIFY(distinctColours(image, image.rect()) > 200);
        QVERIFY(w.context()->selectedTensor() >= 0);
        QCOMPARE(w.context()->currentEvent(), w.context()->eventCount() / 2);
        QVERIFY(!QSettings().contains("window/state")); // screenshot mode writes no settings

        ViewPalette palette = ViewPalette::fromApplication();
        for (QDockWidget* dock : w.docks()) {
            // The session, run and lazy-program docks do not draw the plan: they wait as tabs
            // behind plan panels.
            static const QStringList kWaiting{
                "sessionsDock",      "sessionCompareDock", "runDock",        "dispatchDock",
                "parityDock",        "instructionsDock",   "tokenGraphDock", "lazyStateDock",
                "runComparisonDock", "lazyTracesDock"};
            if (kWaiting.contains(dock->objectName())) {
                QVERIFY2(!dock->isFloating() && !w.tabifiedDockWidgets(dock).isEmpty(),
                         qPrintable(dock->objectName()));
                continue;
            }
            QVERIFY2(dock->isVisible() && !dock->isFloating(), qPrintable(dock->objectName()));
            QRect area = areaOf(w, dock->widget());
            QVERIFY2(area.width() > 150 && area.height() > 120, qPrintable(dock->objectName()));
            QVERIFY2(distinctColours(image, area) > 8, qPrintable(dock->objectName()));
        }
        // Role colours inside the timelines: the live ranges show every arena (activations in
        // orange, parameters in blue); the arena layout opens on the activations arena.
        auto expectColour = [&](QWidget* panel, Role role) {
            int n = countNear(image, areaOf(w, panel), palette.role(role));
            QVERIFY2(n > 200, qPrintable(QString("%1: %2 px of %3")
                                             .arg(panel->objectName())
                                             .arg(n)
                                             .arg(palette.role(role).name())));
        };
        expectColour(w.dock("liveRangesDock")->widget(), Role::Activation);
        expectColour(w.dock("liveRangesDock")->widget(), Role::Parameter);
        expectColour(w.dock("liveRangesDock")->widget(), Role::Gradient);
        expectColour(w.centralWidget(), Role::Activation);
        expectColour(w.dock("slotsDock")->widget(), Role::OptimizerState);
        // The memory chart draws the stacked arenas and the current-step line.
        QRect memory = areaOf(w, w.dock("memoryDock")->widget());
        QVERIFY(countNear(image, memory, palette.role(Role::Activation)) > 500);
        QVERIFY(countNear(image, memory, palette.role(Role::Gradient)) > 50);
        QCOMPARE(w.memoryChart()->cursorX(), double(w.context()->currentTime()) + 0.5);
        // The strategy chart draws its height and lower-bound bars.
        QRect strategies = areaOf(w, w.dock("strategyDock")->widget());
        QVERIFY(countNear(image, strategies, palette.role(Role::Parameter)) > 200);
        QVERIFY(countNear(image, strategies, palette.lowerBound()) > 200);
    }

    void darkPaletteIsFollowed() {
        QPalette saved = QApplication::palette();
        QPalette dark(QColor(45, 45, 45)); // button colour; Qt derives a dark palette from it
        dark.setColor(QPalette::Window, QColor(40, 40, 40));
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(225, 225, 225));
        dark.setColor(QPalette::Text, QColor(225, 225, 225));
        QApplication::setPalette(dark);
        {
            MainWindow w;
            const QString file = dir_.filePath("studio-dark.png");
            QString error =
                render_screenshot(w, default_model_path(), PlanSettings{}, {.file = file});
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QImage image = QImage(file).convertToFormat(QImage::Format_RGB32);
            ViewPalette palette = ViewPalette::fromApplication();
            QVERIFY(palette.dark());
            for (const char* name : {"memoryDock", "strategyDock"}) {
                QRect area = areaOf(w, w.dock(name)->widget());
                int background = countNear(image, area, palette.background(), 2);
                QVERIFY2(
                    background > area.width() * area.height() / 5,
                    qPrintable(QString("%1: %2 dark background px").arg(name).arg(background)));
                QVERIFY(countNear(image, area, ViewPalette(false).background(), 2) < 50);
            }
        }
        QApplication::setPalette(saved);
    }

    // --theme dark --screenshot-panel live-ranges --step 5, as the user guide's pictures are
    // made: the dock alone, dark, at that step; View > Theme shows the theme; System restores
    // the desktop's palette.
    void themesAndPanelsRender() {
        const QColor desktopWindow = QApplication::palette().color(QPalette::Window);
        MainWindow w;
        w.setTheme(Theme::Dark);
        QVERIFY(ViewPalette::fromApplication().dark());
        QAction* darkAction = findAction(w, "&Dark");
        QVERIFY(darkAction && darkAction->isCheckable() && darkAction->isChecked());
        const QString file = dir_.filePath("live-ranges-dark.png");
        QString error = render_screenshot(
            w, default_model_path(), PlanSettings{},
            {.file = file, .size = QSize(1280, 800), .panel = "live-ranges", .step = 5});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QImage image = QImage(file).convertToFormat(QImage::Format_RGB32);
        QCOMPARE(w.size(), QSize(1280, 800));
        QCOMPARE(image.size(), w.dock("liveRangesDock")->size());
        QCOMPARE(w.context()->currentEvent(), uint64_t(5));
        const ViewPalette dark(true);
        QVERIFY(countNear(image, image.rect(), dark.background(), 2) >
                image.width() * image.height() / 10);
        QVERIFY(countNear(image, image.rect(), dark.role(Role::Activation)) > 200);
        error = render_screenshot(w, default_model_path(), PlanSettings{},
                                  {.file = dir_.filePath("none.png"), .panel = "nowhere"});
        QVERIFY2(error.contains("nowhere"), qPrintable(error));
        w.setTheme(Theme::System);
        QCOMPARE(QApplication::palette().color(QPalette::Window), desktopWindow);
        QVERIFY(!ViewPalette::fromApplication().dark());
        QVERIFY(!darkAction->isChecked());
    }

    // A screenshot never creates a sessions database: a mistyped --sessions, or a session asked
    // for where there is no database, says so and leaves the disk as it was.
    void screenshotsCreateNoSessionsDatabase() {
        const QString missing = dir_.filePath("typo/dir/sessions.db");
        MainWindow listed;
        StudioOptions options;
        options.sessions = missing;
        options.screenshot = dir_.filePath("sessions.png");
        options.screenshotPanel = QStringLiteral("sessions");
        QCOMPARE(render_requested_screenshot(listed, options), QString());
        QVERIFY(!QFileInfo::exists(dir_.filePath("typo")));
        QVERIFY(listed.sessions()->storeError().contains("no sessions database here"));

        MainWindow shown;
        options.session = 1;
        options.screenshot = dir_.filePath("session.png");
        const QString error = render_requested_screenshot(shown, options);
        QVERIFY2(error.startsWith("IO_ERROR") && error.contains("no sessions database"),
                 qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir_.filePath("typo")));
        QVERIFY(!QFile::exists(options.screenshot));
    }

    void failingScreenshotReportsTheFailure() {
        MainWindow w;
        QString error = render_screenshot(w, "/nonexistent.json", PlanSettings{},
                                          {.file = dir_.filePath("never.png")});
        QVERIFY(error.startsWith("IO_ERROR"));
        QVERIFY(!QFile::exists(dir_.filePath("never.png")));
        // A program that broke an engine rule is shown up to the error, as the window shows it
        // (the screenshot exited 1 and wrote nothing).
        MainWindow stopped;
        QCOMPARE(render_screenshot(stopped,
                                   TMMU_SOURCE_DIR "/resources/programs/saved-tensor-mutation.json",
                                   PlanSettings{}, {.file = dir_.filePath("stopped.png")}),
                 QString());
        QVERIFY(stopped.showsStoppedProgram());
        QVERIFY(stopped.lastFailure().contains("SavedTensorModifiedError"));
        QVERIFY(QFile::exists(dir_.filePath("stopped.png")));
        // A step past the plan's end is refused, not shown as the last one (it was, silently).
        MainWindow stepped;
        const QString model = TMMU_SOURCE_DIR "/resources/models/examples/linear_chain.json";
        PlanSettings settings;
        settings.mode = Mode::Inference;
        error = render_screenshot(stepped, model, settings,
                                  {.file = dir_.filePath("past.png"), .step = 8});
        QCOMPARE(error, QStringLiteral("INVALID_ARGUMENT at --step: step 8 is past the plan's "
                                       "last step, 7"));
        QVERIFY(!QFile::exists(dir_.filePath("past.png")));
        QCOMPARE(render_screenshot(stepped, model, settings,
                                   {.file = dir_.filePath("last.png"), .step = 7}),
                 QString());
        QCOMPARE(stepped.context()->currentEvent(), uint64_t(7));
    }
};

QTEST_MAIN(TestScreenshot)
#include "test_screenshot.moc"
