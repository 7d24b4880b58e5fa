#include "sample_plan.h"

#include "encoding/sha256.h"
#include "plan/plan_hash.h"

#include <string>

namespace tmmu::test {

// Two arenas, six tensors, one of them a view: small enough to check by hand.
//   parameters (cap 1 MiB, align 128): w1 [0,4) 256 B @0 slot 0; w2 [0,4) 100 B @256 slot 1
//   activations (cap 4096, align 64):  a [0,2) 512 B @0 slot 0, a.view = a + 128 (64 B);
//                                      b [1,3) 256 B @512 slot 1; c [2,4) 512 B @0 slot 0
Plan sample_plan() {
    Plan p;
    p.source = "sample.json";
    p.mode = Mode::Training;
    p.strategy = "auto";
    p.ir_hash = sha256(std::string_view("sample-ir"));
    for (size_t i = 0; i < p.replay_token.size(); ++i)
        p.replay_token[i] = static_cast<uint8_t>(i);
    p.execution_order = {"n0", "n1", "n2", "n3"};
    ArenaPlan params;
    params.config = {"parameters", 1u << 20, 128};
    params.problem.capacity = params.config.capacity;
    params.problem.buffers = {{0, 4, 256, 128, std::nullopt}, {0, 4, 100, 128, std::nullopt}};
    params.buffer_names = {"w1", "w2"};
    params.solution = {{0, 256}, 356, "best-fit"};
    params.slot_of_buffer = {0, 1};
    params.strategy = params.solution.producer;
    params.metrics = {356, 356, 2, 2, 2, 2, 1.0, 0.0, 0.0, 1234};
    ArenaPlan acts;
    acts.config = {"activations", 4096, 64};
    acts.problem.capacity = acts.config.capacity;
    acts.problem.buffers = {
        {0, 2, 512, 64, std::nullopt}, {1, 3, 256, 64, std::nullopt}, {2, 4, 512, 64, 0}};
    acts.buffer_names = {"a", "b", "c"};
    acts.solution = {{0, 512, 0}, 768, "greedy-size"};
    acts.slot_of_buffer = {0, 1, 0};
    acts.strategy = acts.solution.producer;
    acts.metrics = {768, 768, 2, 2, 3, 4, 1.0, 0.5, 0.0, 5678};
    p.arenas = {params, acts};
    auto t = [](std::string id, Role role, uint32_t arena, uint32_t buffer, uint32_t slot,
                uint64_t offset, uint64_t size, uint64_t align, uint32_t b, uint32_t e) {
        PlannedTensor x;
        x.id = id;
        x.name = id + " (display)";
        x.role = role;
        x.arena = arena;
        x.buffer = buffer;
        x.slot = slot;
        x.offset = offset;
        x.size = size;
        x.alignment = align;
        x.life = {b, e};
        return x;
    };
    p.tensors = {t("a", Role::Activation, 1, 0, 0, 0, 512, 64, 0, 2),
                 t("a.view", Role::Activation, 1, 0, 0, 128, 64, 64, 0, 2),
                 t("b", Role::Activation, 1, 1, 1, 512, 256, 64, 1, 3),
                 t("c", Role::Output, 1, 2, 0, 0, 512, 64, 2, 4),
                 t("w1", Role::Parameter, 0, 0, 0, 0, 256, 128, 0, 4),
                 t("w2", Role::Parameter, 0, 1, 1, 256, 100, 128, 0, 4)};
    p.series.times = {0, 1, 2, 3};
    p.series.live_bytes = {{356, 356, 356, 356}, {512, 768, 768, 512}};
    p.series.high_water = {{356, 356, 356, 356}, {512, 768, 768, 512}};
    p.notes = {"sample note"};
    p.total_plan_ns = 6912;
    p.plan_hash = compute_plan_hash(p);
    return p;
}

} // namespace tmmu::test
