#include "session_store.h"

#include "session_iterations.h"
#include "session_seal.h"
#include "session_source.h"
#include "sqlite_util.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/json_text.h"
#include "core/units.h"
#include "encoding/sha256.h"
#include "io/checkpoint.h"
#include "io/dsa_csv.h"
#include "io/plan_json.h"
#include "ir/ir_json.h"
#include "plan/plan_summary.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

namespace tmmu::sessions {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Forward migrations: entry i takes the schema from version i to i + 1. Never edit a shipped
// entry; append a new one and bump kSchemaVersion.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the sessions table with its listing and title indexes.
    R"(CREATE TABLE sessions(
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         created TEXT NOT NULL,
         program_version TEXT NOT NULL,
         title TEXT NOT NULL DEFAULT '',
         source_path TEXT NOT NULL,
         is_problem INTEGER NOT NULL,
         model_text BLOB NOT NULL,
         ir_hash TEXT NOT NULL,
         mode TEXT NOT NULL,
         batch INTEGER NOT NULL,
         seq INTEGER NOT NULL,
         strategy TEXT NOT NULL,
         options_json TEXT NOT NULL,
         plan_cbor BLOB NOT NULL,
         plan_hash TEXT NOT NULL,
         peak_bytes INTEGER NOT NULL,
         lower_bound INTEGER NOT NULL,
         metrics_json TEXT NOT NULL);
       CREATE INDEX sessions_by_created ON sessions(created, id);
       CREATE INDEX sessions_by_title ON sessions(title COLLATE NOCASE);)",
    // 1 -> 2: free-form notes and tags.
    R"(ALTER TABLE sessions ADD COLUMN notes TEXT NOT NULL DEFAULT '';
       CREATE TABLE session_tags(
         session_id INTEGER NOT NULL,
         tag TEXT NOT NULL,
         PRIMARY KEY(session_id, tag));
       CREATE INDEX session_tags_by_tag ON session_tags(tag, session_id);)",
    // 2 -> 3: the seals (session_seal.h); rows recorded before are sealed by seal_old_rows.
    R"(ALTER TABLE sessions ADD COLUMN summary_seal TEXT NOT NULL DEFAULT '';
       ALTER TABLE sessions ADD COLUMN content_seal TEXT NOT NULL DEFAULT '';)",
    // 3 -> 4: recorded model runs (run_store.h), sealed from the start.
    R"(CREATE TABLE runs(
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         created TEXT NOT NULL,
         program_version TEXT NOT NULL,
         title TEXT NOT NULL DEFAULT '',
         backend TEXT NOT NULL,
         device TEXT NOT NULL,
         model TEXT NOT NULL,
         logits_hash TEXT NOT NULL,
         record_json TEXT NOT NULL,
         seal TEXT NOT NULL);
       CREATE INDEX runs_by_created ON runs(created, id);)",
    // 4 -> 5: recorded lazy program traces (lazy_store.h), sealed from the start.
    R"(CREATE TABLE lazy_traces(
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         created TEXT NOT NULL,
         program_version TEXT NOT NULL,
         title TEXT NOT NULL DEFAULT '',
         program TEXT NOT NULL,
         origin TEXT NOT NULL,
         eager INTEGER NOT NULL,
         program_text TEXT NOT NULL,
         trace_hash TEXT NOT NULL,
         events INTEGER NOT NULL,
         plans INTEGER NOT NULL,
         steps INTEGER NOT NULL,
         pool_peak_bytes INTEGER NOT NULL,
         planned_peak_bytes INTEGER NOT NULL,
         failure TEXT NOT NULL,
         trace_json TEXT NOT NULL,
         seal TEXT NOT NULL);
       CREATE INDEX lazy_traces_by_created ON lazy_traces(created, id);)",
    // 5 -> 6: the model file's SHA-256 and an ONNX model's bindings (session_source.h); ''
    // in rows recorded before, which keep their seals.
    R"(ALTER TABLE sessions ADD COLUMN source_sha256 TEXT NOT NULL DEFAULT '';
       ALTER TABLE sessions ADD COLUMN bindings_json TEXT NOT NULL DEFAULT '';)",
    // 6 -> 7: the checkpoint policy a lazy trace ran with (lazy_store.h); the default in rows
    // recorded before, which keep their seals.
    R"(ALTER TABLE lazy_traces ADD COLUMN checkpoint_policy TEXT NOT NULL DEFAULT 'recompute';)",
    // 7 -> 8: whether a lazy trace ran its compile statements compiled (lazy_store.h); 0 in
    // rows recorded before, which keep their seals.
    R"(ALTER TABLE lazy_traces ADD COLUMN compiled INTEGER NOT NULL DEFAULT 0;)",
    // 8 -> 9: a run over iterations keeps them (session_iterations.h); '' for a single plan.
    R"(ALTER TABLE sessions ADD COLUMN iterations_json TEXT NOT NULL DEFAULT '';)",
};
constexpr int kFirstSealedVersion = 3;
static_assert(std::size(kMigrations) == size_t(kSchemaVersion));

