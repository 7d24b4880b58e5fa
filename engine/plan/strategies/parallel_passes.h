#pragma once
// Placement passes that compete for the lowest plan, run side by side with the answer of
// running them one after another. A pass gives up once its plan reaches a height limit, and a
// pass that does not give up gives the same plan whatever the limit was. Run in order, pass k
// counts only strictly below every earlier pass's plan (ties go to the earlier); run side by
// side, each pass starts with the limit one above the lowest plan found so far by any pass (a
// tie with a later pass's plan could still win), which is never below what the sequential run
// would give it. So the passes that return a plan include every one the sequential run keeps,
// and taking the returned plans in pass order, strictly lower only, gives its answer, whatever
// the number of threads and whichever pass finishes first: only the work done differs.
#include "plan/strategies/placement.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <vector>

namespace tmmu::placement {

// Threads for passes that run side by side: TMMU_PLAN_THREADS (a count from 1), else the
// processors', at most kMaxPlanThreads. Throws INVALID_ARGUMENT naming the variable when it is
// not a count.
inline constexpr unsigned kMaxPlanThreads = 4;
unsigned planner_threads();
// Below this many buffers a pass takes well under a millisecond: passes run one after another,
// where starting threads would cost more than it saves.
inline constexpr size_t kParallelMinBuffers = 2048;
// planner_threads() for p, 1 up to kParallelMinBuffers buffers (the variable is read, and a bad
// value refused, either way).
unsigned planner_threads_for(const OffsetProblem& p);

// Runs pass(k, get_placer, limit) for k in [0, count) on up to `threads` threads, this one
// included, each thread with a GapPlacer of p of its own: this thread's is `placer`, and it
// always takes pass 0; a helper builds one the first time a pass asks for it (get_placer()). pass
// returns the height of the plan it found strictly below limit, or nothing (gave up, or skipped).
// limit starts at `below`. Passes after one whose plan reached `bound` are skipped (they could not
// win a tie with it). Every thread stops at its next pass once one has failed; the first
// failure is rethrown after all have stopped.
template <typename Pass>
void run_passes_in_order(const OffsetProblem& p, GapPlacer& placer, size_t count, uint64_t below,
                         uint64_t bound, unsigned threads, Pass pass) {
    std::atomic<uint64_t> limit{below};
    std::atomic<size_t> next{0}, first_at_bound{count};
    std::atomic<bool> failed{false};
    auto work = [&](auto&& get_placer, size_t k) {
        try {
            for (; !failed && k < count; k = next++) {
                if (k > first_at_bound) continue;
                const std::optional<uint64_t> height = pass(k, get_placer, limit.load());
                if (!height) continue;
                for (uint64_t at = limit; *height + 1 < at;) // *height < limit: no overflow
                    limit.compare_exchange_weak(at, *height + 1);
                if (*height <= bound)
                    for (size_t at = first_at_bound; k < at;)
                        first_at_bound.compare_exchange_weak(at, k);
            }
        } catch (...) {
            failed = true;
            throw;
        }
    };
    const size_t mine = next++; // pass 0, whatever the threads: placer always places it
    std::vector<std::future<void>> helpers;
    for (unsigned t = 1; t < std::min<size_t>(threads, count); ++t)
        helpers.push_back(std::async(std::launch::async, [&] {
            std::optional<GapPlacer> own;
            work([&]() -> GapPlacer& { return own ? *own : own.emplace(p); }, next++);
        }));
    std::exception_ptr failure;
    try {
        work([&]() -> GapPlacer& { return placer; }, mine);
    } catch (...) {
        failure = std::current_exception();
    }
    for (std::future<void>& helper : helpers) {
        try {
            helper.get();
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
}

} // namespace tmmu::placement
