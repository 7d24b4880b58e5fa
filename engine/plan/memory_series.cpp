#include "plan/memory_series.h"

#include <algorithm>
#include <set>

namespace tmmu {
namespace {

struct Event {
    uint64_t time;
    bool is_end; // ends sort before begins at equal time: half-open lifetimes
    size_t buffer;
    bool operator<(const Event& o) const {
        if (time != o.time) return time < o.time;
        return is_end > o.is_end;
    }
};

void fill_arena(const ArenaPlan& arena, const std::vector<uint64_t>& times,
                std::vector<uint64_t>& live, std::vector<uint64_t>& high) {
    const auto& buffers = arena.problem.buffers;
    std::vector<Event> events;
    events.reserve(buffers.size() * 2);
    for (size_t i = 0; i < buffers.size(); ++i) {
        events.push_back({buffers[i].begin, false, i});
        events.push_back({buffers[i].end, true, i});
    }
    std::sort(events.begin(), events.end());
    std::multiset<uint64_t> tops;
    uint64_t live_bytes = 0; // cannot overflow: the validated height bounds every live sum
    size_t next = 0;
    live.resize(times.size());
    high.resize(times.size());
    for (size_t k = 0; k < times.size(); ++k) {
        for (; next < events.size() && events[next].time <= times[k]; ++next) {
            const Event& e = events[next];
            uint64_t top = arena.solution.offsets[e.buffer] + buffers[e.buffer].size;
            if (e.is_end) {
                live_bytes -= buffers[e.buffer].size;
                tops.erase(tops.find(top));
            } else {
                live_bytes += buffers[e.buffer].size;
                tops.insert(top);
            }
        }
        live[k] = live_bytes;
        high[k] = tops.empty() ? 0 : *tops.rbegin();
    }
}

} // namespace

MemorySeries build_memory_series(const std::vector<ArenaPlan>& arenas,
                                 std::vector<uint64_t> times) {
    MemorySeries s;
    s.times = std::move(times);
    s.live_bytes.resize(arenas.size());
    s.high_water.resize(arenas.size());
    for (size_t a = 0; a < arenas.size(); ++a)
        fill_arena(arenas[a], s.times, s.live_bytes[a], s.high_water[a]);
    return s;
}

std::vector<uint64_t> event_times(const std::vector<ArenaPlan>& arenas) {
    std::vector<uint64_t> times;
    for (const auto& a : arenas)
        for (const auto& b : a.problem.buffers) {
            times.push_back(b.begin);
            times.push_back(b.end);
        }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    return times;
}

} // namespace tmmu
