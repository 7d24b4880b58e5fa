#pragma once
// One writer per export format (export.cpp dispatches). Each takes a session whose plan decoded.
#include "session_store.h"

#include <string>

namespace tmmu::sessions::report {

inline constexpr size_t kHtmlTensorRows = 2000;
inline constexpr size_t kPdfTensorRows = 300;

std::string html_report(const Session& s);
std::string pdf_report(const Session& s);
std::string csv_tensors(const Session& s);
std::string json_document(const Session& s);
std::string chrome_trace(const Session& s);

} // namespace tmmu::sessions::report
