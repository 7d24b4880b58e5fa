#pragma once
// The report's two charts, drawn once against Canvas for both HTML (SVG) and PDF:
//  - memory over time of one arena: live bytes (filled), high-water mark, lower bound, peak;
//  - the arena layout: each buffer a time x offset rectangle coloured by its role.
// Both stay small for 100k-tensor plans: the series is reduced to its maximum per output unit and
// rectangles below half a unit in either direction are merged into per-column fills.
#include "report/canvas.h"

#include "plan/plan.h"

#include <vector>

namespace tmmu::sessions::report {

// Arenas worth a chart: those with at least one buffer, in arena order.
std::vector<size_t> charted_arenas(const Plan& plan);

// Each panel fills `area` (title line, axes, plot). Preconditions: arena < plan.arenas.size().
void draw_memory_panel(Canvas& c, const Plan& plan, size_t arena, const Box& area);
void draw_layout_panel(Canvas& c, const Plan& plan, size_t arena, const Box& area);

} // namespace tmmu::sessions::report
