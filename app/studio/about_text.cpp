#include "about_text.h"

#include "backend_registry.h"
#include "build_info.h"
#include "core/units.h"

#include <QCoreApplication>

namespace tmmu::studio {
namespace {

QString html(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

QString tr(const char* text) {
    return QCoreApplication::translate("About", text);
}

QString optionsList() {
    QString items;
    for (const app::BuildOption& o : app::build_options())
        items += o.built ? tr("<li>%1: built</li>").arg(html(o.name))
                         : tr("<li>%1: not built (%2)</li>").arg(html(o.name), html(o.why_not));
    return QStringLiteral("<ul>%1</ul>").arg(items);
}

QString devicesList() {
    QString items;
    for (const app::BackendStatus& b : app::backend_statuses()) {
        if (!b.built) continue; // the build options say why
        QString devices;
        for (const app::BackendDevice& d : b.devices)
            devices += QStringLiteral("<br>&nbsp;&nbsp;%1").arg(html(d.line));
        const QString version = b.version.empty() ? QString() : " (" + html(b.version) + ")";
        items += b.available ? tr("<li><b>%1</b>%2: %3%4</li>")
                                   .arg(html(b.label), version,
                                        html(count_of(b.devices.size(), "device")), devices)
                             : tr("<li><b>%1</b>%2: unavailable, %3</li>")
                                   .arg(html(b.label), version, html(b.unavailable_reason));
    }
    return QStringLiteral("<ul>%1</ul>").arg(items);
}

} // namespace

QString aboutText() {
    return tr("<h3>TMMU Studio %1</h3><p>A debugger for how machine-learning models use memory: "
              "liveness, slot colouring and arena offsets of every tensor, checked by an "
              "independent validator.</p><p>Qt %2, libtmmu %1</p><p><b>Build</b></p>%3"
              "<p><b>Devices</b></p>%4")
        .arg(QStringLiteral(TMMU_VERSION), QString::fromLatin1(qVersion()), optionsList(),
             devicesList());
}

} // namespace tmmu::studio
