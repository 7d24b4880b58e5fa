#pragma once
// Recorded model runs in the sessions database (table `runs`): what `tmmu run --record` and the
// studio's Run panel store, so a run can be shown again and replayed. A row holds the run as
// its tmmu-run JSON (runtime/run_record.h) plus the fields a listing shows, all sealed with one
// SHA-256 when recorded: a row changed behind tmmu's back loads as altered.
#include "session_store.h"

#include "runtime/run_record.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmmu::sessions {

struct RunSummary {
    int64_t id = 0;
    std::string created; // UTC ISO-8601
    std::string title;
    std::string backend, device, model;
    std::string logits_hash;    // hex
    std::string altered_reason; // empty unless the row does not match its seal
};

struct StoredRun {
    RunSummary summary;
    std::string program_version;
    std::optional<runtime::RunRecord> record; // empty when the stored JSON does not parse
    bool altered = false;
};

int64_t record_run(SessionStore& store, const runtime::RunRecord& run, const std::string& title);
// Newest first; limit 0 lists all.
std::vector<RunSummary> list_runs(const SessionStore& store, size_t limit = 0);
// InvalidArgument when no run has this id; integrity is reported in StoredRun::altered.
StoredRun load_run(const SessionStore& store, int64_t id);

} // namespace tmmu::sessions
