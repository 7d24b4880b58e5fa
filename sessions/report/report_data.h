#pragma once
// What the human-readable reports (HTML and PDF) say, as text, computed once so that both
// formats carry the same content. The charts are drawn separately (charts.h).
#include "session_store.h"

#include <string>
#include <vector>

namespace tmmu::sessions::report {

struct Fact {
    std::string key, value;
};

struct Table {
    std::vector<std::string> headers;
    std::vector<bool> numeric; // per column: right-aligned
    std::vector<std::vector<std::string>> rows;
};

struct ReportData {
    std::string heading;     // "Session 12: title"
    std::string altered;     // the warning; empty when the plan matches its hash
    std::vector<Fact> facts; // session fields, inputs, hashes
    Table metrics;           // one row per arena
    std::vector<std::string> plan_notes;
    Table tensors;            // the largest tensors first, at most max_tensor_rows
    size_t tensors_total = 0; // rows left out = tensors_total - tensors.rows.size()
};

// The session's decoded plan; CorruptCheckpoint naming the session when it did not decode.
const Plan& checked_plan(const Session& s);

ReportData report_data(const Session& s, size_t max_tensor_rows);

// "inference", "training", ... or "none" for offset problems.
std::string mode_text(const Session& s);

} // namespace tmmu::sessions::report
