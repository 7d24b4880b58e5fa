#include "plan/memory_series.h"

#include "core/assert.h"
#include "core/checked.h"

#include <algorithm>
#include <cmath>
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
                TMMU_ASSERT(live_bytes >= buffers[e.buffer].size,
                            "a buffer ends only after it began (ends sort first at equal times)");
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

// Sample i of a step function holds until the next sample, the last one until end (at least
// one unit).
uint64_t sample_end(const std::vector<uint64_t>& times, size_t n, size_t i, uint64_t end) {
    return i + 1 < n ? times[i + 1] : std::max<uint64_t>(end, times[i] + 1);
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

std::vector<std::vector<uint64_t>>
stack_over_arenas(const std::vector<std::vector<uint64_t>>& per_arena, size_t points) {
    std::vector<std::vector<uint64_t>> stack;
    std::vector<uint64_t> sum(points, 0);
    for (const std::vector<uint64_t>& one : per_arena) {
        for (size_t i = 0; i < points && i < one.size(); ++i)
            sum[i] = checked_add(sum[i], one[i], "memory series sum");
        stack.push_back(sum);
    }
    return stack;
}

std::vector<uint64_t> sum_over_arenas(const std::vector<std::vector<uint64_t>>& per_arena,
                                      size_t points) {
    std::vector<std::vector<uint64_t>> stack = stack_over_arenas(per_arena, points);
    return stack.empty() ? std::vector<uint64_t>(points, 0) : std::move(stack.back());
}

std::vector<SeriesPoint> downsample_max(const std::vector<uint64_t>& times,
                                        const std::vector<uint64_t>& values, uint64_t end,
                                        size_t buckets) {
    const size_t n = std::min(times.size(), values.size());
    if (n == 0) return {};
    return downsample_max(times, values, end, buckets, double(times[0]),
                          double(sample_end(times, n, n - 1, end)));
}

std::vector<SeriesPoint> downsample_max(const std::vector<uint64_t>& times,
                                        const std::vector<uint64_t>& values, uint64_t end,
                                        size_t buckets, double from, double to) {
    std::vector<SeriesPoint> points;
    const size_t n = std::min(times.size(), values.size());
    if (n == 0 || buckets == 0 || !(to > from)) return points;
    auto until = [&](size_t i) { return sample_end(times, n, i, end); };
    // Samples [first, stop) overlap [from, to): the one holding `from` up to the last one
    // starting before `to`.
    const auto begin = times.begin(), last = times.begin() + long(n);
    size_t first = size_t(std::upper_bound(begin, last, from) - begin);
    first = first > 0 ? first - 1 : 0;
    if (double(until(first)) <= from) ++first;
    const size_t stop = size_t(std::lower_bound(begin, last, to) - begin);
    if (stop <= first) return points;
    if (stop - first <= buckets) {
        points.reserve(2 * (stop - first));
        for (size_t i = first; i < stop; ++i) {
            points.push_back({double(times[i]), values[i]});
            points.push_back({double(until(i)), values[i]});
        }
        return points;
    }
    const double width = (to - from) / double(buckets);
    auto bucket_of = [&](double t) {
        const double b = std::floor((t - from) / width);
        return std::min(buckets - 1, size_t(std::max(0.0, b)));
    };
    // Samples tile time without overlap, so this visits (stop - first) + buckets (bucket,
    // sample) pairs. More samples than buckets means buckets wider than one time unit.
    std::vector<uint64_t> max_of(buckets, 0);
    for (size_t i = first; i < stop; ++i) {
        const size_t b0 = bucket_of(std::max(double(times[i]), from));
        const size_t b1 = std::max(b0, bucket_of(std::min(double(until(i)), to) - 0.5));
        for (size_t b = b0; b <= b1; ++b)
            max_of[b] = std::max(max_of[b], values[i]);
    }
    points.reserve(2 * buckets);
    for (size_t b = 0; b < buckets; ++b) {
        points.push_back({from + double(b) * width, max_of[b]});
        points.push_back({from + double(b + 1) * width, max_of[b]});
    }
    return points;
}

} // namespace tmmu