// How long a connection waits for another process's lock before giving up: far longer than
// any write of ours holds one, so concurrent recorders and listers queue instead of failing.
constexpr int kBusyTimeoutMs = 30000;

int pragma_int(sqlite3* db, const std::string& where, const char* sql) {
    Stmt s(db, where, sql);
    return s.step() ? int(s.integer(0)) : 0;
}

constexpr char kSqliteMagic[] = "SQLite format 3"; // 16 bytes with its NUL

// The first 100 bytes (the SQLite header) when the file starts with SQLite's magic.
std::optional<std::array<unsigned char, 100>> sqlite_header(const std::string& path) {
    std::array<unsigned char, 100> h{};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(h.data()), h.size());
    if (in.gcount() < 16 || std::memcmp(h.data(), kSqliteMagic, 16) != 0) return std::nullopt;
    return h;
}

// SQLite header facts (https://sqlite.org/fileformat.html, section 1.3): the page size at
// byte 16, and at byte 28 the page count, valid when the change counter at 24 equals the
// version-valid-for number at 92. A file shorter than that count may be cut off (a partial
// copy) -- or caught while another process's checkpoint extends it, so it is only a suspicion
// for quick_check to settle.
std::optional<std::string> truncation_of(const std::array<unsigned char, 100>& h,
                                         uintmax_t file_size) {
    auto be32 = [&](int at) {
        return uint32_t(h[at]) << 24 | uint32_t(h[at + 1]) << 16 | uint32_t(h[at + 2]) << 8 |
               h[at + 3];
    };
    const uint64_t page_size = h[16] == 0 && h[17] == 1 ? 65536 : uint64_t(h[16]) << 8 | h[17];
    if (be32(24) != be32(92) || be32(28) == 0) return std::nullopt;
    const uint64_t expected = uint64_t(be32(28)) * page_size;
    if (file_size >= expected) return std::nullopt;
    return fmt::format("{} bytes, but its header says {} pages of {} bytes", file_size, be32(28),
                       page_size);
}

// A file SQLite could not read: which of "foreign", "damaged" or "busy/unreadable" it is.
[[noreturn]] void refuse_unreadable(sqlite3* db, const std::string& path, int rc) {
    const std::string why = sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_NOTADB && sqlite_header(path))
        fail(FailureCode::IoError, path,
             "the sessions database is damaged (an SQLite file whose header is invalid); left "
             "untouched");
    if ((rc & 0xff) == SQLITE_NOTADB)
        fail(FailureCode::IoError, path,
             "not a TMMU sessions database (not an SQLite file); left untouched");
    if ((rc & 0xff) == SQLITE_CORRUPT)
        fail(FailureCode::IoError, path,
             fmt::format("the sessions database is damaged ({}); left untouched", why));
    sqlite_fail(db, path, "cannot read sessions database");
}

// SQLite's own consistency check of every page, stopping at the first problem: "ok", or what
// is wrong. Costs a read of the whole file, so only suspicious files get it.
std::string quick_check(sqlite3* db, const std::string& path) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    std::string result = rc == SQLITE_ROW
                             ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                             : sqlite3_errstr(rc);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && (rc & 0xff) != SQLITE_CORRUPT) refuse_unreadable(db, path, rc);
    return result;
}

