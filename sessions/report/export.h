#pragma once
// Reports of a recorded session, for people (HTML, PDF) and for other tools (CSV tensor table,
// JSON, Chrome trace for Perfetto). One entry point serves `tmmu export` and the studio's
// File > Export. Output is a pure function of the session: the same session always exports to
// the same bytes.
#include "session_store.h"

#include <optional>
#include <string>
#include <string_view>

namespace tmmu::sessions {

enum class ExportFormat { Html, Pdf, Csv, Json, ChromeTrace };

// "html", "pdf", "csv", "json", "chrome-trace"; empty for anything else.
std::optional<ExportFormat> parse_export_format(std::string_view name);
std::string_view export_format_name(ExportFormat f);
std::string_view export_extension(ExportFormat f); // ".html", ".pdf", ".csv", ".json", ".json"

// The report's bytes. A session whose plan does not decode fails with CorruptCheckpoint; one
// whose plan decodes but does not match its stored hash is exported with an "altered" warning.
std::string export_session(const Session& s, ExportFormat f);

// export_session written to path with write_output (IoError naming the path on failure).
void write_export(const Session& s, ExportFormat f, const std::string& path);

} // namespace tmmu::sessions
