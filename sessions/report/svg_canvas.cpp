#include "report/svg_canvas.h"

#include "report/text_util.h"

#include <fmt/format.h>

namespace tmmu::sessions::report {
namespace {

std::string points(const std::vector<Point>& pts) {
    std::string out;
    out.reserve(pts.size() * 12);
    for (const Point& p : pts) {
        if (!out.empty()) out += ' ';
        out += coord(p.x) + ',' + coord(p.y);
    }
    return out;
}

} // namespace

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {}

void SvgCanvas::rect(const Box& b, Rgb fill, std::optional<Rgb> stroke) {
    body_ += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}")", coord(b.x),
                         coord(b.y), coord(b.w), coord(b.h), css_color(fill));
    if (stroke) body_ += fmt::format(R"( stroke="{}" stroke-width="0.5")", css_color(*stroke));
    body_ += "/>\n";
}

void SvgCanvas::line(Point a, Point b, Rgb stroke, double width, bool dashed) {
    body_ += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}")",
                         coord(a.x), coord(a.y), coord(b.x), coord(b.y), css_color(stroke),
                         coord(width));
    if (dashed) body_ += R"( stroke-dasharray="4 3")";
    body_ += "/>\n";
}

void SvgCanvas::polyline(const std::vector<Point>& pts, Rgb stroke, double width) {
    if (pts.size() < 2) return;
    body_ += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="{}" points="{}"/>)",
                         css_color(stroke), coord(width), points(pts));
    body_ += '\n';
}

void SvgCanvas::polygon(const std::vector<Point>& pts, Rgb fill) {
    if (pts.size() < 3) return;
    body_ += fmt::format(R"(<polygon fill="{}" points="{}"/>)", css_color(fill), points(pts));
    body_ += '\n';
}

void SvgCanvas::text(Point at, std::string_view s, double size, Rgb color, Anchor anchor,
                     bool bold) {
    const char* a = anchor == Anchor::Start ? "start" : anchor == Anchor::Middle ? "middle" : "end";
    body_ += fmt::format(R"(<text x="{}" y="{}" font-size="{}" fill="{}" text-anchor="{}")",
                         coord(at.x), coord(at.y), coord(size), css_color(color), a);
    if (bold) body_ += R"( font-weight="bold")";
    body_ += '>' + xml_escape(s) + "</text>\n";
}

std::string SvgCanvas::finish() const {
    return fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
        R"(font-family="Helvetica, Arial, sans-serif">)"
        "\n{2}</svg>\n",
        coord(width_), coord(height_), body_);
}

} // namespace tmmu::sessions::report
