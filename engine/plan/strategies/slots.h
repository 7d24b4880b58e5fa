#pragma once
// "slots": the seed's reference mapping (AssignLogicalSlots_v1 + MapToVirtualAddresses_v1).
// Linear-scan slots laid out by aligned prefix sum in slot-id order; each buffer sits at its
// slot's offset. Pinned buffers keep their pins and the slots start above the highest pinned
// byte, so no slot can meet a pinned buffer whatever the lifetimes.
#include "plan/strategy.h"

namespace tmmu {

class SlotsStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "slots"; }
    std::string_view description() const override {
        return "seed reference: linear-scan logical slots laid out by aligned prefix sum";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

} // namespace tmmu