// Opens read-only and checks the identity of a non-empty file before anything may write it.
// A read-only connection never creates, migrates or checkpoints, so a foreign file stays
// byte-identical. Busy is waited out: another process may be creating or writing the file.
// Reading commands need a database that recording has made: a missing or empty file would be
// created or migrated by opening it.
void check_has_sessions(const std::string& path, bool exists) {
    std::error_code ec;
    if (!exists)
        fail(FailureCode::IoError, path,
             "no sessions database here (recording creates one: tmmu plan, run or lazy run "
             "--record; --sessions PATH picks another)");
    if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0 && !ec &&
        !fs::exists(path + "-wal", ec))
        fail(FailureCode::IoError, path,
             "is an empty file, not a sessions database yet (tmmu plan --record fills it); left "
             "untouched");
}

void check_is_ours(const std::string& path) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec || size == 0) return;
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    struct Closer {
        sqlite3* db;
        ~Closer() { sqlite3_close(db); }
    } closer{db};
    if (rc != SQLITE_OK) sqlite_fail(db, path, "cannot open sessions database");
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    // One statement, so one snapshot: separate reads could straddle another process's
    // migration and see its application_id before and its tables after.
    sqlite3_stmt* st = nullptr;
    rc = sqlite3_prepare_v2(db,
                            "SELECT (SELECT application_id FROM pragma_application_id), "
                            "(SELECT user_version FROM pragma_user_version), "
                            "(SELECT count(*) FROM sqlite_schema)",
                            -1, &st, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    const int app = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    const int version = rc == SQLITE_ROW ? sqlite3_column_int(st, 1) : 0;
    const int tables = rc == SQLITE_ROW ? sqlite3_column_int(st, 2) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) refuse_unreadable(db, path, rc);
    if (auto header = sqlite_header(path))
        if (auto cut = truncation_of(*header, size))
            if (std::string problem = quick_check(db, path); problem != "ok")
                fail(FailureCode::IoError, path,
                     fmt::format("the sessions database is damaged: {} ({}); left untouched", *cut,
                                 problem));
    // An SQLite file with no tables at all (e.g. a crash before migration 1 committed) holds
    // nothing to lose: treat it as new.
    if (app == 0 && version == 0 && tables == 0) return;
    if (app != kApplicationId)
        fail(FailureCode::IoError, path,
             fmt::format("not a TMMU sessions database (SQLite application_id {:#x}, expected "
                         "{:#x}); left untouched",
                         uint32_t(app), uint32_t(kApplicationId)));
    if (version > kSchemaVersion)
        fail(FailureCode::IoError, path,
             fmt::format("sessions schema version {} is newer than this program's {}; upgrade "
                         "tmmu",
                         version, kSchemaVersion));
}

// Switching to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY for it at once,
// without consulting the busy handler, while another connection holds the file (two
// recorders starting on a new database). So it is retried here, with the same patience.
void enable_wal(sqlite3* db, const std::string& path) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
        const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK) return;
        if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
            sqlite_fail(db, path, "cannot switch the sessions database to WAL");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

void seal_old_rows(sqlite3* db, const std::string& path);

void migrate(sqlite3* db, const std::string& path) {
    Transaction tx(db, path);
    int version = pragma_int(db, path, "PRAGMA user_version");
    if (version == 0) {
        // A fresh file: claim it. Re-checked inside the write lock so two processes creating
        // the same database do not both run migration 1.
        if (pragma_int(db, path, "SELECT count(*) FROM sqlite_schema") != 0)
            fail(FailureCode::IoError, path,
                 "not a TMMU sessions database (has tables but no schema version); left "
                 "untouched");
        exec(db, path, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str());
    }
    for (int v = version; v < kSchemaVersion; ++v) {
        exec(db, fmt::format("{} (migration {} -> {})", path, v, v + 1), kMigrations[v]);
        exec(db, path, fmt::format("PRAGMA user_version = {}", v + 1).c_str());
    }
    if (version < kFirstSealedVersion) seal_old_rows(db, path);
    tx.commit();
}

json options_to_json(const PlanOptions& o) {
    json arenas = json::array();
    for (const ArenaConfig& a : o.policy.arenas) {
        json arena = {{"name", a.name}, {"capacity", a.capacity}, {"alignment", a.alignment}};
        // Only a paged arena: unpaged ones stay as stored before pages, so sealed rows check.
        if (a.page_size != 0) arena["page_size"] = a.page_size;
        arenas.push_back(std::move(arena));
    }
    json routes = json::array();
    for (const std::string& r : o.policy.arena_of_role)
        routes.push_back(r);
    json j = {{"strategy", o.strategy},
              {"search_budget", o.search_budget},
              {"search_budget_ms", o.search_budget_ms},
              {"arenas", arenas},
              {"arena_of_role", routes},
              {"replay_token", to_hex(o.replay_token)}};
    // Only a rank of a distributed run has one: single-rank options stay as they were stored
    // before sharding, so their sealed rows still check.
    if (!o.shard.single_rank()) j["shard"] = json(shard_json(o.shard));
    return j;
}

