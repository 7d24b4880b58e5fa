#pragma once
// Canvas that writes an inline <svg> element (well-formed XML, no scripts, no external refs).
#include "report/canvas.h"

#include <string>

namespace tmmu::sessions::report {

class SvgCanvas : public Canvas {
  public:
    SvgCanvas(double width, double height);
    void rect(const Box& b, Rgb fill, std::optional<Rgb> stroke = std::nullopt) override;
    void line(Point a, Point b, Rgb stroke, double width, bool dashed = false) override;
    void polyline(const std::vector<Point>& pts, Rgb stroke, double width) override;
    void polygon(const std::vector<Point>& pts, Rgb fill) override;
    void text(Point at, std::string_view s, double size, Rgb color, Anchor anchor = Anchor::Start,
              bool bold = false) override;
    // The finished element, "<svg ...>...</svg>".
    std::string finish() const;

  private:
    double width_, height_;
    std::string body_;
};

} // namespace tmmu::sessions::report
