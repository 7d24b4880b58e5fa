#include "report/pdf_document.h"

#include "report/text_util.h"

#include <array>
#include <fmt/format.h>

namespace tmmu::sessions::report {
namespace {

// Helvetica advance widths (1/1000 em) for ASCII 32..126, from the Adobe AFM file.
constexpr std::array<uint16_t, 95> kHelvetica = {
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333,  278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667,  611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278,  556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500,  500, 334, 260, 334, 584};

// The WinAnsi byte for a code point: ASCII and Latin-1 map to themselves, a few typographic
// characters to their cp1252 slots, everything else to '?'.
unsigned char win_ansi(char32_t cp) {
    if ((cp >= 0x20 && cp < 0x7F) || (cp >= 0xA0 && cp <= 0xFF))
        return static_cast<unsigned char>(cp);
    switch (cp) {
    case 0x2013:
        return 0x96;
    case 0x2014:
        return 0x97;
    case 0x2018:
        return 0x91;
    case 0x2019:
        return 0x92;
    case 0x201C:
        return 0x93;
    case 0x201D:
        return 0x94;
    case 0x2022:
        return 0x95;
    case 0x2026:
        return 0x85;
    case 0x20AC:
        return 0x80;
    default:
        return '?';
    }
}

double glyph_width(unsigned char b) {
    if (b >= 32 && b < 127) return kHelvetica[b - 32];
    if (b == 0x97) return 1000;
    if (b == 0x95) return 350;
    return 556; // Latin-1 letters are mostly this wide; close enough for layout
}

std::string color(Rgb c, const char* op) {
    return fmt::format("{} {} {} {}\n", coord(c.r / 255.0), coord(c.g / 255.0), coord(c.b / 255.0),
                       op);
}

// A PDF literal string body: WinAnsi bytes, ( ) \ escaped, bytes >= 0x80 as octal escapes so
// the file stays 7-bit.
std::string pdf_string(std::string_view utf8) {
    std::string out;
    for_each_code_point(utf8, [&](char32_t cp) {
        unsigned char b = win_ansi(cp);
        if (b == '(' || b == ')' || b == '\\')
            out += '\\', out += char(b);
        else if (b >= 0x80)
            out += fmt::format("\\{:03o}", b);
        else
            out += char(b);
    });
    return out;
}

} // namespace

double text_width(std::string_view utf8, double size, bool bold) {
    double units = 0;
    for_each_code_point(utf8, [&](char32_t cp) { units += glyph_width(win_ansi(cp)); });
    // Helvetica-Bold is on average about 6% wider; only used for left-aligned headings.
    return units * size / 1000.0 * (bold ? 1.06 : 1.0);
}

void PdfCanvas::path(const std::vector<Point>& pts) {
    for (size_t i = 0; i < pts.size(); ++i)
        *out_ += fmt::format("{} {} {}\n", coord(pts[i].x), coord(h_ - pts[i].y), i ? "l" : "m");
}

void PdfCanvas::rect(const Box& b, Rgb fill, std::optional<Rgb> stroke) {
    *out_ += color(fill, "rg");
    std::string re =
        fmt::format("{} {} {} {} re", coord(b.x), coord(h_ - b.y - b.h), coord(b.w), coord(b.h));
    if (stroke)
        *out_ += color(*stroke, "RG") + "0.5 w\n" + re + " B\n";
    else
        *out_ += re + " f\n";
}

void PdfCanvas::line(Point a, Point b, Rgb stroke, double width, bool dashed) {
    *out_ += color(stroke, "RG") + coord(width) + " w\n";
    if (dashed) *out_ += "[4 3] 0 d\n";
    path({a, b});
    *out_ += "S\n";
    if (dashed) *out_ += "[] 0 d\n";
}

void PdfCanvas::polyline(const std::vector<Point>& pts, Rgb stroke, double width) {
    if (pts.size() < 2) return;
    *out_ += color(stroke, "RG") + coord(width) + " w\n";
    path(pts);
    *out_ += "S\n";
}

void PdfCanvas::polygon(const std::vector<Point>& pts, Rgb fill) {
    if (pts.size() < 3) return;
    *out_ += color(fill, "rg");
    path(pts);
    *out_ += "h f\n";
}

void PdfCanvas::text(Point at, std::string_view s, double size, Rgb c, Anchor anchor, bool bold) {
    double x = at.x;
    if (anchor != Anchor::Start) {
        double w = text_width(s, size, bold);
        x -= anchor == Anchor::Middle ? w / 2 : w;
    }
    *out_ += color(c, "rg");
    *out_ += fmt::format("BT /{} {} Tf {} {} Td ({}) Tj ET\n", bold ? "F2" : "F1", coord(size),
                         coord(x), coord(h_ - at.y), pdf_string(s));
}

PdfDocument::PdfDocument() : pages_(1), canvas_(pages_.back(), kHeight) {}

void PdfDocument::new_page() {
    pages_.emplace_back();
    canvas_.retarget(pages_.back());
}

std::string PdfDocument::finish(std::string_view title, std::string_view footer) const {
    // Objects: 1 catalog, 2 page tree, 3 Helvetica, 4 Helvetica-Bold, 5 info, then per page
    // i a page object (6 + 2i) and its content stream (7 + 2i).
    std::vector<std::string> objects;
    std::string kids;
    for (size_t i = 0; i < pages_.size(); ++i)
        kids += fmt::format("{}{} 0 R", i ? " " : "", 6 + 2 * i);
    objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
    objects.push_back(fmt::format("<< /Type /Pages /Kids [{}] /Count {} >>", kids, pages_.size()));
    for (const char* font : {"Helvetica", "Helvetica-Bold"})
        objects.push_back(fmt::format(
            "<< /Type /Font /Subtype /Type1 /BaseFont /{} /Encoding /WinAnsiEncoding >>", font));
    objects.push_back(fmt::format("<< /Title ({}) /Producer (tmmu) >>", pdf_string(title)));
    for (size_t i = 0; i < pages_.size(); ++i) {
        objects.push_back(fmt::format(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {} {}] /Resources << /Font << /F1 3 0 "
            "R /F2 4 0 R >> >> /Contents {} 0 R >>",
            coord(kWidth), coord(kHeight), 7 + 2 * i));
        std::string content = pages_[i];
        PdfCanvas foot(content, kHeight);
        foot.text({40, kHeight - 24}, footer, 7, kAxisGrey);
        foot.text({kWidth - 40, kHeight - 24}, fmt::format("page {} of {}", i + 1, pages_.size()),
                  7, kAxisGrey, Anchor::End);
        objects.push_back(
            fmt::format("<< /Length {} >>\nstream\n{}endstream", content.size(), content));
    }
    std::string out = "%PDF-1.4\n";
    std::vector<size_t> offsets;
    for (size_t i = 0; i < objects.size(); ++i) {
        offsets.push_back(out.size());
        out += fmt::format("{} 0 obj\n{}\nendobj\n", i + 1, objects[i]);
    }
    size_t xref = out.size();
    out += fmt::format("xref\n0 {}\n0000000000 65535 f \n", objects.size() + 1);
    for (size_t off : offsets)
        out += fmt::format("{:010} 00000 n \n", off);
    out += fmt::format("trailer\n<< /Size {} /Root 1 0 R /Info 5 0 R >>\nstartxref\n{}\n%%EOF\n",
                       objects.size() + 1, xref);
    return out;
}

} // namespace tmmu::sessions::report
