#pragma once
// "executorch-greedy": ExecuTorch's greedy memory planner (exir memory_planning.greedy with
// overlapping allocations allowed, its default), which shares "objects" rather than gaps.
// Buffers by size desc; equal sizes in reverse index order (it inserts each spec after its
// equals in an ascending list, from a set we take in index order, and then reverses the list).
// Each buffer goes, in the objects' creation order, into
//   1. the first object none of whose buffers overlaps it in time, at the object's start;
//   2. else the first object where it fits, above every buffer of the object that overlaps it
//      in time, within the object's size (fixed when the object was made: its first buffer's);
//   3. else a new object of its size.
// The objects are then laid out one after another (above the pins here, which stand for its
// pre-planned inputs). The scan over objects makes it quadratic in the worst case, as the
// original is.
#include "plan/strategy.h"

#include <optional>

namespace tmmu {

class ExecutorchGreedyStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "executorch-greedy"; }
    std::string_view description() const override {
        return "ExecuTorch's greedy planner: size desc, the first shared object free in time";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
    // The plan if it ends below limit; gives up as soon as the objects made reach limit (they
    // are laid out end to end, so the plan could only end higher).
    std::optional<OffsetSolution> solve_below(const OffsetProblem& p, uint64_t limit,
                                              const Progress& progress) const;
};

} // namespace tmmu