ShardSpec shard_from_json(const json& j, const std::string& where) {
    try {
        return stored_shard_spec(j.at("world_size").get<uint64_t>(), j.at("rank").get<uint64_t>(),
                                 j.at("roles").get<std::vector<std::string>>(), where);
    } catch (const Failure& f) {
        fail(FailureCode::CorruptCheckpoint, where, "stored options' shard: " + f.message());
    }
}

PlanOptions options_from_json(const std::string& text, const std::string& where) {
    try {
        json j = json::parse(text);
        PlanOptions o;
        o.strategy = j.at("strategy").get<std::string>();
        o.search_budget = j.value("search_budget", uint64_t(0));
        o.search_budget_ms = j.value("search_budget_ms", uint64_t(0));
        o.policy.arenas.clear();
        for (const json& a : j.at("arenas")) {
            const uint64_t page = a.value("page_size", uint64_t(0));
            if (page != 0 && !is_power_of_two(page))
                fail(FailureCode::CorruptCheckpoint, where,
                     fmt::format("stored arena page size {} is not a power of two", page));
            o.policy.arenas.push_back({a.at("name").get<std::string>(),
                                       a.at("capacity").get<uint64_t>(),
                                       a.at("alignment").get<uint64_t>(), page});
        }
        const json& routes = j.at("arena_of_role");
        if (routes.size() != o.policy.arena_of_role.size())
            fail(FailureCode::CorruptCheckpoint, where, "arena_of_role has the wrong length");
        for (size_t i = 0; i < routes.size(); ++i)
            o.policy.arena_of_role[i] = routes[i].get<std::string>();
        o.replay_token = digest_from_hex(j.at("replay_token").get<std::string>(), where);
        if (j.contains("shard")) o.shard = shard_from_json(j.at("shard"), where);
        return o;
    } catch (const json::exception& e) {
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("stored options are not valid: {}", e.what()));
    }
}

// Fault injection for the crash tests: with TMMU_FAULT_PAUSE_IN_RECORD_MS=N set, a recording
// says so on stderr and waits N ms inside its transaction, so a test can kill the process
// exactly there and prove the write is all or nothing. Unset (always, outside tests): nothing.
void pause_inside_write_for_tests() {
    const char* ms = std::getenv("TMMU_FAULT_PAUSE_IN_RECORD_MS");
    if (!ms) return;
    std::fputs("tmmu: fault injection: inside the recording transaction\n", stderr);
    std::fflush(stderr);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::strtoul(ms, nullptr, 10)));
}

std::vector<std::string> load_tags(sqlite3* db, const std::string& where, int64_t id) {
    Stmt s(db, where, "SELECT tag FROM session_tags WHERE session_id = ? ORDER BY tag");
    s.bind(1, id);
    std::vector<std::string> tags;
    while (s.step())
        tags.push_back(s.text(0));
    return tags;
}

void insert_tags(sqlite3* db, const std::string& where, int64_t id,
                 const std::vector<std::string>& tags) {
    Stmt t(db, where, "INSERT OR IGNORE INTO session_tags(session_id, tag) VALUES(?, ?)");
    for (const std::string& tag : tags) {
        t.reset();
        t.bind(1, id).bind(2, tag);
        t.step();
    }
}

constexpr const char* kSummaryColumns =
    "id, created, title, source_path, mode, strategy, plan_hash, peak_bytes, lower_bound";

SessionSummary read_summary(const Stmt& s) {
    SessionSummary r;
    r.id = s.integer(0);
    r.created = s.text(1);
    r.title = s.text(2);
    r.source_path = s.text(3);
    r.mode = s.text(4);
    r.strategy = s.text(5);
    r.plan_hash = s.text(6);
    r.peak_bytes = uint64_t(s.integer(7));
    r.lower_bound = uint64_t(s.integer(8));
    return r;
}

