#include "runtime/weights.h"

#include "core/checked.h"
#include "core/splitmix.h"

#include <string_view>

namespace tmmu::runtime {

namespace {

uint64_t fnv1a(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text)
        h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    return h;
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

} // namespace

WeightStore zeroed_weights(const ExecutionPlan& plan) {
    WeightStore w;
    uint64_t total = 0;
    for (const WeightDesc& d : plan.weights) {
        w.offset.push_back(total);
        total = checked_add(total, (d.view.elements() + 15) / 16 * 16, "weights"); // 64 B apart
    }
    w.data.assign(total, 0.0f);
    return w;
}

WeightStore random_weights(const ExecutionPlan& plan, uint64_t seed) {
    WeightStore w = zeroed_weights(plan);
    for (size_t i = 0; i < plan.weights.size(); ++i) {
        const WeightDesc& d = plan.weights[i];
        const bool norm_scale = d.view.rank == 1 && ends_with(d.name, "weight");
        const bool bias = ends_with(d.name, "bias");
        const float scale = norm_scale ? 0.1f : bias ? 0.02f : 0.08f;
        uint64_t state = seed ^ fnv1a(d.name);
        float* out = w.data.data() + w.offset[i];
        for (uint64_t e = 0; e < d.view.elements(); ++e) {
            // 24 random bits to a uniform in [-1, 1): exact in f32, the same on every machine.
            const float u = float(int64_t(splitmix64(state) >> 40) - (1 << 23)) / float(1 << 23);
            out[e] = (norm_scale ? 1.0f : 0.0f) + scale * u;
        }
    }
    return w;
}

} // namespace tmmu::runtime
