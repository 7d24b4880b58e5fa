#pragma once
// "ffd": seed 003's first-fit-decreasing region sharing. Buffers by size desc (ties: longer
// lifetime, then index); a buffer joins the first region, in creation order, that is at least
// its size, sits at an offset its alignment accepts and holds no lifetime overlapping its own;
// otherwise it opens a new region at the next aligned offset after the last region. Regions
// never overlap in bytes and a region's members never overlap in time, so the plan is valid.
// Pinned buffers keep their pins; regions start above the highest pinned byte.
#include "plan/strategy.h"

namespace tmmu {

class FfdStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "ffd"; }
    std::string_view description() const override {
        return "first-fit decreasing: buffers share fixed regions when their lifetimes allow";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

} // namespace tmmu
