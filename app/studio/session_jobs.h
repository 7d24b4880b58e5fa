#pragma once
// What the Sessions actions do on the worker, as plain functions (no widgets, no UI state): read
// and decode a stored session, replay it, compare two, build and write an export. SessionActions
// submits them to the JobRunner and only shows their results.
//
// Invariant: worker jobs read through a connection of their own (StoreRef::open), never through
// the UI thread's SessionStore, so no SQLite connection is used by two threads; WAL lets the UI
// thread record, rename and delete meanwhile.
#include "planning.h"
#include "replay.h"
#include "report/export.h"
#include "session_store.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tmmu::studio {

struct StoreRef {
    std::string path;
    // Called on the thread that opens the connection; tests prove with it that this is the
    // worker, never the UI thread.
    std::function<void()> probe;

    sessions::SessionStore open() const;
};

// Records a planning run as a new session titled `title`; returns its id and how long the
// recording took (capture, encode, insert, commit).
struct RecordedRun {
    int64_t id = 0;
    double ms = 0;
};
RecordedRun record_run(const StoreRef& store, const PlanOutcome& run, const std::string& title);

// The toolbar settings a stored run was planned with (what the controls should show).
PlanSettings settings_of(const sessions::SessionInput& in);

// A session exported as JSON (`tmmu export ID --format json`, File > Export), read back to be
// shown: its plan, and a model that names the file but holds nothing to plan again (re-planning
// it says so). Throws what report::read_session_json throws.
struct ExportedShown {
    PlanOutcome outcome;
    int64_t id = 0;
    std::string title;
    std::string altered_reason; // non-empty: exported from an altered session
};
bool looks_like_session_export_file(const std::string& path);
ExportedShown read_session_export(const std::string& path);

// A stored session ready to show: outcome holds its decoded plan and model, or is null when the
// plan does not decode (session.altered says why; session.plan was moved into outcome).
struct OpenedSession {
    sessions::Session session;
    std::shared_ptr<const PlanOutcome> outcome;
};
OpenedSession open_stored(const StoreRef& store, int64_t id);

// result is empty when the stored session is altered: an altered plan proves nothing.
struct ReplayedSession {
    sessions::Session stored;
    std::optional<sessions::ReplayResult> result;
};
ReplayedSession replay_stored(const StoreRef& store, int64_t id, const Progress& progress);

// comparison is empty when either plan does not decode.
struct ComparedSessions {
    sessions::Session before, after;
    std::optional<sessions::PlanComparison> comparison;
};
ComparedSessions compare_stored(const StoreRef& store, int64_t before, int64_t after);

// Writes the plan on screen: recorded session `id` when it is not 0, else a session built in
// memory from `shown` (which must hold a model and a plan). Throws Failure.
void export_shown(const StoreRef& store, int64_t id, const PlanOutcome* shown,
                  sessions::ExportFormat format, const std::string& path);

} // namespace tmmu::studio
