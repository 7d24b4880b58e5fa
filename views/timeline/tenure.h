#pragma once
// Where a tensor is drawn in a bar its buffer shares with others. An in-place chain (x1 written
// over x0, x2 over x1, ...) or an alias group holds one buffer whose tensors' lifetimes overlap
// at each hand-over step, so their bars covered one another and their labels overprinted. Each
// tensor that takes the buffer over is drawn from the middle of that overlap to the middle of
// the next (or to where the next is born, across a gap in an alias group): the chain reads as
// one bar split into its tensors. A view, or a tensor living inside the one holding the buffer,
// keeps its whole lifetime, drawn over it.
#include "plan/plan.h"

#include <vector>

namespace tmmu::views {

struct Tenure {
    double begin = 0;
    double end = 0;
    bool takesOver = true; // false for a view or one inside the holder: drawn over it
};

// Per planned tensor, indexed as plan.tensors. `views` (views_of) marks the views; without it
// (a plan shown without its graph) a tensor living inside the one before it is taken for one.
// A lifetime of no steps counts as one step, as the timelines draw it. Deterministic: ties in
// birth go by death, then by index.
std::vector<Tenure> buffer_tenures(const Plan& plan, const std::vector<bool>& views = {});

class PlanContext;
// Which of the shown plan's tensors are views in its graph; empty when it has no graph.
std::vector<bool> views_of(const PlanContext& ctx);

} // namespace tmmu::views
