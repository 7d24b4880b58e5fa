#include "style/palette.h"

#include "report/palette.h"

#include <QGuiApplication>

namespace tmmu::views {

namespace report = sessions::report;
namespace {

QColor qcolor(report::Rgb c) {
    return QColor(c.r, c.g, c.b);
}

} // namespace

ViewPalette ViewPalette::fromApplication() {
    QColor window = QGuiApplication::palette().color(QPalette::Window);
    return ViewPalette(window.lightness() < 128);
}

ViewPalette::ViewPalette(bool dark) : dark_(dark) {}

QColor ViewPalette::role(Role r) const {
    return qcolor(report::role_color(r));
}
QColor ViewPalette::slot(uint32_t slot) const {
    return qcolor(report::slot_color(slot));
}
QColor ViewPalette::arena(const Plan& plan, uint32_t arena) const {
    return qcolor(report::arena_color(plan, arena));
}
QColor ViewPalette::background() const {
    return dark_ ? QColor(QRgb(0x1e1e1e)) : qcolor(report::kPaper);
}
QColor ViewPalette::grid() const {
    return dark_ ? QColor(QRgb(0x3a3a3a)) : qcolor(report::kGridLine);
}
QColor ViewPalette::text() const {
    return dark_ ? QColor(QRgb(0xdddddd)) : qcolor(report::kInk);
}
QColor ViewPalette::selection() const {
    return dark_ ? QColor(QRgb(0xffffff)) : QColor(QRgb(0x000000));
}
QColor ViewPalette::cursor() const {
    return qcolor(report::kCursorColor);
}
QColor ViewPalette::lowerBound() const {
    return qcolor(report::kLowerBoundColor);
}
QColor ViewPalette::peak() const {
    return qcolor(report::kPeakColor);
}
QColor ViewPalette::more() const {
    return qcolor(report::kMoreColor);
}
QColor ViewPalette::less() const {
    return qcolor(report::kLessColor);
}
QColor ViewPalette::warning() const {
    return qcolor(report::kWarningColor);
}
QColor ViewPalette::freeGap() const {
    return dark_ ? QColor(QRgb(0x2f4f2f)) : QColor(QRgb(0xd8f0d8));
}

} // namespace tmmu::views
