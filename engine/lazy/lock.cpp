// The execution lock (seed 004, 6.8) and its guards.
#include "lazy/entry.h"

#include <fmt/format.h>

namespace tmmu::lazy {

bool EngineState::try_lock(const char* what) {
    bool expected = false;
    if (!lock.held.compare_exchange_strong(expected, true)) return false;
    lock.owner = std::this_thread::get_id();
    lock.running = what;
    return true;
}

void EngineState::unlock() {
    lock.owner = std::thread::id{};
    lock.held = false;
}

std::string EngineState::busy_reason(const char* what) const {
    const bool same = lock.owner.load() == std::this_thread::get_id();
    return fmt::format("{} called while {} is running ({})", what, lock.running.load(),
                       same ? "a re-entrant call from inside it"
                            : "an overlapping call from another thread");
}

Entry::Entry(EngineState& s, const char* what) : s_(s) {
    if (!s.try_lock(what)) raise(LazyError::EngineBusy, s.site, s.busy_reason(what));
    try {
        if (s.poisoned)
            raise(LazyError::PoisonedEngine, s.site,
                  fmt::format("{} refused: an earlier force failed ({})", what, s.poison_reason));
        s.drain_finalize();
    } catch (...) {
        s.unlock();
        throw;
    }
}

Entry::~Entry() {
    try {
        s_.drain_finalize();
    } catch (...) {
        // A destructor cannot report it (an observer that threw): the handles not yet cleaned
        // up stay queued for the next safe point.
    }
    s_.unlock();
}

} // namespace tmmu::lazy
