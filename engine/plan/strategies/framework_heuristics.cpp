#include "plan/strategies/framework_heuristics.h"

#include "plan/strategies/placement.h"

namespace tmmu {

namespace {

// One placement pass: the framework's order, its gap rule.
OffsetSolution place_in_order(const OffsetProblem& p, const Progress& progress,
                              std::string_view name,
                              std::vector<uint32_t> (*order)(const OffsetProblem&),
                              placement::GapRule rule) {
    const std::string stage = "strategy " + std::string(name);
    check_offset_problem(p, stage);
    placement::GapPlacer placer(p);
    std::vector<uint64_t> offsets =
        placer.place(placement::seed_solution(p), order(p), progress, stage, rule);
    return placement::finish(p, std::move(offsets), name);
}

} // namespace

OffsetSolution lowest_framework_plan(const OffsetProblem& p, const Progress& progress) {
    OffsetSolution tflm = TflmGreedyStrategy().solve(p, progress);
    OffsetSolution arena = TfliteArenaStrategy().solve(p, progress);
    return arena.height < tflm.height ? arena : tflm;
}

OffsetSolution TflmGreedyStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return place_in_order(p, progress, name(), placement::order_tflm, placement::GapRule::First);
}

OffsetSolution TfliteArenaStrategy::solve(const OffsetProblem& p, const Progress& progress) const {
    return place_in_order(p, progress, name(), placement::order_tflite_arena,
                          placement::GapRule::Best);
}

} // namespace tmmu
