#include "plan/offset_problem.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/radix_sort.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <queue>
#include <set>

namespace tmmu {

namespace {

// Two pinned buffers that share bytes while both live: no plan can keep both pins. A sweep over
// the pins by begin time; the pins live at once are kept by offset, pairwise apart in bytes (a
// pin that met one would have failed), so a new pin can only meet its neighbours there.
void check_pins_apart(const OffsetProblem& p, std::string_view where) {
    std::vector<size_t> pins;
    for (size_t i = 0; i < p.buffers.size(); ++i)
        if (p.buffers[i].pinned && p.buffers[i].size > 0) pins.push_back(i);
    std::sort(pins.begin(), pins.end(), [&p](size_t a, size_t b) {
        return p.buffers[a].begin != p.buffers[b].begin ? p.buffers[a].begin < p.buffers[b].begin
                                                        : a < b;
    });
    auto bytes_end = [&p](size_t i) {
        const uint64_t pin = *p.buffers[i].pinned;
        uint64_t end;
        // The message is formatted only on overflow: this runs for every pin.
        if (__builtin_add_overflow(pin, p.buffers[i].size, &end))
            checked_add(pin, p.buffers[i].size, fmt::format("buffer {} pin + size", i));
        return end;
    };
    std::map<uint64_t, size_t> live; // pin -> buffer
    // (end, pin) of the live pins, the soonest end on top.
    using Ending = std::pair<uint64_t, uint64_t>;
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending;
    auto collide = [&](size_t a, size_t b) {
        if (b < a) std::swap(a, b);
        const Buffer& x = p.buffers[a];
        const Buffer& y = p.buffers[b];
        fail(FailureCode::AddressCollision, fmt::format("{} buffers {} and {}", where, a, b),
             fmt::format("pinned to bytes [{}, {}) and [{}, {}), both live in [{}, {})", *x.pinned,
                         bytes_end(a), *y.pinned, bytes_end(b), std::max(x.begin, y.begin),
                         std::min(x.end, y.end)));
    };
    for (size_t i : pins) {
        const Buffer& b = p.buffers[i];
        while (!ending.empty() && ending.top().first <= b.begin) {
            live.erase(ending.top().second);
            ending.pop();
        }
        auto above = live.lower_bound(*b.pinned);
        if (above != live.end() && above->first < bytes_end(i)) collide(i, above->second);
        if (above != live.begin() && bytes_end(std::prev(above)->second) > *b.pinned)
            collide(i, std::prev(above)->second);
        live.emplace(*b.pinned, i);
        ending.push({b.end, *b.pinned});
    }
}

} // namespace

void check_offset_problem(const OffsetProblem& p, std::string_view where) {
    bool pinned = false;
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        if (b.end <= b.begin)
            fail(FailureCode::InvalidArgument, fmt::format("{} buffer {}", where, i),
                 fmt::format("lifetime [{}, {}) is empty; expected end > begin", b.begin, b.end));
        if (!is_power_of_two(b.alignment))
            fail(FailureCode::AlignmentViolation, fmt::format("{} buffer {}.alignment", where, i),
                 fmt::format("alignment {} is not a power of two", b.alignment));
        if (b.pinned && *b.pinned % b.alignment != 0)
            fail(FailureCode::AlignmentViolation, fmt::format("{} buffer {}.pinned", where, i),
                 fmt::format("pinned offset {} is not a multiple of its alignment {}", *b.pinned,
                             b.alignment));
        pinned |= b.pinned.has_value();
    }
    if (pinned) check_pins_apart(p, where);
}

uint64_t aligned_lower_bound_bytes(const OffsetProblem& p) {
    uint64_t align = UINT64_MAX;
    for (const Buffer& b : p.buffers)
        if (b.size > 0) align = std::min(align, b.alignment);
    if (align == UINT64_MAX) return 0;
    struct Event {
        uint64_t time;
        size_t buffer;
    };
    std::vector<Event> begins, ends, scratch;
    std::vector<uint64_t> padding(p.buffers.size(), 0);
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        if (b.size == 0 || b.end <= b.begin) continue;
        padding[i] = (align - b.size % align) % align;
        begins.push_back({b.begin, i});
        ends.push_back({b.end, i});
    }
    auto time = [](const Event& e) { return e.time; };
    radix_sort(begins, scratch, time);
    radix_sort(ends, scratch, time);
    // Ends first at equal times, as in lower_bound_bytes. `live` holds the rounded sizes.
    uint64_t live = 0;
    uint64_t best = 0;
    std::multiset<uint64_t> live_padding;
    size_t e = 0;
    for (const Event& begin : begins) {
        for (; e < ends.size() && ends[e].time <= begin.time; ++e) {
            const size_t i = ends[e].buffer;
            live -= p.buffers[i].size + padding[i];
            live_padding.erase(live_padding.find(padding[i]));
        }
        const size_t i = begin.buffer;
        // Past 2^64 bytes the rounding is no bound a plan could meet: the plain one stands.
        if (__builtin_add_overflow(live, p.buffers[i].size, &live) ||
            __builtin_add_overflow(live, padding[i], &live))
            return lower_bound_bytes(p);
        live_padding.insert(padding[i]);
        best = std::max(best, live - *live_padding.rbegin());
    }
    return best;
}

uint64_t lower_bound_bytes(const OffsetProblem& p) {
    // Begins and ends sorted apart (stable radix sorts on the time), then merged: at equal times
    // ends go first, because a buffer ending at t and one beginning at t are never live together
    // under half-open lifetimes. (A comparison sort of both together took five times as long at
    // a million buffers.)
    struct Event {
        uint64_t time;
        uint64_t size;
    };
    std::vector<Event> begins, ends, scratch;
    begins.reserve(p.buffers.size());
    ends.reserve(p.buffers.size());
    for (const Buffer& b : p.buffers) {
        if (b.size == 0 || b.end <= b.begin) continue;
        begins.push_back({b.begin, b.size});
        ends.push_back({b.end, b.size});
    }
    auto time = [](const Event& e) { return e.time; };
    radix_sort(begins, scratch, time);
    radix_sort(ends, scratch, time);
    uint64_t live = 0;
    uint64_t best = 0;
    size_t e = 0;
    for (const Event& begin : begins) {
        for (; e < ends.size() && ends[e].time <= begin.time; ++e)
            live -= ends[e].size;
        live = checked_add(live, begin.size, "lower bound: live bytes");
        best = std::max(best, live);
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