// Every column load() reads, in read_row's order: the summary's first.
const std::string kRowColumns = std::string(kSummaryColumns) +
                                ", is_problem, model_text, batch, seq, options_json, notes, "
                                "program_version, ir_hash, metrics_json, plan_cbor, "
                                "summary_seal, content_seal, source_sha256, bindings_json, "
                                "iterations_json";

constexpr const char* kNotSealed =
    "not sealed: it failed the checks when the database was upgraded to schema 3";
constexpr const char* kListedFieldsAltered =
    "listed fields (created, source, mode, strategy, totals) do not match their seal";

// A row as stored, with what it claims about itself: its options JSON as written (the
// content seal covers those bytes) and its seals.
struct StoredRow {
    Session session;
    std::string options_json, iterations_json;
    std::string summary_seal, content_seal;
};

StoredRow read_row(const Stmt& s, const std::string& where) {
    StoredRow row;
    Session& r = row.session;
    r.summary = read_summary(s);
    r.input.source_path = r.summary.source_path;
    r.input.is_problem = s.integer(9) != 0;
    std::vector<uint8_t> text = s.blob(10);
    r.input.model_text.assign(text.begin(), text.end());
    if (auto mode = parse_mode(r.summary.mode)) r.input.request.mode = *mode;
    r.input.request.batch = uint64_t(s.integer(11));
    r.input.request.seq = uint64_t(s.integer(12));
    row.options_json = s.text(13);
    r.input.options = options_from_json(row.options_json, where + ".options_json");
    r.summary.rank = r.input.options.shard.rank;
    r.summary.world_size = r.input.options.shard.world_size;
    r.notes = s.text(14);
    r.program_version = s.text(15);
    r.ir_hash = s.text(16);
    r.metrics_json = s.text(17);
    r.checkpoint = s.blob(18);
    row.summary_seal = s.text(19);
    row.content_seal = s.text(20);
    r.input.source_sha256 = s.text(21);
    read_bindings_json(s.text(22), r.input, where + ".bindings_json");
    row.iterations_json = s.text(23);
    read_iterations_json(row.iterations_json, r.input, where + ".iterations_json");
    if (r.input.iterations) r.summary.iterations = uint32_t(r.input.iterations->decided.size());
    return row;
}

// Why a row's stored content contradicts itself, or "": the checkpoint decodes and hashes to
// plan_hash, and the listed totals and the IR hash agree with the decoded plan. Sets
// session.plan when the checkpoint decodes.
std::string content_problem(StoredRow& row) {
    Session& s = row.session;
    try {
        s.plan = decode_checkpoint(s.checkpoint.data(), s.checkpoint.size());
    } catch (const Failure& f) {
        return fmt::format("stored plan does not decode: {}", f.what());
    }
    const Plan& p = *s.plan;
    if (to_hex(p.plan_hash) != s.summary.plan_hash)
        return fmt::format("stored plan hashes to {}, the session says {}", to_hex(p.plan_hash),
                           s.summary.plan_hash);
    if (to_hex(p.ir_hash) != s.ir_hash)
        return fmt::format("stored plan is of IR {}, the session says {}", to_hex(p.ir_hash),
                           s.ir_hash);
    if (!(p.shard == s.input.options.shard))
        return fmt::format("stored plan is for {}, its options say {}",
                           describe_shard_spec(p.shard),
                           describe_shard_spec(s.input.options.shard));
    if (std::string why = iterations_problem(s.input.iterations, p); !why.empty()) return why;
    const PlanTotals totals = plan_totals(p);
    if (totals.peak_bytes != s.summary.peak_bytes || totals.lower_bound != s.summary.lower_bound)
        return fmt::format("the session lists peak {} B and lower bound {} B, its plan has {} B "
                           "and {} B",
                           s.summary.peak_bytes, s.summary.lower_bound, totals.peak_bytes,
                           totals.lower_bound);
    return {};
}

// Why a stored row cannot be trusted, or "" when it can: its content agrees with itself and
// both seals match.
std::string row_problem(StoredRow& row) {
    if (std::string problem = content_problem(row); !problem.empty()) return problem;
    const Session& s = row.session;
    if (row.summary_seal.empty() && row.content_seal.empty()) return kNotSealed;
    if (summary_seal(s.summary) != row.summary_seal) return kListedFieldsAltered;
    if (content_seal(s, row.options_json, row.iterations_json) != row.content_seal)
        return "stored inputs or results (model text, request, options, iterations, metrics, "
               "version) do not match their seal";
    return {};
}

