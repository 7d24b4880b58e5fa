#include "plan/linear_scan.h"

#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace tmmu {

namespace {

// Max number of live buffers over time; ends sort before begins at equal times because
// lifetimes are half-open.
uint32_t count_max_live(const OffsetProblem& p) {
    std::vector<std::pair<uint64_t, int>> events; // (time, +1 begin / -1 end)
    events.reserve(2 * p.buffers.size());
    for (const Buffer& b : p.buffers) {
        events.emplace_back(b.begin, +1);
        events.emplace_back(b.end, -1);
    }
    std::sort(events.begin(), events.end());
    int64_t live = 0;
    int64_t best = 0;
    for (const auto& [time, delta] : events) {
        live += delta;
        best = std::max(best, live);
    }
    return static_cast<uint32_t>(best);
}

std::vector<uint32_t> scan_order(const OffsetProblem& p) {
    std::vector<uint32_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&p](uint32_t a, uint32_t b) {
        const Buffer& x = p.buffers[a];
        const Buffer& y = p.buffers[b];
        if (x.begin != y.begin) return x.begin < y.begin;
        if (x.size != y.size) return x.size > y.size;
        return a < b;
    });
    return order;
}

} // namespace

SlotAssignment assign_slots(const OffsetProblem& p, uint64_t default_alignment) {
    check_offset_problem(p, "arena slot assignment");
    if (p.buffers.size() > UINT32_MAX)
        fail(FailureCode::InvalidArgument, "arena slot assignment",
             fmt::format("{} buffers; at most {} are supported", p.buffers.size(), UINT32_MAX));
    SlotAssignment out;
    out.slot_of.assign(p.buffers.size(), 0);
    using EndSlot = std::pair<uint64_t, uint32_t>; // (end, slot) of a live buffer
    std::priority_queue<EndSlot, std::vector<EndSlot>, std::greater<>> live;
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free_slots;
    for (uint32_t i : scan_order(p)) {
        const Buffer& b = p.buffers[i];
        while (!live.empty() && live.top().first <= b.begin) {
            free_slots.push(live.top().second);
            live.pop();
        }
        uint32_t slot;
        if (!free_slots.empty()) {
            slot = free_slots.top();
            free_slots.pop();
        } else {
            slot = out.slot_count++;
            out.slot_size.push_back(0);
            out.slot_alignment.push_back(default_alignment);
        }
        out.slot_of[i] = slot;
        out.slot_size[slot] = std::max(out.slot_size[slot], b.size);
        out.slot_alignment[slot] = std::max(out.slot_alignment[slot], b.alignment);
        live.emplace(b.end, slot);
    }
    out.max_live = count_max_live(p);
    if (out.slot_count != out.max_live)
        fail(FailureCode::InvalidIrShapes, "arena slot assignment",
             fmt::format("linear scan used {} slots but at most {} buffers are live at once; "
                         "expected them to be equal",
                         out.slot_count, out.max_live));
    return out;
}

std::vector<uint32_t> slot_generations(const OffsetProblem& p,
                                       const std::vector<uint32_t>& slot_of) {
    std::vector<size_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::pair(p.buffers[a].begin, a) < std::pair(p.buffers[b].begin, b);
    });
    std::vector<uint32_t> occupants, generation(p.buffers.size(), 0);
    for (size_t i : order) {
        const uint32_t slot = slot_of.at(i);
        if (slot >= occupants.size()) occupants.resize(size_t(slot) + 1, 0);
        generation[i] = occupants[slot]++;
    }
    return generation;
}

} // namespace tmmu
