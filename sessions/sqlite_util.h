#pragma once
// Minimal RAII over the SQLite C API; every error becomes Failure(IoError) naming the database.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::sessions {

[[noreturn]] void sqlite_fail(sqlite3* db, const std::string& where, std::string_view what);

// Runs one or more statements without results.
void exec(sqlite3* db, const std::string& where, const char* sql);

class Stmt {
  public:
    Stmt(sqlite3* db, const std::string& where, const char* sql);
    ~Stmt();
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Stmt& bind(int i, int64_t v);
    Stmt& bind(int i, std::string_view text);
    Stmt& bind_blob(int i, const std::vector<uint8_t>& bytes);
    bool step(); // true while a row is available
    void reset();

    int64_t integer(int col) const;
    std::string text(int col) const;
    std::vector<uint8_t> blob(int col) const;
    bool is_null(int col) const;

  private:
    sqlite3* db_;
    std::string where_;
    sqlite3_stmt* stmt_ = nullptr;
};

// Now, as rows store their creation time: UTC ISO-8601 to the second ("2026-11-25T10:40:00Z").
std::string utc_now_iso8601();

// BEGIN IMMEDIATE on construction, ROLLBACK unless commit() ran.
class Transaction {
  public:
    Transaction(sqlite3* db, std::string where);
    ~Transaction();
    void commit();

  private:
    sqlite3* db_;
    std::string where_;
    bool done_ = false;
};

} // namespace tmmu::sessions