// Migration to schema 3 seals the rows recorded before that pass every other check: from then
// on a change is detected. A row that fails (options that do not parse, a plan its listing
// contradicts) stays unsealed and shows as altered, rather than failing the migration and
// with it every session in the file.
void seal_old_rows(sqlite3* db, const std::string& path) {
    Stmt rows(db, path, fmt::format("SELECT {} FROM sessions", kRowColumns).c_str());
    Stmt update(db, path, "UPDATE sessions SET summary_seal = ?, content_seal = ? WHERE id = ?");
    while (rows.step()) {
        std::optional<StoredRow> row;
        try {
            row = read_row(rows, path);
        } catch (const Failure&) {
            continue;
        }
        if (!content_problem(*row).empty()) continue;
        const Session& s = row->session;
        update.reset();
        update.bind(1, summary_seal(s.summary))
            .bind(2, content_seal(s, row->options_json, row->iterations_json))
            .bind(3, s.summary.id);
        update.step();
    }
}

} // namespace

std::string default_sessions_path() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    if (xdg && *xdg == '/') return std::string(xdg) + "/tmmu/sessions.db";
    const char* home = std::getenv("HOME");
    if (!home || !*home)
        fail(FailureCode::IoError, "sessions",
             "neither XDG_DATA_HOME nor HOME is set; use --sessions");
    return std::string(home) + "/.local/share/tmmu/sessions.db";
}

SessionInput input_from_model(const LoadedModel& model, const ModelRequest& request,
                              const PlanOptions& options) {
    SessionInput in;
    in.source_path = model.path;
    in.source_sha256 = file_sha256(model.path);
    in.request = request;
    if (model.kind != ModelKind::TransformerConfig) in.request.batch = in.request.seq = 0;
    in.onnx = model.kind == ModelKind::Onnx;
    if (!in.onnx) {
        const ModelRequest defaults;
        in.request.dims = defaults.dims;
        in.request.input_shapes = defaults.input_shapes;
        in.request.aliasing = defaults.aliasing;
    }
    in.options = options;
    if (model.graph) {
        in.model_text = save_ir_json(*model.graph);
    } else {
        in.is_problem = true;
        in.model_text = write_dsa_csv(*model.problem, nullptr);
    }
    return in;
}

bool request_shapes_model(const SessionInput& in) {
    if (in.is_problem || in.request.batch == 0) return false;
    // The name comes first in canonical IR JSON: no need to scan a large graph.
    const std::string_view head = std::string_view(in.model_text).substr(0, 4096);
    return head.find(fmt::format(" b{} s{} ", in.request.batch, in.request.seq)) !=
           std::string_view::npos;
}

