#include "plan/strategies/parallel_passes.h"

#include "core/failure.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <thread>

namespace tmmu::placement {

unsigned planner_threads() {
    if (const char* text = std::getenv("TMMU_PLAN_THREADS")) {
        unsigned count = 0;
        const char* end = text + std::strlen(text);
        const auto [at, error] = std::from_chars(text, end, count);
        if (error != std::errc() || at != end || count == 0)
            fail(FailureCode::InvalidArgument, "TMMU_PLAN_THREADS",
                 fmt::format("expects a thread count of at least 1, got '{}'", text));
        return count;
    }
    return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxPlanThreads);
}

unsigned planner_threads_for(const OffsetProblem& p) {
    const unsigned threads = planner_threads();
    return p.buffers.size() > kParallelMinBuffers ? threads : 1;
}

} // namespace tmmu::placement
