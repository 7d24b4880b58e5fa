#pragma once
#include "plan/offset_problem.h"

#include <cstdint>

namespace tmmu {

// A reproducible problem shaped like a real model's activations: n buffers over about n time
// steps, lifetimes mostly short (a few steps) with a tail of long ones, sizes log-uniform from
// 64 B to 128 MiB. Max live stays in the hundreds whatever n is, as in real graphs.
OffsetProblem realistic_random_problem(uint64_t seed, size_t n);

// A reproducible dense problem, the hard case for placement: lifetimes begin uniformly over n
// time steps and last 1 to 2 * live - 1 steps, so about `live` buffers are live at once (large
// ones among them at every step, unlike real graphs); sizes log-uniform from 64 B to 128 MiB,
// aligned to 64.
OffsetProblem dense_random_problem(uint64_t seed, size_t n, uint64_t live);

} // namespace tmmu