SessionStore::SessionStore(const std::string& path, StoreAccess access) : path_(path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
        fail(FailureCode::IoError, path, fmt::format("cannot look at it: {}", ec.message()));
    const bool exists = fs::exists(status);
    if (access == StoreAccess::ExistingOnly) check_has_sessions(path, exists);
    check_is_ours(path);
    fs::path parent = fs::path(path).parent_path();
    if (!exists && !parent.empty()) fs::create_directories(parent, ec);
    const int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    try {
        if (rc != SQLITE_OK) sqlite_fail(db_, path, "cannot open sessions database");
        sqlite3_busy_timeout(db_, kBusyTimeoutMs);
        enable_wal(db_, path);
        exec(db_, path, "PRAGMA synchronous = NORMAL");
        migrate(db_, path);
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

SessionStore::~SessionStore() {
    sqlite3_close(db_);
}

int SessionStore::schema_version() const {
    return pragma_int(db_, path_, "PRAGMA user_version");
}

void check_tags(const std::vector<std::string>& tags) {
    for (const std::string& tag : tags) {
        if (tag.find_first_not_of(" \t\r\n") == std::string::npos)
            fail(FailureCode::InvalidArgument, "tag", "a tag cannot be empty or blank");
        if (tag.find(',') != std::string::npos)
            fail(FailureCode::InvalidArgument, fmt::format("tag '{}'", tag),
                 "a tag cannot contain a comma (give each tag on its own, --tag a --tag b)");
    }
}

std::optional<Mode> planned_mode(const SessionInput& in) {
    if (in.is_problem) return std::nullopt;
    return in.request.mode;
}

SessionSummary run_summary(const SessionInput& in, const Plan& plan, const std::string& title) {
    const PlanTotals totals = plan_totals(plan);
    SessionSummary s;
    s.title = title;
    s.source_path = in.source_path;
    s.mode = mode_name(planned_mode(in));
    s.strategy = in.options.strategy;
    s.plan_hash = to_hex(plan.plan_hash);
    s.peak_bytes = totals.peak_bytes;
    s.lower_bound = totals.lower_bound;
    s.rank = in.options.shard.rank;
    s.world_size = in.options.shard.world_size;
    if (in.iterations) s.iterations = uint32_t(in.iterations->decided.size());
    return s;
}

Session session_from_run(NewSession n) {
    Session s;
    s.summary = run_summary(n.input, n.plan, n.title);
    s.summary.tags = std::move(n.tags);
    std::sort(s.summary.tags.begin(), s.summary.tags.end());
    s.input = std::move(n.input);
    s.notes = std::move(n.notes);
    s.program_version = TMMU_VERSION;
    s.ir_hash = to_hex(n.plan.ir_hash);
    s.metrics_json = json_text(metrics_json(n.plan));
    s.plan = std::move(n.plan);
    return s;
}

int64_t SessionStore::record(const NewSession& n) {
    check_tags(n.tags);
    if (std::string why = iterations_problem(n.input.iterations, n.plan); !why.empty())
        fail(FailureCode::InvalidArgument, "session", why);
    Session row = session_from_run(n);
    row.summary.created = utc_now_iso8601();
    row.checkpoint = encode_checkpoint(n.plan);
    const SessionSummary& summary = row.summary;
    const SessionInput& in = row.input;
    const std::string options = json_text(options_to_json(in.options));
    const std::string iterations = iterations_json(in);
    Transaction tx(db_, path_);
    Stmt s(db_, path_,
           "INSERT INTO sessions(created, program_version, title, source_path, is_problem, "
           "model_text, ir_hash, mode, batch, seq, strategy, options_json, plan_cbor, plan_hash, "
           "peak_bytes, lower_bound, metrics_json, notes, summary_seal, content_seal, "
           "source_sha256, bindings_json, iterations_json) "
           "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, summary.created).bind(2, row.program_version).bind(3, summary.title);
    s.bind(4, in.source_path).bind(5, int64_t(in.is_problem));
    s.bind_blob(6, std::vector<uint8_t>(in.model_text.begin(), in.model_text.end()));
    s.bind(7, row.ir_hash).bind(8, summary.mode);
    s.bind(9, int64_t(in.request.batch)).bind(10, int64_t(in.request.seq));
    s.bind(11, summary.strategy).bind(12, options);
    s.bind_blob(13, row.checkpoint).bind(14, summary.plan_hash);
    s.bind(15, int64_t(summary.peak_bytes)).bind(16, int64_t(summary.lower_bound));
    s.bind(17, row.metrics_json).bind(18, row.notes);
    s.bind(19, summary_seal(summary)).bind(20, content_seal(row, options, iterations));
    s.bind(21, in.source_sha256).bind(22, bindings_json(in)).bind(23, iterations);
    s.step();
    int64_t id = sqlite3_last_insert_rowid(db_);
    insert_tags(db_, path_, id, summary.tags);
    pause_inside_write_for_tests();
    tx.commit();
    return id;
}

std::string listed_mode(const SessionSummary& s) {
    std::string text = s.mode;
    if (s.world_size > 1) text += fmt::format(", rank {}/{}", s.rank, s.world_size);
    if (s.iterations > 0) text += ", " + count_of(s.iterations, "iteration");
    return text;
}

std::vector<SessionSummary> SessionStore::list(const ListQuery& q) const {
    // The rank from the stored options, which the summary seal does not cover (load() checks
    // them against the plan): read only where they are valid JSON holding a rank below a world
    // size of 2 to 2^32 - 1, else the row lists without one, as a row altered there still lists.
    // The iteration count likewise, from iterations_json: a list's length, or none.
    constexpr const char* kRank = "json_extract(options_json, '$.shard.rank')";
    constexpr const char* kWorld = "json_extract(options_json, '$.shard.world_size')";
    std::string sql = fmt::format(
        "SELECT {0}, summary_seal, CASE WHEN json_valid(options_json) AND "
        "typeof({1}) = 'integer' AND typeof({2}) = 'integer' AND {1} >= 0 AND {1} < {2} AND "
        "{2} <= 4294967295 THEN {1} END, "
        "CASE WHEN json_valid(options_json) THEN {2} END, "
        "CASE WHEN json_valid(iterations_json) AND "
        "json_type(iterations_json, '$.iterations') = 'array' "
        "THEN min(json_array_length(iterations_json, '$.iterations'), 4294967295) END "
        "FROM sessions",
        kSummaryColumns, kRank, kWorld);
    if (!q.search.empty())
        sql += " WHERE instr(lower(title), lower(?1)) > 0 OR id IN "
               "(SELECT session_id FROM session_tags WHERE tag = ?1)";
    sql += " ORDER BY created DESC, id DESC";
    if (q.limit) sql += fmt::format(" LIMIT {}", q.limit);
    Stmt s(db_, path_, sql.c_str());
    if (!q.search.empty()) s.bind(1, q.search);
    std::vector<SessionSummary> out;
    while (s.step()) {
        out.push_back(read_summary(s));
        if (!s.is_null(10) && !s.is_null(11)) {
            out.back().rank = uint32_t(s.integer(10));
            out.back().world_size = uint32_t(s.integer(11));
        }
        if (!s.is_null(12)) out.back().iterations = uint32_t(s.integer(12));
        if (s.text(9).empty())
            out.back().altered_reason = kNotSealed;
        else if (summary_seal(out.back()) != s.text(9))
            out.back().altered_reason = kListedFieldsAltered;
    }
    // Tags in one pass rather than a query per row: listings of 10k sessions stay fast.
    Stmt t(db_, path_, "SELECT session_id, tag FROM session_tags ORDER BY session_id, tag");
    std::vector<std::pair<int64_t, std::string>> tags;
    while (t.step())
        tags.emplace_back(t.integer(0), t.text(1));
    for (SessionSummary& r : out) {
        auto it = std::lower_bound(tags.begin(), tags.end(), std::make_pair(r.id, std::string()));
        for (; it != tags.end() && it->first == r.id; ++it)
            r.tags.push_back(it->second);
    }
    return out;
}

Session SessionStore::load(int64_t id) const {
    std::string where = fmt::format("{}: session {}", path_, id);
    Stmt s(db_, where, fmt::format("SELECT {} FROM sessions WHERE id = ?", kRowColumns).c_str());
    s.bind(1, id);
    if (!s.step()) fail(FailureCode::InvalidArgument, where, "no such session (see session list)");
    StoredRow row = read_row(s, where);
    row.session.summary.tags = load_tags(db_, where, id);
    row.session.altered_reason = row_problem(row);
    row.session.altered = !row.session.altered_reason.empty();
    return std::move(row.session);
}

void SessionStore::edit(int64_t id, const SessionEdit& e) {
    if (e.tags) check_tags(*e.tags);
    std::string where = fmt::format("{}: session {}", path_, id);
    Transaction tx(db_, where);
    Stmt s(db_, where,
           "UPDATE sessions SET title = coalesce(?, title), notes = coalesce(?, notes) "
           "WHERE id = ?");
    if (e.title) s.bind(1, *e.title);
    if (e.notes) s.bind(2, *e.notes);
    s.bind(3, id);
    s.step();
    if (sqlite3_changes(db_) == 0)
        fail(FailureCode::InvalidArgument, where, "no such session (see session list)");
    if (e.tags) {
        Stmt d(db_, where, "DELETE FROM session_tags WHERE session_id = ?");
        d.bind(1, id);
        d.step();
        insert_tags(db_, where, id, *e.tags);
    }
    tx.commit();
}

bool SessionStore::remove(int64_t id) {
    Transaction tx(db_, path_);
    Stmt t(db_, path_, "DELETE FROM session_tags WHERE session_id = ?");
    t.bind(1, id);
    t.step();
    Stmt s(db_, path_, "DELETE FROM sessions WHERE id = ?");
    s.bind(1, id);
    s.step();
    bool removed = sqlite3_changes(db_) > 0;
    tx.commit();
    return removed;
}

size_t SessionStore::count() const {
    return size_t(pragma_int(db_, path_, "SELECT count(*) FROM sessions"));
}

} // namespace tmmu::sessions
