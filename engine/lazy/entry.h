#pragma once
// Guards of the execution lock (seed 004, 6.8). Internal to engine/lazy.
#include "lazy/engine_state.h"
#include "lazy/lazy_error.h"

namespace tmmu::lazy {

// An execution-affecting public entry point: one caller at a time, never re-entered; refused on
// a poisoned engine. Drains the finalize queue on the way in and out (1.4's safe points).
class Entry {
  public:
    Entry(EngineState& s, const char* what);
    ~Entry();
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

  private:
    EngineState& s_;
};

// A cleanup-only call (dispose, the end of a tidy scope, draining): it works on a poisoned
// engine, and while another call holds the lock it does not wait or fail: held() is false and
// the caller defers its work to the finalize queue.
class CleanupLock {
  public:
    CleanupLock(EngineState& s, const char* what) : s_(s), held_(s.try_lock(what)) {}
    ~CleanupLock() {
        if (held_) s_.unlock();
    }
    CleanupLock(const CleanupLock&) = delete;
    CleanupLock& operator=(const CleanupLock&) = delete;
    bool held() const { return held_; }

  private:
    EngineState& s_;
    bool held_;
};

} // namespace tmmu::lazy
