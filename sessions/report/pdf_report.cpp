// The PDF report: the HTML report's content on A4 pages (text flowed top to bottom, charts as
// vector paths, the tensor table cut to the largest kPdfTensorRows).
#include "report/charts.h"
#include "report/formats.h"
#include "report/pdf_document.h"
#include "report/report_data.h"

#include <fmt/format.h>

namespace tmmu::sessions::report {
namespace {

constexpr double kLeft = 40, kTop = 48, kBottom = PdfDocument::kHeight - 48;
constexpr double kWidth = PdfDocument::kWidth - 2 * kLeft;
constexpr double kMemoryHeight = 170, kLayoutHeight = 210;

// The longest prefix of s (whole UTF-8 characters) that fits in width, with "..." when cut.
std::string fit(const std::string& s, double width, double size) {
    if (text_width(s, size) <= width) return s;
    std::string cut = s;
    while (!cut.empty() && text_width(cut + "...", size) > width) {
        cut.pop_back();
        while (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0xC0) == 0x80)
            cut.pop_back();
        if (!cut.empty() && static_cast<unsigned char>(cut.back()) >= 0xC0) cut.pop_back();
    }
    return cut + "...";
}

// Words greedily packed into lines of at most width; a word too long for a line is cut.
std::vector<std::string> wrap(const std::string& text, double width, double size) {
    std::vector<std::string> lines;
    std::string line;
    size_t i = 0;
    while (i <= text.size()) {
        size_t j = text.find_first_of(" \n", i);
        if (j == std::string::npos) j = text.size();
        std::string word = text.substr(i, j - i);
        std::string cand = line;
        if (!cand.empty()) cand += ' ';
        cand += word;
        if (!line.empty() && text_width(cand, size) > width) {
            lines.push_back(line);
            cand = word;
        }
        line = fit(cand, width, size);
        if (j < text.size() && text[j] == '\n') lines.push_back(line), line.clear();
        i = j + 1;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

class Flow {
  public:
    explicit Flow(PdfDocument& doc) : doc_(doc) {}

    void need(double h) {
        if (y_ + h <= kBottom) return;
        doc_.new_page();
        y_ = kTop;
    }
    // `keep`: height of what follows that must share the heading's page.
    void heading(const std::string& text, double size, double keep = 40) {
        need(size * 2.4 + keep);
        y_ += size * 1.2;
        doc_.page().text({kLeft, y_}, text, size, kInk, Anchor::Start, true);
        y_ += size * 0.6;
    }
    void paragraph(const std::string& text, double size, Rgb color) {
        for (const std::string& line : wrap(text, kWidth, size)) {
            need(size * 1.35);
            y_ += size * 1.35;
            doc_.page().text({kLeft, y_}, line, size, color);
        }
        y_ += size * 0.4;
    }
    void facts(const std::vector<Fact>& facts) {
        const double size = 8.5, key_w = 105;
        for (const Fact& f : facts) {
            std::vector<std::string> lines = wrap(f.value, kWidth - key_w, size);
            need(size * 1.3 * double(lines.size()));
            doc_.page().text({kLeft, y_ + size * 1.3}, f.key, size, kAxisGrey);
            for (const std::string& line : lines) {
                y_ += size * 1.3;
                doc_.page().text({kLeft + key_w, y_}, line, size, kInk);
            }
        }
        y_ += 4;
    }
    void table(const Table& t, const std::vector<double>& widths, double size) {
        const double row_h = size * 1.45;
        auto row = [&](const std::vector<std::string>& cells, bool header) {
            need(row_h);
            y_ += row_h;
            double x = kLeft;
            for (size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
                std::string s = fit(cells[c], widths[c] - 4, size);
                if (t.numeric[c])
                    doc_.page().text({x + widths[c] - 2, y_}, s, size, kInk, Anchor::End, header);
                else
                    doc_.page().text({x, y_}, s, size, kInk, Anchor::Start, header);
                x += widths[c];
            }
            if (header) doc_.page().line({kLeft, y_ + 3}, {kLeft + kWidth, y_ + 3}, kAxisGrey, 0.5);
        };
        need(2 * row_h); // never a header alone at the foot of a page
        row(t.headers, true);
        for (const auto& r : t.rows) {
            if (y_ + row_h > kBottom) { // a new page: repeat the header first
                need(row_h);
                row(t.headers, true);
            }
            row(r, false);
        }
        y_ += 6;
    }
    template <class Draw>
    void chart(const Plan& p, size_t arena, double h, Draw draw) {
        need(h + 6);
        draw(doc_.page(), p, arena, Box{kLeft, y_ + 4, kWidth, h});
        y_ += h + 8;
    }

  private:
    PdfDocument& doc_;
    double y_ = kTop;
};

} // namespace

std::string pdf_report(const Session& s) {
    ReportData d = report_data(s, kPdfTensorRows);
    const Plan& p = checked_plan(s);
    PdfDocument doc;
    Flow f(doc);
    f.heading(d.heading, 16);
    if (!d.altered.empty()) f.paragraph(d.altered, 9, kWarningColor);
    f.heading("Session and inputs", 12);
    f.facts(d.facts);
    f.heading("Metrics per arena", 12);
    f.table(d.metrics, {56, 52, 50, 50, 36, 28, 34, 34, 34, 32, 58, 51}, 7.5);
    std::vector<size_t> arenas = charted_arenas(p);
    f.heading("Memory over time", 12, arenas.empty() ? 40 : kMemoryHeight + 8);
    for (size_t a : arenas)
        f.chart(p, a, kMemoryHeight, draw_memory_panel);
    f.heading("Arena layout", 12, arenas.empty() ? 40 : kLayoutHeight + 8);
    for (size_t a : arenas)
        f.chart(p, a, kLayoutHeight, draw_layout_panel);
    if (arenas.empty()) f.paragraph("No arena holds any buffer.", 9, kAxisGrey);
    f.heading("Plan notes", 12);
    if (d.plan_notes.empty()) f.paragraph("None.", 9, kAxisGrey);
    for (const std::string& n : d.plan_notes)
        f.paragraph("- " + n, 8.5, kInk);
    f.heading("Tensors", 12);
    if (d.tensors.rows.size() < d.tensors_total)
        f.paragraph(fmt::format("The {} largest of {} tensors; {} left out (the CSV export lists "
                                "them all).",
                                d.tensors.rows.size(), d.tensors_total,
                                d.tensors_total - d.tensors.rows.size()),
                    8.5, kAxisGrey);
    f.table(d.tensors, {95, 80, 58, 50, 28, 62, 45, 27, 70}, 7);
    std::string footer = fmt::format(
        "tmmu {}plan {}", s.summary.id > 0 ? fmt::format("session {} - ", s.summary.id) : "",
        s.summary.plan_hash.substr(0, 16));
    return doc.finish(d.heading, footer);
}

} // namespace tmmu::sessions::report
