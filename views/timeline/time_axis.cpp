#include "timeline/time_axis.h"

#include "core/assert.h"

#include <algorithm>
#include <cmath>

namespace tmmu::views {

void TimeAxis::setDomain(double lo, double hi) {
    if (!(hi > lo)) hi = lo + 1;
    domainLo_ = lo;
    domainHi_ = hi;
    clampVisible(lo, hi - lo);
}

void TimeAxis::setLength(double px) {
    length_ = std::max(px, 1.0);
}

void TimeAxis::setMinSpan(double span) {
    minSpan_ = std::max(span, 1e-9);
    clampVisible(lo_, span_);
}

void TimeAxis::setVisible(double lo, double hi) {
    clampVisible(lo, hi - lo);
}

void TimeAxis::clampVisible(double lo, double span) {
    double domain = domainHi_ - domainLo_;
    double s = std::clamp(span, std::min(minSpan_, domain), domain);
    if (!(s > 0)) s = domain; // NaN or degenerate input falls back to the whole domain
    if (!std::isfinite(lo)) lo = domainLo_;
    lo_ = std::clamp(lo, domainLo_, domainHi_ - s);
    span_ = s;
    TMMU_ASSERT(domainLo_ <= lo_ && lo_ <= domainHi_ - span_ && span_ > 0 &&
                    span_ >= std::min(minSpan_, domain),
                "the visible range stays inside the domain and at least minSpan wide");
}

double TimeAxis::xOf(double t) const {
    return inverted_ ? (visibleHi() - t) * scale() : (t - lo_) * scale();
}

double TimeAxis::timeAt(double x) const {
    return inverted_ ? visibleHi() - x / scale() : lo_ + x / scale();
}

uint64_t TimeAxis::stepAt(double x) const {
    double t = std::floor(timeAt(x));
    t = std::clamp(t, domainLo_, std::max(domainLo_, domainHi_ - 1));
    return t <= 0 ? 0 : uint64_t(t);
}

void TimeAxis::zoomAround(double x, double factor) {
    if (!(factor > 0) || !std::isfinite(factor)) return;
    double anchor = timeAt(x);
    double domain = domainHi_ - domainLo_;
    double s = std::clamp(span_ / factor, std::min(minSpan_, domain), domain);
    // Fraction of the span that lies before the anchor in value order.
    double before = inverted_ ? 1.0 - x / length_ : x / length_;
    clampVisible(anchor - before * s, s);
}

void TimeAxis::pan(double dx) {
    clampVisible(lo_ + (inverted_ ? -dx : dx) / scale(), span_);
}

double niceTickStep(double span, double lengthPx, double minPx) {
    if (!(span > 0) || !(lengthPx > 0)) return 1;
    double raw = span * minPx / lengthPx;
    double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

double niceByteStep(double span, double lengthPx, double minPx) {
    if (!(span > 0) || !(lengthPx > 0)) return 1;
    double raw = span * minPx / lengthPx;
    return std::max(1.0, std::exp2(std::ceil(std::log2(raw))));
}

} // namespace tmmu::views
