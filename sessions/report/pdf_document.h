#pragma once
// A minimal PDF 1.4 writer: A4 pages whose content streams are drawn through the Canvas
// interface, the base-14 Helvetica fonts in WinAnsiEncoding (no embedded fonts), uncompressed
// streams and an exact cross-reference table. Output is deterministic: no dates, no IDs.
#include "report/canvas.h"

#include <deque>
#include <string>
#include <vector>

namespace tmmu::sessions::report {

class PdfCanvas : public Canvas {
  public:
    // Appends operators to `content`; y is flipped against page_height.
    PdfCanvas(std::string& content, double page_height) : out_(&content), h_(page_height) {}
    void retarget(std::string& content) { out_ = &content; }
    void rect(const Box& b, Rgb fill, std::optional<Rgb> stroke = std::nullopt) override;
    void line(Point a, Point b, Rgb stroke, double width, bool dashed = false) override;
    void polyline(const std::vector<Point>& pts, Rgb stroke, double width) override;
    void polygon(const std::vector<Point>& pts, Rgb fill) override;
    void text(Point at, std::string_view s, double size, Rgb color, Anchor anchor = Anchor::Start,
              bool bold = false) override;

  private:
    void path(const std::vector<Point>& pts);
    std::string* out_;
    double h_;
};

class PdfDocument {
  public:
    static constexpr double kWidth = 595.28;  // A4, points
    static constexpr double kHeight = 841.89; // A4, points

    PdfDocument();
    PdfCanvas& page() { return canvas_; } // the last page
    void new_page();
    size_t page_count() const { return pages_.size(); }
    // The file's bytes. `footer` is printed at the bottom of every page with "page i of n".
    std::string finish(std::string_view title, std::string_view footer) const;

  private:
    std::deque<std::string> pages_; // content streams; deque: canvas_ points into it
    PdfCanvas canvas_;
};

} // namespace tmmu::sessions::report
