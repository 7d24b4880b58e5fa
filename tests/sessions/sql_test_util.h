#pragma once
// Runs SQL on a sessions database behind the store's back, as the integrity tests do to alter
// a recorded row; a statement SQLite refuses fails the test.
#include "session_store.h"

#include <QTest>

#include <sqlite3.h>
#include <string>

namespace tmmu::test {

inline void sql(sqlite3* db, const std::string& text) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
    QVERIFY2(rc == SQLITE_OK, err ? err : "sqlite error");
}

inline void sql(sessions::SessionStore& store, const std::string& text) {
    sql(store.handle(), text);
}

} // namespace tmmu::test
