#pragma once
// The improvement phase of "optimal" for time-connected groups too large for the exact search
// (optimal.cpp's kMaxSearchItems): a large-neighbourhood search around the group's peak. Each
// step asks for a plan a little lower than the current one: the buffers reaching above the
// target must move, so they form a window together with the highest buffers alive at the same
// times (kWindowItems / 2 of them, then kWindowItems when that fails); every other buffer alive
// then stays where it is, as a pin, and the exact decision search (optimal_search.h) re-places
// the window under the target. A found placement is kept (the group's top drops); a failed one
// halves the step, down to top / 4096. It stops when the budget's nodes or its work
// (NodeBudget::work_limit) run out: deterministic for a node budget; the result is valid by
// construction (window items avoid the pins and each other).
#include "plan/offset_problem.h"
#include "plan/strategies/optimal_search.h"

#include <cstdint>
#include <vector>

namespace tmmu::optimal {

inline constexpr size_t kWindowItems = 400;

// Lowers max(offset + size) over members (indices of unpinned buffers of p forming one
// time-connected group) while it stays above floor, spending nodes and work of budget (both
// limits are honoured). Only members' offsets change. Returns the group's new top.
uint64_t improve_group(const OffsetProblem& p, const std::vector<uint32_t>& members, uint64_t floor,
                       NodeBudget& budget, std::vector<uint64_t>& offsets);

} // namespace tmmu::optimal
