#pragma once
// Framework planners, reimplemented faithfully (issue 16) so that `auto` can be held to never
// plan above them: each keeps its framework's buffer order, tie-breaking and gap rule. Pinned
// buffers stand for the frameworks' offline-planned ones and go first, at their pins. Where a
// framework breaks ties by tensor name, the buffer index stands for the name (tensor ids are
// zero-padded in index order).
//
// "tflm-greedy": TensorFlow Lite Micro's GreedyMemoryPlanner. Size desc; equal sizes in
//   reverse index order (it fills its sort arrays from the tail and sorts them stably); each
//   buffer at the lowest offset, among the buffers overlapping it in time, where it fits.
// "tflite-arena": TensorFlow Lite's ArenaPlanner over its SimpleMemoryArena. The buffers that
//   live through the whole problem first, by index; then size desc, then begin asc (further
//   ties by index); each buffer in the smallest gap that holds it among the buffers overlapping
//   it in time (the lowest of equal gaps), else on top of them.
// "xla-spatial", "xla-temporal": XLA's GlobalDecreasingSizeBestFitHeap. Spatial: size desc,
//   then live range length desc, then index; temporal: length desc, then size desc, then index.
//   Its heap rule: the smallest free chunk among the buffers overlapping in time, where the
//   space between their top and the heap's current size counts as a chunk (tried last); the
//   heap grows only when no chunk fits, and then the buffer sits on top of the overlapping ones.
// "tvm-size", "tvm-conflicts": TVM USMP's greedy_by_size (size desc, then conflict count desc,
//   then name desc) and greedy_by_conflicts (conflict count desc, then size desc, then name
//   desc). Each buffer starts at 0 and steps above every conflicting placed buffer, taken in
//   offset order, that it would overlap: the lowest offset that fits.
// "ort-online": ONNX Runtime's MemPatternPlanner, which plans online as the graph runs: buffers
//   in allocation order (begin asc; one step's outputs in index order), each in the gap of least
//   waste among the blocks overlapping it in time, with the heap rule above.
// "executorch-greedy": its own file, executorch_greedy.h.
#include "plan/strategies/placement.h"
#include "plan/strategy.h"

#include <chrono>
#include <optional>
#include <span>

namespace tmmu {

// One placement pass: a framework's order and gap rule.
struct FrameworkPass {
    std::string_view name;
    std::string_view description;
    placement::OrderFn order;
    placement::GapRule rule;
};

class FrameworkPassStrategy final : public OffsetStrategy {
  public:
    explicit FrameworkPassStrategy(FrameworkPass pass) : pass_(pass) {}
    std::string_view name() const override { return pass_.name; }
    std::string_view description() const override { return pass_.description; }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
    const FrameworkPass& pass() const { return pass_; }

  private:
    FrameworkPass pass_;
};

// Every framework planner, in the order above (executorch-greedy last).
const std::vector<const OffsetStrategy*>& framework_strategies();

// The lowest of the framework planners' plans (ties: the earlier in framework_strategies())
// if it ends below `below`: what `auto` and `optimal` hold themselves to, passing the height of
// the plan they hold. Each planner gives up as soon as its plan reaches the lowest height so
// far (it could no longer win), so planners that lose cost a fraction of a run. On problems of
// more than placement::kParallelMinBuffers buffers the planners run side by side
// (parallel_passes.h: the same answer for any number of threads). A one-pass planner whose order
// and rule equal a pass in `placed` is skipped: the caller already holds a plan at or below that
// pass's, so the skipped planner could not win. No planner starts after stop_at (the first that
// runs always does): how a time-budgeted "optimal" keeps its time. The orders come from the
// caller's cache where it passes one.
std::optional<OffsetSolution> lowest_framework_plan(
    const OffsetProblem& p, const Progress& progress,
    std::span<const placement::PlacedOrder> placed = {}, uint64_t below = placement::kNoLimit,
    std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max(),
    placement::OrderCache* orders = nullptr);

// The orders of the one-pass framework planners, in framework_strategies() order: what a
// caller may have its cache make ahead of lowest_framework_plan.
std::span<const placement::OrderFn> framework_orders();

} // namespace tmmu
