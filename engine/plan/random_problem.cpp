#include "plan/random_problem.h"

#include <algorithm>
#include <random>

namespace tmmu {

namespace {

// Log-uniform from 64 B to 128 MiB, rounded up to a multiple of 64.
uint64_t log_uniform_size(std::mt19937_64& rng) {
    const uint64_t log2 = 6 + rng() % 21;
    const uint64_t size = (uint64_t(1) << log2) + rng() % (uint64_t(1) << log2);
    return (size + 63) & ~uint64_t(63);
}

} // namespace

OffsetProblem realistic_random_problem(uint64_t seed, size_t n) {
    std::mt19937_64 rng(seed);
    OffsetProblem p;
    p.buffers.reserve(n);
    // Integer-only draws (std::uniform_int_distribution's output is implementation-defined, so
    // use raw rng() values) keep the problem identical on every standard library.
    for (size_t i = 0; i < n; ++i) {
        Buffer b;
        b.begin = i / 2 + rng() % 4;
        uint64_t r = rng() % 100;
        uint64_t length = r < 80 ? 1 + rng() % 8 : r < 97 ? 1 + rng() % 64 : 1 + rng() % 512;
        b.end = b.begin + length;
        b.size = log_uniform_size(rng);
        b.alignment = 64;
        p.buffers.push_back(b);
    }
    return p;
}

OffsetProblem dense_random_problem(uint64_t seed, size_t n, uint64_t live) {
    std::mt19937_64 rng(seed);
    OffsetProblem p;
    p.buffers.reserve(n);
    const uint64_t lengths = 2 * std::max<uint64_t>(live, 1) - 1;
    for (size_t i = 0; i < n; ++i) {
        Buffer b;
        b.begin = rng() % n;
        b.end = b.begin + 1 + rng() % lengths;
        b.size = log_uniform_size(rng);
        b.alignment = 64;
        p.buffers.push_back(b);
    }
    return p;
}

} // namespace tmmu
