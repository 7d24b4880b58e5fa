#pragma once
// "auto": runs slots, ffd, greedy-size, best-fit, multi-order and the framework planners
// (framework_heuristics.h) and keeps the lowest height (ties go to the earlier one in that
// list); it stops as soon as a plan reaches the lower bound, and ffd and the framework planners
// give up as soon as they could no longer win. The solution's producer names the winner.
#include "plan/strategy.h"

namespace tmmu {

class AutoStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "auto"; }
    std::string_view description() const override {
        return "runs every heuristic above and keeps the lowest plan";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

} // namespace tmmu
