#pragma once
// The benchmark programs' timing rows: "  what   12.3 ms   target < 2000 ms ok".
#include <chrono>
#include <fmt/format.h>

namespace tmmu::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A row with its target when target_ms > 0, saying whether it was met.
inline void row(const char* what, double ms, double target_ms = 0) {
    if (target_ms > 0)
        fmt::print("  {:<46} {:>9.1f} ms   target < {:.0f} ms {}\n", what, ms, target_ms,
                   ms < target_ms ? "ok" : "MISSED");
    else
        fmt::print("  {:<46} {:>9.1f} ms\n", what, ms);
}

} // namespace tmmu::bench
