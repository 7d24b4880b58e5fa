#include "plan/plan_summary.h"

#include "core/checked.h"

#include <algorithm>
#include <array>

namespace tmmu {

PlanTotals plan_totals(const Plan& plan) {
    PlanTotals t;
    for (const ArenaPlan& a : plan.arenas) {
        t.peak_bytes = checked_add(t.peak_bytes, a.metrics.peak_bytes, "totals.peak_bytes");
        t.lower_bound = checked_add(t.lower_bound, a.metrics.lower_bound, "totals.lower_bound");
        t.slot_count = checked_add(t.slot_count, a.metrics.slot_count, "totals.slots");
        t.buffers = checked_add(t.buffers, a.metrics.buffers, "totals.buffers");
    }
    return t;
}

std::optional<Role> dominant_role(const Plan& plan, uint32_t arena) {
    std::array<size_t, kRoleCount> count{};
    for (const PlannedTensor& t : plan.tensors)
        if (t.arena == arena) ++count[size_t(t.role)];
    const auto best = std::max_element(count.begin(), count.end());
    if (*best == 0) return std::nullopt;
    return Role(best - count.begin());
}

uint64_t plan_time_end(const Plan& plan) {
    if (plan.mode) return std::max<uint64_t>(plan.execution_order.size(), 1);
    uint64_t end = 1;
    for (const PlannedTensor& t : plan.tensors)
        end = std::max<uint64_t>(end, t.life.end);
    return end;
}

} // namespace tmmu
