#pragma once
// "greedy-size": Pisarchyk & Lee's greedy by size (the TFLite arena planner family). Buffers by
// size desc (ties: longer lifetime, then index); each goes into the smallest gap, from offset 0,
// between the already placed buffers that overlap it in time, or on top of them when no gap
// fits. Pinned buffers are placed first, at their pins.
#include "plan/strategy.h"

namespace tmmu {

class GreedySizeStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "greedy-size"; }
    std::string_view description() const override {
        return "greedy by size (TFLite): largest first, each into the smallest fitting gap";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

} // namespace tmmu
