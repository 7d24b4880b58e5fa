// The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external
// resources), written as well-formed XHTML-style markup so that XML tools can read it too.
#include "report/charts.h"
#include "report/formats.h"
#include "report/report_data.h"
#include "report/svg_canvas.h"
#include "report/text_util.h"

#include <fmt/format.h>

namespace tmmu::sessions::report {
namespace {

constexpr double kChartWidth = 900;
constexpr double kMemoryHeight = 220;
constexpr double kLayoutHeight = 280;

// The page's colours are the product palette's, as in the charts and the studio.
std::string style_sheet() {
    return fmt::format(R"(
body {{ font-family: Helvetica, Arial, sans-serif; font-size: 14px; color: {ink};
       max-width: 960px; margin: 24px auto; padding: 0 16px; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 17px; margin-top: 28px; border-bottom: 1px solid {rule}; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ padding: 3px 8px; border-bottom: 1px solid {rule}; text-align: left; vertical-align: top; }}
th {{ background: {shade}; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
table.facts th {{ background: none; font-weight: normal; color: {muted}; white-space: nowrap; }}
code {{ font-size: 12px; word-break: break-all; }}
.altered {{ background: {warning_fill}; border: 1px solid {warning}; color: {warning};
           padding: 8px 12px; }}
.swatch {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px; }}
figure {{ margin: 12px 0; }}
svg {{ max-width: 100%; height: auto; }}
.note {{ color: {muted}; }}
)",
                       fmt::arg("ink", css_color(kInk)), fmt::arg("rule", css_color(kGridLine)),
                       fmt::arg("shade", css_color(blend(kGridLine, kPaper, 0.5))),
                       fmt::arg("muted", css_color(kAxisGrey)),
                       fmt::arg("warning", css_color(kWarningColor)),
                       fmt::arg("warning_fill", css_color(blend(kWarningColor, kPaper, 0.9))));
}

std::string esc(std::string_view s) {
    return xml_escape(s);
}

std::string facts_html(const std::vector<Fact>& facts) {
    std::string out = "<table class=\"facts\">\n";
    for (const Fact& f : facts) {
        bool hash = f.key.find("hash") != std::string::npos;
        out += fmt::format("<tr><th>{}</th><td>{}{}{}</td></tr>\n", esc(f.key),
                           hash ? "<code>" : "", esc(f.value), hash ? "</code>" : "");
    }
    return out + "</table>\n";
}

std::string table_html(const Table& t, int role_column) {
    std::string out = "<table>\n<tr>";
    for (size_t c = 0; c < t.headers.size(); ++c)
        out +=
            fmt::format("<th{}>{}</th>", t.numeric[c] ? " class=\"num\"" : "", esc(t.headers[c]));
    out += "</tr>\n";
    for (const auto& row : t.rows) {
        out += "<tr>";
        for (size_t c = 0; c < row.size(); ++c) {
            std::string swatch;
            if (int(c) == role_column)
                if (auto r = parse_role(row[c]))
                    swatch = fmt::format(R"(<span class="swatch" style="background:{}"></span>)",
                                         css_color(role_color(*r)));
            out += fmt::format("<td{}>{}{}</td>", t.numeric[c] ? " class=\"num\"" : "", swatch,
                               esc(row[c]));
        }
        out += "</tr>\n";
    }
    return out + "</table>\n";
}

template <class Draw>
std::string figures(const Plan& p, double height, Draw draw) {
    std::string out;
    for (size_t a : charted_arenas(p)) {
        SvgCanvas svg(kChartWidth, height);
        draw(svg, p, a, Box{6, 2, kChartWidth - 12, height - 4});
        out += "<figure>\n" + svg.finish() + "</figure>\n";
    }
    if (out.empty()) out = "<p class=\"note\">No arena holds any buffer.</p>\n";
    return out;
}

} // namespace

std::string html_report(const Session& s) {
    ReportData d = report_data(s, kHtmlTensorRows);
    const Plan& p = checked_plan(s);
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
    out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(d.heading),
                       style_sheet());
    out += fmt::format("<h1>{}</h1>\n", esc(d.heading));
    if (!d.altered.empty()) out += fmt::format("<p class=\"altered\">{}</p>\n", esc(d.altered));
    out += "<h2>Session and inputs</h2>\n" + facts_html(d.facts);
    out += "<h2>Metrics per arena</h2>\n" + table_html(d.metrics, -1);
    out += "<h2>Memory over time</h2>\n" + figures(p, kMemoryHeight, draw_memory_panel);
    out += "<h2>Arena layout</h2>\n" + figures(p, kLayoutHeight, draw_layout_panel);
    out += "<h2>Plan notes</h2>\n";
    if (d.plan_notes.empty())
        out += "<p class=\"note\">None.</p>\n";
    else {
        out += "<ul>\n";
        for (const std::string& n : d.plan_notes)
            out += "<li>" + esc(n) + "</li>\n";
        out += "</ul>\n";
    }
    out += "<h2>Tensors</h2>\n";
    if (d.tensors.rows.size() < d.tensors_total)
        out += fmt::format("<p class=\"note\">The {} largest of {} tensors; {} left out (the CSV "
                           "export lists them all).</p>\n",
                           d.tensors.rows.size(), d.tensors_total,
                           d.tensors_total - d.tensors.rows.size());
    out += table_html(d.tensors, 2);
    out += "</body>\n</html>\n";
    return out;
}

} // namespace tmmu::sessions::report
