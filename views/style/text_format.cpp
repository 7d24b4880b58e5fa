#include "style/text_format.h"

#include "core/units.h"

#include <cmath>

namespace tmmu::views {

QString humanBytes(uint64_t bytes) {
    return QString::fromStdString(format_bytes(bytes));
}

QString tickLabel(double v, double step) {
    double a = std::fabs(v);
    struct Suffix {
        double div;
        const char* text;
    };
    for (Suffix sfx : {Suffix{1e9, "G"}, Suffix{1e6, "M"}, Suffix{1e3, "k"}}) {
        if (a < 10 * sfx.div) continue;
        double rel = step / sfx.div;
        int decimals = rel >= 1 ? 0 : int(std::ceil(-std::log10(rel) - 1e-9));
        if (decimals > 2) break;
        QString t = QString::number(v / sfx.div, 'f', decimals);
        if (t.contains('.')) {
            while (t.endsWith('0'))
                t.chop(1);
            if (t.endsWith('.')) t.chop(1);
        }
        return t + sfx.text;
    }
    return groupedNumber(uint64_t(std::llround(std::max(v, 0.0))));
}

QString axisLabelFormat(double step) {
    const int decimals =
        step > 0 && step < 1 ? std::min(6, int(std::ceil(-std::log10(step) - 1e-9))) : 0;
    return QStringLiteral("%.%1f").arg(decimals);
}

QString byteTickLabel(uint64_t v, uint64_t step, uint64_t top) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (u < 5 && (top >> (10 * (u + 1))) > 0)
        ++u;
    step = std::max<uint64_t>(step, 1);
    // Decimals that show multiples of step exactly in unit u: step / unit = 2^-d needs d
    // (step is a power of two); 3 stands for "too many".
    auto decimalsFor = [&](int unit) {
        uint64_t scale = uint64_t(1) << (10 * unit);
        int d = 0;
        for (uint64_t s = step; s < scale && d < 3; s *= 2)
            ++d;
        return d;
    };
    while (u > 0 && decimalsFor(u) > 2)
        --u;
    double value = double(v) / double(uint64_t(1) << (10 * u));
    QString text = QString::number(value, 'f', decimalsFor(u));
    if (text.contains('.')) {
        while (text.endsWith('0'))
            text.chop(1);
        if (text.endsWith('.')) text.chop(1);
    }
    return text + ' ' + units[u];
}

QString groupedNumber(uint64_t v) {
    QString digits = QString::number(v);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(i, ',');
    return digits;
}

QString counted(uint64_t n, const char* one, const char* many) {
    return QStringLiteral("%1 %2").arg(groupedNumber(n), QLatin1String(n == 1 ? one : many));
}

QString shapeText(const std::vector<int64_t>& shape, const std::vector<std::string>& dimNames) {
    if (shape.empty()) return QStringLiteral("scalar");
    const bool named = dimNames.size() == shape.size();
    QString s;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += QChar(0x00D7); // multiplication sign
        if (named && !dimNames[i].empty()) s += QString::fromStdString(dimNames[i]) + '=';
        s += QString::number(shape[i]);
    }
    return s;
}

} // namespace tmmu::views
