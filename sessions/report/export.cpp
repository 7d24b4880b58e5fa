#include "report/export.h"

#include "report/formats.h"
#include "report/report_data.h"

#include "core/failure.h"
#include "io/file_io.h"

namespace tmmu::sessions {

std::optional<ExportFormat> parse_export_format(std::string_view name) {
    for (ExportFormat f : {ExportFormat::Html, ExportFormat::Pdf, ExportFormat::Csv,
                           ExportFormat::Json, ExportFormat::ChromeTrace})
        if (export_format_name(f) == name) return f;
    return std::nullopt;
}

std::string_view export_format_name(ExportFormat f) {
    switch (f) {
    case ExportFormat::Html:
        return "html";
    case ExportFormat::Pdf:
        return "pdf";
    case ExportFormat::Csv:
        return "csv";
    case ExportFormat::Json:
        return "json";
    case ExportFormat::ChromeTrace:
        return "chrome-trace";
    }
    return "";
}

std::string_view export_extension(ExportFormat f) {
    switch (f) {
    case ExportFormat::Html:
        return ".html";
    case ExportFormat::Pdf:
        return ".pdf";
    case ExportFormat::Csv:
        return ".csv";
    case ExportFormat::Json:
        return ".json";
    case ExportFormat::ChromeTrace: // Perfetto reads .json traces; distinct from the json export
        return ".trace.json";
    }
    return "";
}

std::string export_session(const Session& s, ExportFormat f) {
    report::checked_plan(s); // every format needs the plan: fail before doing any work
    switch (f) {
    case ExportFormat::Html:
        return report::html_report(s);
    case ExportFormat::Pdf:
        return report::pdf_report(s);
    case ExportFormat::Csv:
        return report::csv_tensors(s);
    case ExportFormat::Json:
        return report::json_document(s);
    case ExportFormat::ChromeTrace:
        return report::chrome_trace(s);
    }
    fail(FailureCode::InvalidArgument, "format", "unknown export format");
}

void write_export(const Session& s, ExportFormat f, const std::string& path) {
    write_output(path, export_session(s, f));
}

} // namespace tmmu::sessions
