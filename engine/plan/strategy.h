#pragma once
// Offset strategies behind one interface, chosen by name. All are deterministic: the same
// problem gives the same offsets. A strategy never certifies itself: the caller runs the
// independent validator (plan/validator.h) on every solution.
#include "core/progress.h"
#include "plan/offset_problem.h"

#include <memory>
#include <string_view>
#include <vector>

namespace tmmu {

class OffsetStrategy {
  public:
    virtual ~OffsetStrategy() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view description() const = 0;
    // Returns offsets for every buffer. Must honour pinned offsets and alignments. May exceed
    // p.capacity (the validator reports ARENA_TOO_SMALL); must not loop forever.
    virtual OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const = 0;
};

// Registered strategies in a fixed order: slots, ffd, greedy-size, best-fit, the framework
// planners (framework_heuristics.h), multi-order, auto, optimal (auto never runs optimal: it is
// the heuristics' minimum).
const std::vector<const OffsetStrategy*>& all_strategies();
// nullptr when no strategy has that name.
const OffsetStrategy* find_strategy(std::string_view name);

} // namespace tmmu
