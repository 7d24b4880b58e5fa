#pragma once
#include "plan/offset_problem.h"

#include <cstdint>

namespace tmmu {

// A reproducible problem shaped like a real model's activations: n buffers over about n time
// steps, lifetimes mostly short (a few steps) with a tail of long ones, sizes log-uniform from
// 64 B to 64 MiB. Max live stays in the hundreds whatever n is, as in real graphs.
OffsetProblem realistic_random_problem(uint64_t seed, size_t n);

} // namespace tmmu
