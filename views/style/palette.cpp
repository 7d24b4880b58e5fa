#include "style/palette.h"

#include <QGuiApplication>
#include <array>

namespace tmmu::views {
namespace {

// Okabe-Ito: distinguishable under the common colour-vision deficiencies.
constexpr std::array<QRgb, 8> kOkabeIto{
    0xE69F00, // orange
    0x56B4E9, // sky blue
    0x009E73, // bluish green
    0xF0E442, // yellow
    0x0072B2, // blue
    0xD55E00, // vermillion
    0xCC79A7, // reddish purple
    0x999999, // grey
};

} // namespace

ViewPalette ViewPalette::fromApplication() {
    QColor window = QGuiApplication::palette().color(QPalette::Window);
    return ViewPalette(window.lightness() < 128);
}

ViewPalette::ViewPalette(bool dark) : dark_(dark) {}

QColor ViewPalette::role(Role r) const {
    switch (r) {
    case Role::Parameter: return QColor(kOkabeIto[4]);
    case Role::Input: return QColor(kOkabeIto[1]);
    case Role::Output: return QColor(kOkabeIto[6]);
    case Role::Activation: return QColor(kOkabeIto[0]);
    case Role::Gradient: return QColor(kOkabeIto[2]);
    case Role::OptimizerState: return QColor(kOkabeIto[5]);
    case Role::Workspace: return QColor(kOkabeIto[7]);
    }
    return QColor(kOkabeIto[7]);
}

QColor ViewPalette::slot(uint32_t slot) const { return QColor(kOkabeIto[slot % 7]); }
QColor ViewPalette::background() const { return dark_ ? QColor(QRgb(0x1e1e1e)) : QColor(QRgb(0xffffff)); }
QColor ViewPalette::grid() const { return dark_ ? QColor(QRgb(0x3a3a3a)) : QColor(QRgb(0xe4e4e4)); }
QColor ViewPalette::text() const { return dark_ ? QColor(QRgb(0xdddddd)) : QColor(QRgb(0x202020)); }
QColor ViewPalette::selection() const { return dark_ ? QColor(QRgb(0xffffff)) : QColor(QRgb(0x000000)); }
QColor ViewPalette::cursor() const { return QColor(QRgb(0xD55E00)); }
QColor ViewPalette::lowerBound() const { return QColor(QRgb(0x009E73)); }
QColor ViewPalette::peak() const { return QColor(QRgb(0xCC79A7)); }
QColor ViewPalette::freeGap() const { return dark_ ? QColor(QRgb(0x2f4f2f)) : QColor(QRgb(0xd8f0d8)); }

} // namespace tmmu::views
