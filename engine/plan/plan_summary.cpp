#include "plan/plan_summary.h"

#include "core/checked.h"

#include <algorithm>

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

uint64_t plan_time_end(const Plan& plan) {
    if (plan.mode) return std::max<uint64_t>(plan.execution_order.size(), 1);
    uint64_t end = 1;
    for (const PlannedTensor& t : plan.tensors)
        end = std::max<uint64_t>(end, t.life.end);
    return end;
}

} // namespace tmmu
