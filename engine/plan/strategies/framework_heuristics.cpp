#include "plan/strategies/framework_heuristics.h"

#include "plan/strategies/executorch_greedy.h"
#include "plan/strategies/parallel_passes.h"

#include <atomic>
#include <span>

namespace tmmu {

namespace {

using placement::GapRule;

// The one-pass planners, in framework_strategies() order.
std::span<const FrameworkPassStrategy> pass_strategies() {
    static const FrameworkPassStrategy passes[] = {
        FrameworkPassStrategy({"tflm-greedy",
                               "TFLite Micro's greedy planner: size desc (ties reverse index), "
                               "first fit",
                               placement::order_tflm, GapRule::First}),
        FrameworkPassStrategy({"tflite-arena",
                               "TFLite's arena planner: whole-life buffers, then size desc, "
                               "smallest gap",
                               placement::order_tflite_arena, GapRule::Best}),
        FrameworkPassStrategy({"xla-spatial",
                               "XLA's best-fit heap, spatial: size desc, smallest chunk below "
                               "the heap's size",
                               placement::order_by_size, GapRule::BestHeap}),
        FrameworkPassStrategy({"xla-temporal",
                               "XLA's best-fit heap, temporal: lifetime desc, smallest chunk "
                               "below the heap's size",
                               placement::order_by_length, GapRule::BestHeap}),
        FrameworkPassStrategy({"tvm-size",
                               "TVM USMP greedy_by_size: size desc, conflicts desc, first fit",
                               placement::order_tvm_size, GapRule::First}),
        FrameworkPassStrategy({"tvm-conflicts",
                               "TVM USMP greedy_by_conflicts: conflicts desc, size desc, first "
                               "fit",
                               placement::order_tvm_conflicts, GapRule::First}),
        FrameworkPassStrategy({"ort-online",
                               "ONNX Runtime's pattern planner: time order, least waste below "
                               "the heap's size",
                               placement::order_by_birth, GapRule::BestHeap}),
    };
    return passes;
}

} // namespace

std::span<const placement::OrderFn> framework_orders() {
    static const std::vector<placement::OrderFn> orders = [] {
        std::vector<placement::OrderFn> v;
        for (const FrameworkPassStrategy& s : pass_strategies())
            v.push_back(s.pass().order);
        return v;
    }();
    return orders;
}

namespace {

const ExecutorchGreedyStrategy& executorch_greedy() {
    static const ExecutorchGreedyStrategy executorch;
    return executorch;
}

std::string stage_of(std::string_view name) {
    return "strategy " + std::string(name);
}

} // namespace

OffsetSolution FrameworkPassStrategy::solve(const OffsetProblem& p,
                                            const Progress& progress) const {
    check_offset_problem(p, stage_of(pass_.name));
    placement::GapPlacer placer(p);
    std::vector<uint64_t> offsets = placer.place(placement::seed_solution(p), pass_.order(p),
                                                 progress, stage_of(pass_.name), pass_.rule);
    return placement::finish(p, std::move(offsets), pass_.name);
}

const std::vector<const OffsetStrategy*>& framework_strategies() {
    static const std::vector<const OffsetStrategy*> all = [] {
        std::vector<const OffsetStrategy*> v;
        for (const FrameworkPassStrategy& s : pass_strategies())
            v.push_back(&s);
        v.push_back(&executorch_greedy());
        return v;
    }();
    return all;
}

std::optional<OffsetSolution> lowest_framework_plan(const OffsetProblem& p,
                                                    const Progress& progress,
                                                    std::span<const placement::PlacedOrder> placed,
                                                    uint64_t below,
                                                    std::chrono::steady_clock::time_point stop_at,
                                                    placement::OrderCache* orders) {
    check_offset_problem(p, "framework planners");
    std::optional<placement::OrderCache> own;
    placement::OrderCache& cache = orders ? *orders : own.emplace(p);
    const unsigned threads = placement::planner_threads_for(p);
    const std::span<const FrameworkPassStrategy> passes = pass_strategies();
    std::vector<std::optional<OffsetSolution>> plans(passes.size() + 1); // executorch last
    std::atomic<bool> started{false};
    auto out_of_time = [&] {
        return started && stop_at != std::chrono::steady_clock::time_point::max() &&
               std::chrono::steady_clock::now() >= stop_at;
    };
    // Each planner must end strictly below `below` and, in the end, below every earlier one's
    // plan: ties go to the earlier (parallel_passes.h).
    auto planner = [&](size_t k, auto& placer, uint64_t limit) -> std::optional<uint64_t> {
        if (k == passes.size()) {
            if (out_of_time()) return std::nullopt;
            plans[k] = executorch_greedy().solve_below(p, limit, progress);
        } else {
            const FrameworkPass& pass = passes[k].pass();
            const std::vector<uint32_t>& order = cache(pass.order);
            if (placement::already_placed(placed, order, pass.rule) || out_of_time())
                return std::nullopt;
            started = true;
            if (auto offsets = placer().place_below(placement::seed_solution(p), order, limit,
                                                    progress, stage_of(pass.name), pass.rule))
                plans[k] = placement::finish(p, std::move(*offsets), pass.name);
        }
        if (!plans[k]) return std::nullopt;
        return plans[k]->height;
    };
    placement::GapPlacer placer(p);
    placement::run_passes_in_order(p, placer, plans.size(), below, 0, threads, planner);
    std::optional<OffsetSolution> best;
    for (std::optional<OffsetSolution>& plan : plans)
        if (plan && (!best || plan->height < best->height)) best = std::move(plan);
    return best;
}

} // namespace tmmu
