#include "plan/offset_problem.h"

#include "core/checked.h"
#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu {

void check_offset_problem(const OffsetProblem& p, std::string_view where) {
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        if (b.end <= b.begin)
            fail(FailureCode::InvalidArgument, fmt::format("{} buffer {}", where, i),
                 fmt::format("lifetime [{}, {}) is empty; expected end > begin", b.begin, b.end));
        if (!is_power_of_two(b.alignment))
            fail(FailureCode::AlignmentViolation, fmt::format("{} buffer {}.alignment", where, i),
                 fmt::format("alignment {} is not a power of two", b.alignment));
    }
}

uint64_t lower_bound_bytes(const OffsetProblem& p) {
    // (time, is_begin, size): at equal times ends (is_begin = 0) sort first, because a buffer
    // ending at t and one beginning at t are never live together under half-open lifetimes.
    struct Event {
        uint64_t time;
        bool is_begin;
        uint64_t size;
    };
    std::vector<Event> events;
    events.reserve(2 * p.buffers.size());
    for (const Buffer& b : p.buffers) {
        if (b.size == 0 || b.end <= b.begin) continue;
        events.push_back({b.begin, true, b.size});
        events.push_back({b.end, false, b.size});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return a.time != b.time ? a.time < b.time : a.is_begin < b.is_begin;
    });
    uint64_t live = 0;
    uint64_t best = 0;
    for (const Event& e : events) {
        if (e.is_begin) {
            live = checked_add(live, e.size, "lower bound: live bytes");
            best = std::max(best, live);
        } else {
            live -= e.size;
        }
    }
    return best;
}

uint64_t solution_height(const OffsetProblem& p, const std::vector<uint64_t>& offsets) {
    if (offsets.size() != p.buffers.size())
        fail(FailureCode::InvalidArgument, "solution_height",
             fmt::format("{} offsets for {} buffers", offsets.size(), p.buffers.size()));
    uint64_t height = 0;
    for (size_t i = 0; i < offsets.size(); ++i) {
        uint64_t top;
        // The message is formatted only on overflow: this runs once per buffer on big arenas.
        if (__builtin_add_overflow(offsets[i], p.buffers[i].size, &top))
            checked_add(offsets[i], p.buffers[i].size, fmt::format("buffer {} offset + size", i));
        height = std::max(height, top);
    }
    return height;
}

} // namespace tmmu
