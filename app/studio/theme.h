#pragma once
// The studio's colour theme: the desktop's own (System), or the Fusion style with a light or dark
// palette of ours, chosen in View > Theme (saved) or with --theme (this run only). Every view
// follows the application palette (views::ViewPalette), so switching repaints them in place.
#include <QString>
#include <QStringList>

#include <optional>

namespace tmmu::studio {

enum class Theme { System, Light, Dark };

// "system", "light", "dark".
QString theme_name(Theme theme);
std::optional<Theme> theme_from_name(const QString& name);
QStringList theme_names();

// Applies theme to the running QApplication. The desktop's style and palette are captured at
// the first call, so System restores them after Light or Dark.
void apply_theme(Theme theme);

} // namespace tmmu::studio
