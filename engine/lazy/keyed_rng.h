#pragma once
// Keyed random numbers (seed 004, section 11): samples = RNG(algorithm, seed, draw nonce, op
// nonce, element), a pure function of the key, never of a sequential generator state. The
// engine reserves each random op's draw nonce from its persistent RNG state when the op is
// recorded, in program order, so a program draws the same numbers whatever order its values
// are forced in (eager or lazy, read first or last). The generator is Philox4x32-10 (Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3", 2011): the 64-bit seed is its key, and
// its 128-bit counter holds the element's block of four, the op nonce and the draw nonce.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tmmu::lazy {

inline constexpr std::string_view kRngAlgorithm = "philox4x32-10";

// Ten rounds of Philox4x32 on counter under key.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// What a random op's samples depend on, all of it: the persistent basis (the seed; the
// algorithm is kRngAlgorithm) and the op's nonces. Outside compiled regions every random op
// reserves a draw nonce of its own and its op nonce is 0.
struct RngKey {
    uint64_t seed = 0;
    uint64_t draw = 0;
    uint32_t op = 0;
    auto operator<=>(const RngKey&) const = default;
};

// out[i] uniform in [0, 1): the top 24 bits of word i % 4 of block i / 4 (counter {i / 4, op,
// draw low, draw high}), times 2^-24, so every value is exact in f32. InvalidArgument past 2^34
// elements (the block index is 32 bits).
void fill_uniform(const RngKey& key, std::span<float> out);

} // namespace tmmu::lazy
