#pragma once
// "auto": runs slots, ffd, greedy-size, best-fit, multi-order, tflm-greedy and tflite-arena and
// keeps the lowest height (ties go to the earlier one in that list). The solution's producer
// names the winner.
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
