#pragma once
// The execution lock's guard for public entry points (seed 004, 6.8). Internal to engine/lazy.
#include "lazy/engine_state.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>

namespace tmmu::lazy {

// An execution-affecting public entry point (6.8): one caller at a time, never re-entered.
class Entry {
  public:
    Entry(EngineState& s, const char* what) : s_(s) {
        bool expected = false;
        if (!s.lock.held.compare_exchange_strong(expected, true)) {
            const bool same = s.lock.owner.load() == std::this_thread::get_id();
            raise(LazyError::EngineBusy, s.site,
                  fmt::format("{} called while {} is running ({})", what, s.lock.running.load(),
                              same ? "a re-entrant call from inside it"
                                   : "an overlapping call from another thread"));
        }
        s.lock.owner = std::this_thread::get_id();
        s.lock.running = what;
        if (s.poisoned) {
            release();
            raise(LazyError::PoisonedEngine, s.site,
                  fmt::format("{} refused: an earlier force failed ({})", what, s.poison_reason));
        }
        s.drain_finalize();
    }
    ~Entry() {
        s_.drain_finalize();
        release();
    }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

  private:
    void release() {
        s_.lock.owner = std::thread::id{};
        s_.lock.held = false;
    }
    EngineState& s_;
};

} // namespace tmmu::lazy
