#include "plan/plan.h"

namespace tmmu {

void ArenaMetrics::derive_ratios() {
    const auto peak = static_cast<double>(peak_bytes);
    peak_over_bound = lower_bound == 0 ? 1.0 : peak / static_cast<double>(lower_bound);
    reuse_ratio = tensors == 0 ? 0.0 : 1.0 - double(slot_count) / double(tensors);
    internal_fragmentation =
        peak_bytes == 0 || peak_bytes < lower_bound ? 0.0 : double(peak_bytes - lower_bound) / peak;
}

} // namespace tmmu
