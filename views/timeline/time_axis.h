#pragma once
// A zoomable, pannable linear mapping between a value domain (time steps, rows or bytes) and
// pixels along one screen axis. Qt-free so geometry can be tested without a widget.
//
// Invariants after every call: domainLo <= visibleLo < visibleHi <= domainHi and
// minSpan <= visibleHi - visibleLo (unless the domain itself is narrower than minSpan).
#include <cstdint>

namespace tmmu::views {

class TimeAxis {
  public:
    // Resets the visible range to the whole domain. hi <= lo is widened to [lo, lo + 1).
    void setDomain(double lo, double hi);
    // Pixel length of the axis (widget width or height); keeps the visible range.
    void setLength(double px);
    // Smallest visible span zooming may reach (clamped to the domain width).
    void setMinSpan(double span);
    // Inverted axes grow towards pixel 0 (offset 0 at the bottom of a plot).
    void setInverted(bool inverted) { inverted_ = inverted; }
    // Shows [lo, hi) as far as the clamps allow.
    void setVisible(double lo, double hi);
    // Shows [lo, lo + span) as far as the clamps allow. A window this axis (or one with the same
    // domain and minimum span) already reported is applied bit-exactly, so an axis can follow
    // another without its scale drifting.
    void setWindow(double lo, double span) { clampVisible(lo, span); }
    void reset() { setVisible(domainLo_, domainHi_); }

    double domainLo() const { return domainLo_; }
    double domainHi() const { return domainHi_; }
    double visibleLo() const { return lo_; }
    double visibleHi() const { return lo_ + span_; }
    double span() const { return span_; }
    double length() const { return length_; }
    double minSpan() const { return minSpan_; }
    bool inverted() const { return inverted_; }
    bool showsWholeDomain() const { return lo_ <= domainLo_ && visibleHi() >= domainHi_; }
    // Pixels per domain unit. Pans keep it bit-identical (the span is stored, not derived), so
    // geometry cached for a scale stays valid while panning.
    double scale() const { return length_ / span_; }

    // Pixel position of value t measured from the axis start (left or top edge).
    double xOf(double t) const;
    // Inverse of xOf (continuous).
    double timeAt(double x) const;
    // Integer step under pixel x: floor(timeAt(x)) clamped to [domainLo, domainHi - 1].
    uint64_t stepAt(double x) const;

    // Zooms by factor (> 1 zooms in) keeping the value under pixel x fixed, unless a clamp
    // (domain edge or minimum span) forbids it.
    void zoomAround(double x, double factor);
    // Scrolls by dx pixels in screen direction: the value at pixel dx moves to pixel 0 (so a
    // drag by d pixels is pan(-d) on either orientation); clamped at the domain edges.
    void pan(double dx);

  private:
    void clampVisible(double lo, double span);

    double domainLo_ = 0;
    double domainHi_ = 1;
    double lo_ = 0;
    double span_ = 1;
    double length_ = 1;
    double minSpan_ = 1e-9;
    bool inverted_ = false;
};

// "Nice" tick spacing (1, 2 or 5 times a power of ten) so that ticks are at least minPx apart.
double niceTickStep(double span, double lengthPx, double minPx);
// Tick spacing in bytes: a power of two so labels read as whole KiB/MiB/GiB.
double niceByteStep(double span, double lengthPx, double minPx);

} // namespace tmmu::views
