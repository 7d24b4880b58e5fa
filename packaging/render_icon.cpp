// Renders the studio's SVG icon to the PNG sizes icon themes look for (hicolor/NxN/apps), at
// build time, so the package carries both without a converter beyond Qt:
//   tmmu-render-icon ICON.svg OUT_DIR SIZE...   writes OUT_DIR/SIZExSIZE/apps/tmmu-studio.png
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fputs("usage: tmmu-render-icon ICON.svg OUT_DIR SIZE...\n", stderr);
        return 2;
    }
    qputenv("QT_QPA_PLATFORM", "offscreen"); // builds run without a display
    QGuiApplication app(argc, argv);
    QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
    if (!svg.isValid()) {
        std::fprintf(stderr, "tmmu-render-icon: %s: not a valid SVG\n", argv[1]);
        return 1;
    }
    for (int k = 3; k < argc; ++k) {
        const int size = QString::fromLatin1(argv[k]).toInt();
        if (size <= 0) {
            std::fprintf(stderr, "tmmu-render-icon: '%s' is not a size in pixels\n", argv[k]);
            return 2;
        }
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        svg.render(&painter);
        painter.end();
        const QString dir =
            QStringLiteral("%1/%2x%2/apps").arg(QString::fromLocal8Bit(argv[2])).arg(size);
        if (!QDir().mkpath(dir) || !image.save(dir + QStringLiteral("/tmmu-studio.png"))) {
            std::fprintf(stderr, "tmmu-render-icon: cannot write %s/tmmu-studio.png\n",
                         qPrintable(dir));
            return 1;
        }
    }
    return 0;
}
