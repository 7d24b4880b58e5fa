#pragma once
// Where a tensor is drawn in a bar its buffer shares with others. An in-place chain (x1 written
// over x0, x2 over x1, ...) or an alias group holds one buffer whose tensors' lifetimes overlap
// at each hand-over step, so their bars covered one another and their labels overprinted. Each
// tensor that takes the buffer over is drawn from the middle of that overlap to the middle of
// the next: the chain reads as one bar split into its tensors. A tensor living inside the one
// before it (a view of its base: dying first, or living exactly as long) keeps its whole
// lifetime, drawn over its base.
#include "plan/plan.h"

#include <vector>

namespace tmmu::views {

struct Tenure {
    double begin = 0;
    double end = 0;
    bool takesOver = true; // false for a tensor living inside the one before it (a view)
};

// Per planned tensor, indexed as plan.tensors. A lifetime of no steps counts as one step, as
// the timelines draw it. Deterministic: ties in birth go by death, then by index.
std::vector<Tenure> buffer_tenures(const Plan& plan);

} // namespace tmmu::views
