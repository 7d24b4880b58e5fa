#include "plan/plan_summary.h"

#include "core/checked.h"
#include "core/units.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <numeric>
#include <vector>

namespace tmmu {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// Buffer indices by offset (ties: index), the order both figures below walk in.
std::vector<size_t> by_offset(const OffsetProblem& p, const std::vector<uint64_t>& offsets) {
    std::vector<size_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
    return order;
}

// Stacked in the plan's own offset order, each buffer at the first offset its alignment allows
// above the last: without sharing that is never above the plan (each buffer lands at or below
// its own offset), so saved_bytes measures sharing, not a better order of padding.
uint64_t isolated_height(const OffsetProblem& p, const std::vector<size_t>& order) {
    uint64_t top = 0;
    for (size_t i : order) {
        const Buffer& b = p.buffers[i];
        const uint64_t mask = b.alignment - 1;
        if (top > UINT64_MAX - mask) return UINT64_MAX;
        top = saturating_add((top + mask) & ~mask, b.size);
    }
    return top;
}

// Sweeps the byte ranges in offset order, keeping those still open by their end: each range
// overlaps exactly the open ones it finds, which on(i, open) is given (a multimap from end to
// buffer index). Empty buffers share nothing.
template <class On>
void sweep_overlaps(const OffsetProblem& p, const std::vector<uint64_t>& offsets,
                    const std::vector<size_t>& order, On on) {
    std::multimap<uint64_t, uint32_t> open;
    for (size_t i : order) {
        if (p.buffers[i].size == 0) continue;
        open.erase(open.begin(), open.upper_bound(offsets[i]));
        on(i, open);
        open.emplace(offsets[i] + p.buffers[i].size, uint32_t(i)); // fits: the plan's height does
    }
}

} // namespace

ArenaReuse arena_reuse(const ArenaPlan& arena) {
    ArenaReuse r;
    const std::vector<size_t> order = by_offset(arena.problem, arena.solution.offsets);
    r.isolated_bytes = isolated_height(arena.problem, order);
    const uint64_t peak = arena.metrics.peak_bytes;
    r.saved_bytes = r.isolated_bytes > peak ? r.isolated_bytes - peak : 0;
    sweep_overlaps(arena.problem, arena.solution.offsets, order,
                   [&r](size_t, const auto& open) { r.sharing_pairs += open.size(); });
    return r;
}

std::vector<std::pair<uint32_t, uint32_t>> sharing_pairs(const ArenaPlan& arena,
                                                         uint64_t max_pairs) {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    sweep_overlaps(
        arena.problem, arena.solution.offsets, by_offset(arena.problem, arena.solution.offsets),
        [&](size_t i, const auto& open) {
            for (auto it = open.begin(); it != open.end() && pairs.size() < max_pairs; ++it)
                pairs.emplace_back(std::min(uint32_t(i), it->second),
                                   std::max(uint32_t(i), it->second));
        });
    return pairs;
}

std::vector<uint32_t> buffers_sharing_bytes(const ArenaPlan& arena, uint32_t buffer, uint64_t begin,
                                            uint64_t end) {
    const std::vector<Buffer>& buffers = arena.problem.buffers;
    const std::vector<uint64_t>& offsets = arena.solution.offsets;
    std::vector<uint32_t> out;
    if (begin >= end) return out; // an empty tensor shares no bytes
    for (uint32_t j = 0; j < buffers.size(); ++j)
        if (j != buffer && buffers[j].size != 0 && offsets[j] < end &&
            begin < offsets[j] + buffers[j].size)
            out.push_back(j);
    return out;
}

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

uint64_t aligned_bound(const ArenaPlan& a) {
    return std::max(a.metrics.lower_bound, aligned_lower_bound_bytes(a.problem));
}

uint64_t aligned_bound(const Plan& plan) {
    uint64_t sum = 0;
    for (const ArenaPlan& a : plan.arenas)
        sum = checked_add(sum, aligned_bound(a), "totals.aligned_bound");
    return sum;
}

uint64_t reused_tensors(const Plan& plan, const PlanTotals& totals) {
    return plan.tensors.size() > totals.slot_count ? plan.tensors.size() - totals.slot_count : 0;
}

uint64_t bytes_over_bound(const PlanTotals& totals) {
    return totals.peak_bytes > totals.lower_bound ? totals.peak_bytes - totals.lower_bound : 0;
}

ArenaReuse plan_reuse(const Plan& plan) {
    ArenaReuse sum;
    for (const ArenaPlan& a : plan.arenas) {
        const ArenaReuse r = arena_reuse(a);
        sum.isolated_bytes = saturating_add(sum.isolated_bytes, r.isolated_bytes);
        sum.saved_bytes = saturating_add(sum.saved_bytes, r.saved_bytes);
        sum.sharing_pairs = saturating_add(sum.sharing_pairs, r.sharing_pairs);
    }
    return sum;
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

std::string retention_text(const Plan& plan) {
    if (!plan.retention) return {};
    const ActivationRetention& r = *plan.retention;
    const std::string written = "the " + format_bytes(r.forward_bytes) + " the forward pass writes";
    const char* none = plan.mode == Mode::Inference ? "inference has no backward pass"
                                                    : "the schedule has no backward pass";
    if (plan.mode == Mode::Inference || r.backward_start == kNone)
        return fmt::format("none of {} ({} buffer{}): {}", written, r.forward_storages,
                           r.forward_storages == 1 ? "" : "s", none);
    const std::string when = plan.mode == Mode::Forward
                                 ? "after this schedule"
                                 : fmt::format("at step {}", r.backward_start);
    return fmt::format("{} ({:.1f}%) of {} is held into the backward pass {} ({} of {} buffer{})",
                       format_bytes(r.retained_bytes), r.ratio() * 100.0, written, when,
                       r.retained_storages, r.forward_storages, r.forward_storages == 1 ? "" : "s");
}

std::string retention_inconsistency(const Plan& plan, bool schedule_known) {
    if (!plan.retention) return {};
    size_t buffers = 0;
    for (const ArenaPlan& a : plan.arenas)
        buffers += a.problem.buffers.size();
    return retention_inconsistency(
        *plan.retention, plan.mode,
        schedule_known ? std::optional<size_t>(plan.execution_order.size()) : std::nullopt,
        buffers);
}

} // namespace tmmu
