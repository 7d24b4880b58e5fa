#pragma once
// The drawing surface the report charts are drawn on, once, for both SVG (HTML reports) and PDF
// content streams. Coordinates are in the output's units (CSS px or PDF points) with the origin
// at the top left and y growing downwards, as in SVG; the PDF canvas flips them.
#include "report/palette.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tmmu::sessions::report {

struct Point {
    double x = 0, y = 0;
};

struct Box {
    double x = 0, y = 0, w = 0, h = 0;
};

enum class Anchor { Start, Middle, End };

class Canvas {
  public:
    virtual ~Canvas() = default;
    virtual void rect(const Box& b, Rgb fill, std::optional<Rgb> stroke = std::nullopt) = 0;
    virtual void line(Point a, Point b, Rgb stroke, double width, bool dashed = false) = 0;
    virtual void polyline(const std::vector<Point>& pts, Rgb stroke, double width) = 0;
    virtual void polygon(const std::vector<Point>& pts, Rgb fill) = 0; // closed, filled
    // Text's baseline starts (Start), is centred (Middle) or ends (End) at `at`. UTF-8.
    virtual void text(Point at, std::string_view s, double size, Rgb color,
                      Anchor anchor = Anchor::Start, bool bold = false) = 0;
};

// Width of text set in Helvetica (or Helvetica-Bold) at `size` units, from the AFM metrics
// (pdf_document.cpp holds the tables). Charts use it to lay out labels for either output.
double text_width(std::string_view utf8, double size, bool bold = false);

} // namespace tmmu::sessions::report
