#include "plan/validator.h"

#include "core/checked.h"
#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <set>
#include <utility>

namespace tmmu {

namespace {

struct Checker {
    const OffsetProblem& p;
    const std::vector<uint64_t>& offsets;
    std::string_view arena;
    const BufferNamer& namer;

    std::string name(size_t i) const { return namer ? namer(i) : fmt::format("buffer {}", i); }
    std::string where(size_t i) const { return fmt::format("arena '{}' {}", arena, name(i)); }
    uint64_t end(size_t i) const { return offsets[i] + p.buffers[i].size; } // checked first

    void check_buffer(size_t i) const {
        const Buffer& b = p.buffers[i];
        if (b.end <= b.begin)
            fail(FailureCode::InvalidArgument, where(i),
                 fmt::format("lifetime [{}, {}) is empty; expected end > begin", b.begin, b.end));
        if (!is_power_of_two(b.alignment))
            fail(FailureCode::AlignmentViolation, where(i),
                 fmt::format("alignment {} is not a power of two", b.alignment));
        if (offsets[i] % b.alignment != 0)
            fail(FailureCode::AlignmentViolation, where(i),
                 fmt::format("offset {} is not a multiple of its alignment {}", offsets[i],
                             b.alignment));
        if (b.pinned && offsets[i] != *b.pinned)
            fail(FailureCode::AlignmentViolation, where(i),
                 fmt::format("pinned at offset {} but placed at {}", *b.pinned, offsets[i]));
        uint64_t top;
        if (__builtin_add_overflow(offsets[i], b.size, &top))
            checked_add(offsets[i], b.size, where(i) + " offset + size");
    }

    [[noreturn]] void collision(size_t a, size_t b, uint64_t time) const {
        if (b < a) std::swap(a, b);
        const Buffer& x = p.buffers[a];
        const Buffer& y = p.buffers[b];
        fail_at_step(FailureCode::AddressCollision,
                     fmt::format("arena '{}' {} and {}", arena, name(a), name(b)),
                     fmt::format("{} bytes [{}, {}) live [{}, {}) and {} bytes [{}, {}) live [{}, "
                                 "{}) overlap in arena '{}' at time step {}",
                                 name(a), offsets[a], end(a), x.begin, x.end, name(b), offsets[b],
                                 end(b), y.begin, y.end, arena, time),
                     time);
    }

    // The plan above the capacity: where it first goes over, the buffer that does (the
    // earliest-born of those ending above it; the lowest index among equals).
    [[noreturn]] void too_high(uint64_t height) const {
        size_t first = p.buffers.size();
        for (size_t i = 0; i < p.buffers.size(); ++i)
            if (p.buffers[i].size > 0 && end(i) > p.capacity &&
                (first == p.buffers.size() || p.buffers[i].begin < p.buffers[first].begin))
                first = i;
        const std::string over = fmt::format(
            "plan height {} bytes exceeds the arena capacity {} bytes", height, p.capacity);
        // A pin of size 0 above the capacity raises the height without a buffer above it.
        if (first == p.buffers.size())
            fail(FailureCode::ArenaTooSmall, fmt::format("arena '{}'", arena), over);
        const Buffer& b = p.buffers[first];
        fail_at_step(FailureCode::ArenaTooSmall, fmt::format("arena '{}'", arena),
                     fmt::format("{}; first at time step {}, where {} needs bytes [{}, {}) (live "
                                 "[{}, {}))",
                                 over, b.begin, name(first), offsets[first], end(first), b.begin,
                                 b.end),
                     b.begin);
    }

    void check_collisions() const {
        // (time, is_begin, index): ends sort before begins at equal times, since half-open
        // lifetimes [b, e) and [e, f) never share a step.
        std::vector<std::pair<uint64_t, uint64_t>> events; // (time, 2 * index + is_begin)
        for (size_t i = 0; i < p.buffers.size(); ++i) {
            if (p.buffers[i].size == 0) continue; // zero bytes never collide
            events.emplace_back(p.buffers[i].begin, 2 * i + 1);
            events.emplace_back(p.buffers[i].end, 2 * i);
        }
        std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
            if (a.first != b.first) return a.first < b.first;
            if ((a.second & 1) != (b.second & 1)) return (a.second & 1) < (b.second & 1);
            return a.second < b.second;
        });
        // Invariant: the byte ranges in `live` are pairwise disjoint (each was checked when it
        // went in). Ordered by offset, a new range can then only meet its predecessor or its
        // successor: any range further left ends at or before the predecessor begins, any range
        // further right begins at or after the successor ends.
        std::set<std::pair<uint64_t, size_t>> live; // (offset, index)
        for (const auto& [time, code] : events) {
            size_t i = code / 2;
            if ((code & 1) == 0) {
                live.erase({offsets[i], i});
                continue;
            }
            auto it = live.insert({offsets[i], i}).first;
            if (it != live.begin()) {
                size_t prev = std::prev(it)->second;
                if (end(prev) > offsets[i]) collision(prev, i, time);
            }
            if (auto next = std::next(it); next != live.end() && end(i) > next->first)
                collision(i, next->second, time);
        }
    }
};

} // namespace

void validate_solution(const OffsetProblem& p, const std::vector<uint64_t>& offsets,
                       std::string_view arena, const BufferNamer& namer) {
    if (offsets.size() != p.buffers.size())
        fail(FailureCode::InvalidArgument, fmt::format("arena '{}'", arena),
             fmt::format("{} offsets for {} buffers; expected one offset per buffer",
                         offsets.size(), p.buffers.size()));
    const Checker c{p, offsets, arena, namer};
    for (size_t i = 0; i < p.buffers.size(); ++i)
        c.check_buffer(i);
    c.check_collisions();
    uint64_t height = solution_height(p, offsets);
    if (height > p.capacity) c.too_high(height);
}

} // namespace tmmu
