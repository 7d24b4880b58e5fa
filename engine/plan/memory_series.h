#pragma once
#include "plan/plan.h"

namespace tmmu {

// Live bytes and high-water mark of every arena at each of `times` (sorted ascending).
// A buffer is live at t when begin <= t < end. O((n + |times|) log n) per arena.
MemorySeries build_memory_series(const std::vector<ArenaPlan>& arenas, std::vector<uint64_t> times);

// The time points worth charting for a bare problem: every distinct begin and end.
std::vector<uint64_t> event_times(const std::vector<ArenaPlan>& arenas);

} // namespace tmmu
