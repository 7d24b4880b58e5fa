#pragma once
// splitmix64 (Steele, Lea and Flood, 2014): a tiny generator whose output depends only on its
// 64-bit state, so seeded values (synthetic weights, a lazy program's uniform initialiser) are
// the same on every machine and compiler.
#include <cstdint>

namespace tmmu {

inline uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace tmmu
