#pragma once
// "ffd": seed 003's first-fit-decreasing region sharing. Buffers by size desc (ties: longer
// lifetime, then index); a buffer joins the first region, in creation order, that is at least
// its size, sits at an offset its alignment accepts and holds no lifetime overlapping its own;
// otherwise it opens a new region at the next aligned offset after the last region. Regions
// never overlap in bytes and a region's members never overlap in time, so the plan is valid.
// Pinned buffers keep their pins; regions start above the highest pinned byte.
#include "plan/strategy.h"

#include <optional>

namespace tmmu {

class FfdStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "ffd"; }
    std::string_view description() const override {
        return "first-fit decreasing: buffers share fixed regions when their lifetimes allow";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
    // The plan if it ends below limit (placement::reaches); gives up as soon as its regions
    // reach limit (they are laid out end to end, so the plan could only end higher).
    std::optional<OffsetSolution> solve_below(const OffsetProblem& p, uint64_t limit,
                                              const Progress& progress) const;
};

} // namespace tmmu
