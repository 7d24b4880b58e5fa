#include "sqlite_util.h"

#include "core/failure.h"

#include <ctime>
#include <fmt/format.h>

namespace tmmu::sessions {

void sqlite_fail(sqlite3* db, const std::string& where, std::string_view what) {
    const char* msg = db ? sqlite3_errmsg(db) : "out of memory";
    const int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;
    const char* hint = code == SQLITE_CORRUPT ? " (the sessions database is damaged)"
                       : code == SQLITE_BUSY  ? " (another program kept it locked too long)"
                                              : "";
    fail(FailureCode::IoError, where, fmt::format("{}: {}{}", what, msg, hint));
}

void exec(sqlite3* db, const std::string& where, const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
        const std::string_view stmt(sql);
        sqlite_fail(
            db, where,
            fmt::format("SQL failed ({}{})", stmt.substr(0, 40), stmt.size() > 40 ? "…" : ""));
    }
}

Stmt::Stmt(sqlite3* db, const std::string& where, const char* sql) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
        sqlite_fail(db, where, "cannot prepare statement");
}

Stmt::~Stmt() {
    sqlite3_finalize(stmt_);
}

Stmt& Stmt::bind(int i, int64_t v) {
    if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) sqlite_fail(db_, where_, "cannot bind");
    return *this;
}

Stmt& Stmt::bind(int i, std::string_view text) {
    if (sqlite3_bind_text(stmt_, i, text.data(), int(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        sqlite_fail(db_, where_, "cannot bind");
    return *this;
}

Stmt& Stmt::bind_blob(int i, const std::vector<uint8_t>& bytes) {
    // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
    static const uint8_t empty = 0;
    const void* data = bytes.empty() ? &empty : bytes.data();
    if (sqlite3_bind_blob(stmt_, i, data, int(bytes.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        sqlite_fail(db_, where_, "cannot bind");
    return *this;
}

bool Stmt::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite_fail(db_, where_, "statement failed");
}

void Stmt::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::integer(int col) const {
    return sqlite3_column_int64(stmt_, col);
}

std::string Stmt::text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           size_t(sqlite3_column_bytes(stmt_, col)))
             : std::string();
}

std::vector<uint8_t> Stmt::blob(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, col));
    return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(stmt_, col))
             : std::vector<uint8_t>();
}

bool Stmt::is_null(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

Transaction::Transaction(sqlite3* db, std::string where) : db_(db), where_(std::move(where)) {
    exec(db_, where_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    exec(db_, where_, "COMMIT");
    done_ = true;
}

std::string utc_now_iso8601() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace tmmu::sessions
