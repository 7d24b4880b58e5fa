#include "lazy/keyed_rng.h"

#include "core/failure.h"

#include <fmt/format.h>

namespace tmmu::lazy {
namespace {

// Philox4x32's multipliers and Weyl key increments (the paper's constants).
constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

} // namespace

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
    for (int round = 0; round < kRounds; ++round) {
        if (round > 0) {
            k[0] += kWeyl0;
            k[1] += kWeyl1;
        }
        const uint64_t p0 = uint64_t(kMultiplier0) * c[0];
        const uint64_t p1 = uint64_t(kMultiplier1) * c[2];
        c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1],
             uint32_t(p0)};
    }
    return c;
}

void fill_uniform(const RngKey& key, std::span<float> out) {
    const uint64_t blocks = (uint64_t(out.size()) + 3) / 4;
    if (blocks > (uint64_t(1) << 32))
        fail(FailureCode::InvalidArgument, "random op",
             fmt::format("{} elements; a random op draws at most 2^34", out.size()));
    const std::array<uint32_t, 2> k = {uint32_t(key.seed), uint32_t(key.seed >> 32)};
    constexpr float kScale = 1.0f / float(1u << 24);
    for (uint64_t b = 0; b < blocks; ++b) {
        const std::array<uint32_t, 4> words =
            philox4x32_10({uint32_t(b), key.op, uint32_t(key.draw), uint32_t(key.draw >> 32)}, k);
        for (uint64_t w = 0; w < 4 && 4 * b + w < out.size(); ++w)
            out[4 * b + w] = float(words[w] >> 8) * kScale;
    }
}

} // namespace tmmu::lazy
