#pragma once
// The seed's UML_OS.TMMU.AssignLogicalSlots_v1: optimal greedy linear scan over the interval
// graph of buffer lifetimes. Buffers whose lifetimes never overlap may share a logical slot;
// the number of slots equals the maximum number of simultaneously live buffers.
#include "plan/offset_problem.h"

#include <cstdint>
#include <vector>

namespace tmmu {

struct SlotAssignment {
    std::vector<uint32_t> slot_of; // per buffer
    uint32_t slot_count = 0;
    std::vector<uint64_t> slot_size;      // per slot: max member size
    std::vector<uint64_t> slot_alignment; // per slot: max(member alignment, default_alignment)
    uint32_t max_live = 0;                // max simultaneously live buffers (independent sweep)
};

// Buffers sorted by (begin asc, size desc, index asc); buffers whose end <= the current begin
// return their slots; each buffer takes the lowest free slot, else a new one. Zero-size buffers
// take slots too (they are live tensors). Throws INVALID_IR_SHAPES at "arena slot assignment"
// when slot_count != max_live (the seed's checked invariant), INVALID_ARGUMENT for an empty
// lifetime. O(n log n).
SlotAssignment assign_slots(const OffsetProblem& p, uint64_t default_alignment);

// Seed 000 II.F's `generation` of each buffer: how many buffers held its logical slot before it
// (0 for the slot's first occupant). A slot's occupants never overlap in time, so ordering
// them by begin (then index) is their order of occupation. slot_of has one entry per buffer.
std::vector<uint32_t> slot_generations(const OffsetProblem& p,
                                       const std::vector<uint32_t>& slot_of);

} // namespace tmmu
