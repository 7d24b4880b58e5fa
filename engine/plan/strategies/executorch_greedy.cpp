#include "plan/strategies/executorch_greedy.h"

#include "core/checked.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace tmmu {

namespace {

constexpr std::string_view kStage = "strategy executorch-greedy";

// A shared object. Invariant: two of its buffers overlap in bytes only if their lifetimes are
// disjoint, and every buffer ends within size bytes of the object's start. top is its skyline:
// piece k covers times [key_k, key_k+1) (the last one to the end of time), and holds the
// highest end, within the object, of its buffers alive then (0: none). A new buffer always sits
// at or above the skyline over its lifetime, so it sets the skyline there to its own end. Both
// of ExecuTorch's tests are range maxima over that function: no scan of the object's buffers.
struct SharedObject {
    uint64_t size = 0;
    uint64_t alignment = 1; // the largest of its buffers': the object's start keeps all aligned
    std::map<uint64_t, uint64_t> top{{0, 0}};
    std::vector<uint32_t> buffers; // in assignment order
    std::vector<uint64_t> offsets; // within the object, per entry of buffers
};

// max of the skyline over [b.begin, b.end), or a value above limit once one is seen.
uint64_t skyline_max(const SharedObject& o, const Buffer& b, uint64_t limit) {
    auto it = std::prev(o.top.upper_bound(b.begin)); // the piece holding b.begin
    uint64_t m = 0;
    for (; it != o.top.end() && it->first < b.end && m <= limit; ++it)
        m = std::max(m, it->second);
    return m;
}

void assign(SharedObject& o, const Buffer& b, uint32_t i, uint64_t offset) {
    const uint64_t after = std::prev(o.top.upper_bound(b.end))->second; // the value at b.end
    o.top.erase(o.top.lower_bound(b.begin), o.top.lower_bound(b.end));
    o.top[b.begin] = offset + b.size;
    o.top.emplace(b.end, after); // kept when a piece already starts there
    o.alignment = std::max(o.alignment, b.alignment);
    o.buffers.push_back(i);
    o.offsets.push_back(offset);
}

} // namespace

OffsetSolution ExecutorchGreedyStrategy::solve(const OffsetProblem& p,
                                               const Progress& progress) const {
    return *solve_below(p, placement::kNoLimit, progress);
}

std::optional<OffsetSolution>
ExecutorchGreedyStrategy::solve_below(const OffsetProblem& p, uint64_t limit,
                                      const Progress& progress) const {
    check_offset_problem(p, kStage);
    placement::Seed seed = placement::seed_solution(p);
    std::vector<SharedObject> objects;
    // The objects' sizes above the pins: the plan's height is at least this.
    uint64_t stacked = seed.pinned_top;
    bool overflowed = false;
    if (placement::reaches(stacked, limit)) return std::nullopt;
    const std::vector<uint32_t> order = placement::order_tflm(p); // size desc, reverse index
    for (size_t k = 0; k < order.size(); ++k) {
        if ((k & 1023) == 0) progress.check_cancel(kStage);
        const uint32_t i = order[k];
        if (seed.placed[i]) continue;
        const Buffer& b = p.buffers[i];
        // Step 1: an object none of whose buffers is alive with b.
        auto free = std::find_if(objects.begin(), objects.end(),
                                 [&](const SharedObject& o) { return skyline_max(o, b, 0) == 0; });
        if (free != objects.end()) {
            assign(*free, b, i, 0);
            continue;
        }
        // Step 2: above the buffers alive with b, within the object's size.
        uint64_t offset = 0;
        auto above = std::find_if(objects.begin(), objects.end(), [&](const SharedObject& o) {
            const uint64_t top = skyline_max(o, b, o.size - b.size);
            if (top > o.size - b.size) return false;
            offset = align_up(top, b.alignment, "executorch-greedy offset");
            return offset <= o.size - b.size;
        });
        if (above != objects.end()) {
            assign(*above, b, i, offset);
            continue;
        }
        objects.push_back(SharedObject{b.size, b.alignment, {{0, 0}}, {}, {}});
        assign(objects.back(), b, i, 0);
        // After an overflow, go on: laying the objects out below reports it.
        overflowed |= __builtin_add_overflow(stacked, b.size, &stacked);
        if (!overflowed && placement::reaches(stacked, limit)) return std::nullopt;
    }
    uint64_t cursor = seed.pinned_top;
    for (const SharedObject& o : objects) {
        const uint64_t start = align_up(cursor, o.alignment, "executorch-greedy object offset");
        for (size_t k = 0; k < o.buffers.size(); ++k)
            seed.offsets[o.buffers[k]] = start + o.offsets[k];
        cursor = checked_add(start, o.size, "executorch-greedy object offset + size");
    }
    OffsetSolution plan = placement::finish(p, std::move(seed.offsets), name());
    // The objects' aligned starts can lift the plan to the limit after all.
    if (placement::reaches(plan.height, limit)) return std::nullopt;
    return plan;
}

} // namespace tmmu
