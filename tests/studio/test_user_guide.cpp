// The user guide (resources/docs/user-guide.md) and its pictures: every picture is made here
// again with the tmmu-studio options written next to it (<!-- screenshot FILE: OPTIONS -->), and
// must match the committed one (the same size, at most kMaxDifferentPixels of its pixels
// different: planning times move the strategy chart's line). A guide whose pictures no
// longer show the studio fails; `cmake --build build --target user-guide-images` writes them
// again (TMMU_UPDATE_GUIDE=1). The guide is linked from the README and opens from Help.
#include "main_window.h"
#include "studio_app.h"
#include "studio_options.h"
#include "studio_test_util.h"
#include "user_guide.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

using namespace tmmu::studio;
using tmmu::studio::testing::findAction;

namespace {

// Pictures made twice on one machine are identical but for the strategy chart's planning times
// (measured: 0.3-0.5% of its picture's pixels, none of the window's). Moving the step alone
// changes about 1% of a panel.
constexpr double kMaxDifferentPixels = 0.005;
constexpr double kMaxDifferentPixelsTimed = 0.02; // the strategy chart's picture

struct Shot {
    QString file; // relative to resources/docs
    QStringList options;
};

QString guideText() {
    QFile f(user_guide_path());
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll());
}

std::vector<Shot> shotsOf(const QString& guide) {
    std::vector<Shot> shots;
    static const QRegularExpression marker(QStringLiteral("<!-- screenshot (\\S+): (.*?) -->"));
    for (auto it = marker.globalMatch(guide); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        shots.push_back({m.captured(1), m.captured(2).split(' ', Qt::SkipEmptyParts)});
    }
    return shots;
}

QStringList imagesOf(const QString& guide) {
    QStringList images;
    static const QRegularExpression image(QStringLiteral("!\\[[^\\]]*\\]\\(([^)]+)\\)"));
    for (auto it = image.globalMatch(guide); it.hasNext();)
        images << it.next().captured(1);
    return images;
}

// Model paths in the options are relative to resources/.
QStringList resolved(QStringList options) {
    for (QString& o : options)
        if (!o.startsWith('-') && QFile::exists(resource_dir() + '/' + o))
            o = resource_dir() + '/' + o;
    return options;
}

// The share of pixels whose colour differs by more than a little in some channel.
double differentPixels(const QImage& a, const QImage& b) {
    qint64 different = 0;
    for (int y = 0; y < a.height(); ++y) {
        const QRgb* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
        const QRgb* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
        for (int x = 0; x < a.width(); ++x)
            different += std::abs(qRed(pa[x]) - qRed(pb[x])) > 24 ||
                         std::abs(qGreen(pa[x]) - qGreen(pb[x])) > 24 ||
                         std::abs(qBlue(pa[x]) - qBlue(pb[x])) > 24;
    }
    return double(different) / double(qint64(a.width()) * a.height());
}

} // namespace

class TestUserGuide : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString guide_;

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
        apply_application_identity();
        guide_ = guideText();
        QVERIFY2(!guide_.isEmpty(), qPrintable(user_guide_path()));
    }

    // Every picture has the command that makes it, and every command's picture is shown.
    void everyPictureHasItsCommand() {
        QStringList made;
        for (const Shot& s : shotsOf(guide_))
            made << s.file;
        QVERIFY(made.size() >= 8);
        QCOMPARE(imagesOf(guide_), made);
    }

    void picturesShowTheStudio_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("options");
        for (const Shot& s : shotsOf(guide_))
            QTest::newRow(qPrintable(s.file)) << s.file << s.options;
    }
    void picturesShowTheStudio() {
        QFETCH(QString, file);
        QFETCH(QStringList, options);
        const QString made = dir_.filePath(QFileInfo(file).fileName());
        const StudioOptions o =
            parse_studio_options(resolved(options) + QStringList{"--screenshot", made});
        {
            MainWindow window;
            const QString error = render_requested_screenshot(window, o);
            QVERIFY2(error.isEmpty(), qPrintable(error));
        }
        apply_theme(Theme::System);
        const QImage image = QImage(made).convertToFormat(QImage::Format_RGB32);
        QVERIFY(!image.isNull());
        const QString committed = resource_dir() + QStringLiteral("/docs/") + file;
        if (qEnvironmentVariableIsSet("TMMU_UPDATE_GUIDE")) {
            QDir().mkpath(QFileInfo(committed).absolutePath());
            QFile::remove(committed);
            QVERIFY(QFile::copy(made, committed));
            return;
        }
        const QImage expected = QImage(committed).convertToFormat(QImage::Format_RGB32);
        QVERIFY2(!expected.isNull(), qPrintable(committed + " is missing: " + kHowToUpdate));
        QVERIFY2(image.size() == expected.size(),
                 qPrintable(QStringLiteral("%1 is %2x%3, the studio now makes %4x%5: %6")
                                .arg(committed)
                                .arg(expected.width())
                                .arg(expected.height())
                                .arg(image.width())
                                .arg(image.height())
                                .arg(kHowToUpdate)));
        const double different = differentPixels(image, expected);
        const bool timed = options.join(' ').contains("--screenshot-panel strategy");
        QVERIFY2(different <= (timed ? kMaxDifferentPixelsTimed : kMaxDifferentPixels),
                 qPrintable(QStringLiteral("%1 is stale: %2% of its pixels differ from what the "
                                           "studio shows now (kept in %3): %4")
                                .arg(committed)
                                .arg(100 * different, 0, 'f', 1)
                                .arg(made, kHowToUpdate)));
    }

    // Help > User guide (F1) shows the guide with its pictures.
    void helpOpensTheGuide() {
        MainWindow window;
        QAction* help = findAction(window, "&User guide");
        QVERIFY(help);
        QCOMPARE(help->shortcut(), QKeySequence(QKeySequence::HelpContents));
        help->trigger();
        auto* shown = window.findChild<QWidget*>("userGuide");
        QVERIFY(shown);
        auto* browser = shown->findChild<QTextBrowser*>();
        QVERIFY(browser);
        const QString text = browser->document()->toPlainText();
        for (const char* heading : {"The arena layout", "Live ranges", "Stepping through a plan",
                                    "Sessions", "Exports", "Keyboard shortcuts"})
            QVERIFY2(text.contains(heading), heading);
        for (const QString& image : imagesOf(guide_)) {
            // Resolved against the guide's own location, as the browser draws it.
            const QVariant loaded =
                browser->loadResource(QTextDocument::ImageResource, QUrl(image));
            const QImage picture = loaded.canConvert<QImage>()
                                       ? loaded.value<QImage>()
                                       : QImage::fromData(loaded.toByteArray());
            QVERIFY2(!picture.isNull(), qPrintable(image));
        }
    }

    void readmeLinksTheGuide() {
        QFile readme(QStringLiteral(TMMU_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(readme.readAll()).contains("resources/docs/user-guide.md"));
    }

  private:
    static inline const QString kHowToUpdate =
        QStringLiteral("regenerate the pictures with `cmake --build build --target "
                       "user-guide-images` and look at them before committing");
};

QTEST_MAIN(TestUserGuide)
#include "test_user_guide.moc"
