#include "theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace tmmu::studio {
namespace {

struct Desktop {
    QString style;
    QPalette palette;
};

// The desktop's look before any theme of ours replaced it.
const Desktop& desktop() {
    static const Desktop captured{QApplication::style()->name(), QApplication::palette()};
    return captured;
}

QPalette dark_palette() {
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe0, 0xe0, 0xe0);
    const QColor disabled(0x80, 0x80, 0x80), highlight(0x3d, 0x7a, 0xc4);
    QPalette p;
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, window.lighter(150));
    p.setColor(QPalette::Midlight, window.lighter(125));
    p.setColor(QPalette::Mid, window.darker(120));
    p.setColor(QPalette::Dark, window.darker(160));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb4, 0x8c, 0xff));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Highlight, window.lighter(130));
    return p;
}

} // namespace

QString theme_name(Theme theme) {
    switch (theme) {
    case Theme::System:
        return QStringLiteral("system");
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    }
    return {};
}

std::optional<Theme> theme_from_name(const QString& name) {
    for (Theme t : {Theme::System, Theme::Light, Theme::Dark})
        if (theme_name(t) == name) return t;
    return std::nullopt;
}

QStringList theme_names() {
    return {theme_name(Theme::System), theme_name(Theme::Light), theme_name(Theme::Dark)};
}

void apply_theme(Theme theme) {
    const Desktop& original = desktop();
    // Setting a style re-polishes every widget: only when it changes.
    auto use_style = [](const QString& name) {
        if (QApplication::style()->name().compare(name, Qt::CaseInsensitive) != 0)
            QApplication::setStyle(QStyleFactory::create(name));
    };
    if (theme == Theme::System) {
        use_style(original.style);
        QApplication::setPalette(original.palette);
        return;
    }
    use_style(QStringLiteral("Fusion"));
    QApplication::setPalette(theme == Theme::Dark ? dark_palette()
                                                  : QApplication::style()->standardPalette());
}

} // namespace tmmu::studio
