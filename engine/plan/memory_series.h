#pragma once
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tmmu {

// Live bytes and high-water mark of every arena at each of `times` (sorted ascending).
// A buffer is live at t when begin <= t < end. O((n + |times|) log n) per arena.
MemorySeries build_memory_series(const std::vector<ArenaPlan>& arenas, std::vector<uint64_t> times);

// The time points worth charting for a bare problem: every distinct begin and end.
std::vector<uint64_t> event_times(const std::vector<ArenaPlan>& arenas);

// Running point-by-point sums of per-arena series: row a adds arenas 0..a (the bands of a
// stacked chart). Rows may be shorter than `points`. Throws Failure(AllocationOverflow) when a
// sum does not fit in 64 bits.
std::vector<std::vector<uint64_t>>
stack_over_arenas(const std::vector<std::vector<uint64_t>>& per_arena, size_t points);
// The last row of the stack: the "all arenas" curve (all zeros without arenas).
std::vector<uint64_t> sum_over_arenas(const std::vector<std::vector<uint64_t>>& per_arena,
                                      size_t points);

struct SeriesPoint {
    double time = 0;
    uint64_t value = 0;
};

// Reduces a step function to at most 2 * buckets polyline points for drawing: values[i] holds
// over [times[i], times[i+1]) and the last one up to end (at least one unit). Each bucket
// carries the maximum of every sample overlapping it, so peaks survive at any zoom; a series
// with at most `buckets` samples is returned exactly (two points per sample). times must be
// ascending. The studio's charts and the reports draw through this one function.
std::vector<SeriesPoint> downsample_max(const std::vector<uint64_t>& times,
                                        const std::vector<uint64_t>& values, uint64_t end,
                                        size_t buckets);
// The same over the time range [from, to) only: the buckets split [from, to) evenly and samples
// outside it are skipped (a range holding at most `buckets` samples keeps them exact). Charts
// that follow a zoomed view sample just what is visible.
std::vector<SeriesPoint> downsample_max(const std::vector<uint64_t>& times,
                                        const std::vector<uint64_t>& values, uint64_t end,
                                        size_t buckets, double from, double to);

} // namespace tmmu
