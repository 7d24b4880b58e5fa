#include "plan/strategies/slots.h"

#include "core/checked.h"
#include "plan/linear_scan.h"
#include "plan/strategies/placement.h"

namespace tmmu {

OffsetSolution SlotsStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    check_offset_problem(p, "strategy slots");
    progress.check_cancel("strategy slots");
    placement::Seed seed = placement::seed_solution(p);
    // Slots cover the non-pinned buffers, zero-size ones included (they are live tensors and
    // take a slot in the seed's scan). The arena alignment is already folded into each
    // buffer's alignment by the caller, hence default alignment 1.
    OffsetProblem free_part;
    std::vector<uint32_t> original; // free_part index -> p index
    for (uint32_t i = 0; i < p.buffers.size(); ++i) {
        if (p.buffers[i].pinned) continue;
        free_part.buffers.push_back(p.buffers[i]);
        original.push_back(i);
    }
    SlotAssignment slots = assign_slots(free_part, 1);
    free_part = {}; // large problems: release the copy before the layout
    std::vector<uint64_t> slot_offset(slots.slot_count);
    uint64_t offset = seed.pinned_top;
    for (uint32_t k = 0; k < slots.slot_count; ++k) {
        slot_offset[k] = align_up(offset, slots.slot_alignment[k], "slot offset");
        offset = checked_add(slot_offset[k], slots.slot_size[k], "slot offset + slot size");
    }
    for (size_t j = 0; j < original.size(); ++j)
        seed.offsets[original[j]] = slot_offset[slots.slot_of[j]];
    return placement::finish(p, std::move(seed.offsets), name());
}

} // namespace tmmu
