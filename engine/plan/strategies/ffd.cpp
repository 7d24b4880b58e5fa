#include "plan/strategies/ffd.h"

#include "core/checked.h"
#include "plan/strategies/placement.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace tmmu {

namespace {

// A byte range shared by buffers with pairwise disjoint lifetimes, kept as begin -> end.
struct Region {
    uint64_t offset;
    uint64_t size;
    std::map<uint64_t, uint64_t> lives;

    // The only member that can overlap [b, e) is the last one beginning before e, because
    // members are disjoint and ordered: every earlier one ends before that one begins.
    bool is_free(uint64_t b, uint64_t e) const {
        auto it = lives.lower_bound(e);
        return it == lives.begin() || std::prev(it)->second <= b;
    }
    void add(uint64_t b, uint64_t e) { lives.emplace_hint(lives.lower_bound(b), b, e); }
};

} // namespace

OffsetSolution FfdStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return *solve_below(p, placement::kNoLimit, progress);
}

std::optional<OffsetSolution> FfdStrategy::solve_below(const OffsetProblem& p, uint64_t limit,
                                                       const Progress& progress) const {
    check_offset_problem(p, "strategy ffd");
    progress.check_cancel("strategy ffd");
    placement::Seed seed = placement::seed_solution(p);
    std::vector<Region> regions;
    uint64_t next_offset = seed.pinned_top;
    const std::vector<uint32_t> order = placement::order_by_size(p);
    for (size_t k = 0; k < order.size(); ++k) {
        uint32_t i = order[k];
        if ((k & 1023) == 0) progress.check_cancel("strategy ffd");
        if (seed.placed[i]) continue;
        const Buffer& b = p.buffers[i];
        // Regions are opened in size-descending order, so those large enough form a prefix.
        Region* home = nullptr;
        for (Region& r : regions) {
            if (r.size < b.size) break;
            if (r.offset % b.alignment == 0 && r.is_free(b.begin, b.end)) {
                home = &r;
                break;
            }
        }
        if (!home) {
            uint64_t offset = align_up(next_offset, b.alignment, "ffd region offset");
            next_offset = placement::end_of(offset, b.size, i);
            // The plan's height is at least the top of its regions.
            if (placement::reaches(next_offset, limit)) return std::nullopt;
            home = &regions.emplace_back(Region{offset, b.size, {}});
        }
        home->add(b.begin, b.end);
        seed.offsets[i] = home->offset;
    }
    OffsetSolution plan = placement::finish(p, std::move(seed.offsets), name());
    if (placement::reaches(plan.height, limit)) return std::nullopt; // the pins may be higher
    return plan;
}

} // namespace tmmu
