#pragma once
#include "plan/plan.h"

namespace tmmu::test {

// Two arenas, six tensors, one of them a view: small enough to check by hand (see the .cpp).
// Its plan hash is computed, so it round-trips through checkpoints and traces.
Plan sample_plan();

} // namespace tmmu::test
