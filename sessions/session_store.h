#pragma once
// The sessions database: one row per recorded planning run (and, in run_store.h, per recorded
// model run; in lazy_store.h, per recorded lazy program trace), holding everything needed to show
// it again (plan checkpoint, metrics) and to replay it (model text, request, options).
//
// Invariants: a file is only ever written when it is empty/absent or already carries our
// application_id; every write is one transaction; the schema version is PRAGMA user_version
// and only moves forward through the migration list in session_store.cpp.
#include "plan/plan.h"
#include "plan/planner.h"
#include "plan/replan.h"
#include "source/model_source.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace tmmu::sessions {

inline constexpr int32_t kApplicationId = 0x544D4D55; // "TMMU"
inline constexpr int kSchemaVersion = 9;

// The inputs of a run, enough to plan it again with the current engine.
struct SessionInput {
    std::string source_path;
    bool is_problem = false; // model_text is CSV (offset problem) instead of IR JSON
    std::string model_text;  // canonical IR JSON (save_ir_json) or CSV (write_dsa_csv)
    ModelRequest request;    // batch and seq are 0 where they do not apply (not a config)
    PlanOptions options;
    // Schema 6 (session_source.h). The model file's SHA-256 (hex) when it was recorded: empty
    // where no file could be read, and in sessions recorded before.
    std::string source_sha256;
    // The source was an ONNX model: request.dims, input_shapes and aliasing shaped the stored
    // graph and are stored with it. Other models keep them at their defaults.
    bool onnx = false;
    // Schema 9 (session_iterations.h): a run over iterations, from the binding of its first
    // plan; model_text is bound as the plan in force after the last. Empty for a single plan.
    std::optional<IterationHistory> iterations;
};

// A tag is a word people search for exactly (session list --search): throws InvalidArgument
// naming the tag when one is empty or blank, or holds a comma (lists print a session's tags
// joined by commas, where "a,b" would read as two).
void check_tags(const std::vector<std::string>& tags);

// The mode the run planned: none for an offset problem.
std::optional<Mode> planned_mode(const SessionInput& in);

// Whether batch and seq shaped the model (a transformer config), so reports should show them.
// Sessions recorded before they were zeroed for other models store the defaults (8, 1024) for
// every model; a config's generated IR names its shape ("gpt2-small training b8 s1024 f32"),
// which tells the two apart.
bool request_shapes_model(const SessionInput& in);

// Captures a loaded model's inputs (the graph as canonical IR JSON, a problem as CSV), the
// model file's SHA-256 as it is now (after loading: a file changed in between is not noticed),
// and an ONNX model's bindings.
SessionInput input_from_model(const LoadedModel& model, const ModelRequest& request,
                              const PlanOptions& options);

struct NewSession {
    SessionInput input;
    Plan plan; // planned from input; its plan_hash must be set
    std::string title;
    std::string notes;
    std::vector<std::string> tags;
};

struct SessionSummary {
    int64_t id = 0;
    std::string created; // UTC ISO-8601
    std::string title;
    std::vector<std::string> tags; // sorted
    std::string source_path;
    std::string mode; // "inference", ..., "none" for problems
    std::string strategy;
    std::string plan_hash;    // hex, as stored
    uint64_t peak_bytes = 0;  // sum over arenas
    uint64_t lower_bound = 0; // sum over arenas
    // The rank planned, for a rank of a distributed run (world_size > 1); from the stored
    // options, which load() checks against the plan and list() does not (no seal covers them
    // there: list() shows the rank only where it is a valid one).
    uint32_t rank = 0, world_size = 1;
    // The iterations of a run over them (0 for a single plan); likewise from an unsealed column
    // in list(), which shows a count only where it reads one.
    uint32_t iterations = 0;
    // Set by list when the listed fields do not match the seal recorded with them
    // (session_seal.h); empty otherwise. load() checks everything and sets Session::altered.
    std::string altered_reason;
};

// "training", "training, rank 3/8" for a rank of a distributed run, "inference, 3 iterations"
// for a run over iterations.
std::string listed_mode(const SessionSummary& s);

struct Session {
    SessionSummary summary;
    SessionInput input;
    std::string notes;
    std::string program_version;
    std::string ir_hash;      // hex
    std::string metrics_json; // io/plan_json.h metrics_json: per arena, config and metrics
    std::vector<uint8_t> checkpoint;
    std::optional<Plan> plan; // decoded checkpoint; empty when altered beyond decoding
    // The row changed behind tmmu's back: the stored plan does not decode or does not match
    // plan_hash, the summary or IR hash disagrees with the plan, or a seal does not match.
    bool altered = false;
    std::string altered_reason;
};

// The summary recording a run stores: title, source, mode ("none" for problems), strategy,
// plan hash and the plan's totals; id, created and tags are the store's.
SessionSummary run_summary(const SessionInput& in, const Plan& plan, const std::string& title);
// The Session that recording n and loading it back would give (id 0, no checkpoint bytes, not
// altered), without a database: what exports write for a run that was not recorded.
Session session_from_run(NewSession n);

// A change to a recorded session's user fields; unset fields stay as they are.
struct SessionEdit {
    std::optional<std::string> title;
    std::optional<std::string> notes;
    std::optional<std::vector<std::string>> tags; // replaces the whole set
};

struct ListQuery {
    std::string search; // substring of the title (case-insensitive) or an exact tag; "" = all
    size_t limit = 0;   // 0 = no limit; newest first
};

// $XDG_DATA_HOME/tmmu/sessions.db, else ~/.local/share/tmmu/sessions.db.
std::string default_sessions_path();

// Whether opening may create the database: only what records sessions creates one; reading
// commands (list, show, replay, diff, export) on a missing database fail and create nothing.
enum class StoreAccess { CreateIfMissing, ExistingOnly };

class SessionStore {
  public:
    // Opens, or with CreateIfMissing creates, the database (and its directory). A missing file
    // under ExistingOnly, a file that is not a TMMU sessions database, a damaged one and one
    // with a newer schema fail with IoError, and the file is left byte-for-byte untouched.
    // Other processes may use the same file at the same time: locks are waited for.
    explicit SessionStore(const std::string& path,
                          StoreAccess access = StoreAccess::CreateIfMissing);
    ~SessionStore();
    SessionStore(const SessionStore&) = delete;
    SessionStore& operator=(const SessionStore&) = delete;

    // Throws InvalidArgument for a tag check_tags refuses.
    int64_t record(const NewSession& s);
    std::vector<SessionSummary> list(const ListQuery& q = {}) const;
    // Throws InvalidArgument when no session has this id. Integrity is checked, not thrown:
    // see Session::altered.
    Session load(int64_t id) const;
    // Throws InvalidArgument when no session has this id or check_tags refuses a tag. The plan
    // and inputs are never edited.
    void edit(int64_t id, const SessionEdit& e);
    bool remove(int64_t id); // false when absent
    size_t count() const;
    int schema_version() const;
    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; } // for tests and maintenance

  private:
    std::string path_;
    sqlite3* db_ = nullptr;
};

} // namespace tmmu::sessions
