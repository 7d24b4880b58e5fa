#include "io/plan_json.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "encoding/sha256.h"
#include "plan/plan_summary.h"

#include <nlohmann/json.hpp>

namespace tmmu {

namespace {

using ordered_json = nlohmann::ordered_json;

double ns_to_ms(uint64_t ns) {
    return static_cast<double>(ns) / 1e6;
}

ordered_json tensor_json(const Plan& plan, const PlannedTensor& t) {
    if (t.arena >= plan.arenas.size())
        fail(FailureCode::InvalidArgument, "tensor '" + t.id + "'.arena",
             "arena index " + std::to_string(t.arena) + " is out of range");
    ordered_json j;
    j["id"] = t.id;
    j["name"] = t.name;
    j["role"] = std::string(role_name(t.role));
    j["arena"] = plan.arenas[t.arena].config.name;
    j["slot"] = t.slot;
    j["offset"] = t.offset;
    j["size"] = t.size;
    j["alignment"] = t.alignment;
    j["begin"] = t.life.begin;
    j["end"] = t.life.end;
    return j;
}

} // namespace

ordered_json capacity_json(uint64_t capacity) {
    return capacity == UINT64_MAX ? ordered_json() : ordered_json(capacity);
}

ordered_json arena_metrics_json(const ArenaPlan& a) {
    const ArenaMetrics& m = a.metrics;
    ordered_json j;
    j["capacity"] = capacity_json(a.config.capacity);
    j["alignment"] = a.config.alignment;
    // Only a paged arena: the arena metrics of unpaged ones read as they always have.
    if (a.config.page_size != 0) {
        j["page_size"] = a.config.page_size;
        j["committed_bytes"] = a.config.committed_bytes(m.peak_bytes);
    }
    j["strategy"] = a.strategy;
    j["peak_bytes"] = m.peak_bytes;
    j["lower_bound"] = m.lower_bound;
    j["peak_over_bound"] = m.peak_over_bound;
    j["slots"] = m.slot_count;
    j["max_live"] = m.max_live;
    j["buffers"] = m.buffers;
    j["tensors"] = m.tensors;
    j["reuse_ratio"] = m.reuse_ratio;
    j["internal_fragmentation"] = m.internal_fragmentation;
    const ArenaReuse reuse = arena_reuse(a);
    j["isolated_bytes"] = reuse.isolated_bytes;
    j["saved_bytes"] = reuse.saved_bytes;
    j["sharing_pairs"] = reuse.sharing_pairs;
    return j;
}

ordered_json metrics_json(const Plan& plan) {
    ordered_json out = ordered_json::array();
    for (const ArenaPlan& a : plan.arenas) {
        ordered_json j;
        j["arena"] = a.config.name;
        j.update(arena_metrics_json(a));
        out.push_back(std::move(j));
    }
    return out;
}

ordered_json totals_json(const Plan& plan) {
    const PlanTotals totals = plan_totals(plan);
    ordered_json j;
    j["peak_bytes"] = totals.peak_bytes;
    j["lower_bound"] = totals.lower_bound;
    const ArenaReuse reuse = plan_reuse(plan);
    j["isolated_bytes"] = reuse.isolated_bytes;
    j["saved_bytes"] = reuse.saved_bytes;
    j["sharing_pairs"] = reuse.sharing_pairs;
    j["plan_ms"] = ns_to_ms(plan.total_plan_ns);
    return j;
}

namespace {

// Seed 000 0.I's minimum metrics and section 7's metric schema under the seed's own names
// (the figures "arenas" and "totals" carry under the product's): ratios as numbers, the time an
// integer count of nanoseconds.
ordered_json seed_metrics_json(const Plan& plan) {
    const PlanTotals totals = plan_totals(plan);
    ordered_json peaks = ordered_json::object(), usage = ordered_json::object(),
                 max_live = ordered_json::object();
    for (const ArenaPlan& a : plan.arenas) {
        peaks[a.config.name] = a.metrics.peak_bytes;
        usage[a.config.name] = a.config.committed_bytes(a.metrics.peak_bytes);
        max_live[a.config.name] = a.metrics.max_live;
    }
    const auto ratio = [](uint64_t num, uint64_t den) {
        return den == 0 ? 0.0 : double(num) / double(den);
    };
    ordered_json j;
    j["peak_logical_slots"] = totals.slot_count;
    j["peak_physical_bytes_per_arena"] = std::move(peaks);
    j["peak_tmmu_usage_per_arena"] = std::move(usage);
    j["memory_reuse_ratio"] = ratio(reused_tensors(plan, totals), plan.tensors.size());
    j["max_live"] = std::move(max_live);
    j["internal_fragmentation_ratio"] = ratio(bytes_over_bound(totals), totals.peak_bytes);
    if (plan.retention) j["activation_retention_ratio"] = plan.retention->ratio();
    j["allocation_time_ns"] = plan.total_plan_ns;
    return j;
}

} // namespace

ordered_json series_json(const Plan& plan) {
    const MemorySeries& s = plan.series;
    ordered_json arenas = ordered_json::object();
    for (size_t i = 0; i < plan.arenas.size(); ++i) {
        ordered_json a;
        a["live_bytes"] = i < s.live_bytes.size() ? s.live_bytes[i] : std::vector<uint64_t>{};
        a["high_water"] = i < s.high_water.size() ? s.high_water[i] : std::vector<uint64_t>{};
        arenas[plan.arenas[i].config.name] = std::move(a);
    }
    ordered_json j;
    j["times"] = s.times;
    j["arenas"] = std::move(arenas);
    return j;
}

ordered_json binding_json(const DimBinding& b) {
    ordered_json j = ordered_json::object();
    for (const auto& [name, value] : b)
        j[name] = value;
    return j;
}

ordered_json iterations_json(const std::vector<IterationOutcome>& iterations) {
    ordered_json a = ordered_json::array();
    for (const IterationOutcome& i : iterations) {
        ordered_json j;
        j["iteration"] = i.iteration;
        j["dims"] = binding_json(i.dims);
        j["replanned"] = i.replanned;
        if (i.replanned) j["old_plan_hash"] = to_hex(i.old_plan_hash);
        j["plan_hash"] = to_hex(i.plan_hash);
        j["plan_dims"] = binding_json(i.plan_binding);
        j["peak_bytes"] = i.peak_bytes;
        j["replan_key"] = to_hex(i.replan_key);
        a.push_back(std::move(j));
    }
    return a;
}

ordered_json shard_json(const ShardSpec& spec) {
    ordered_json roles = ordered_json::array();
    for (Role r : spec.roles)
        roles.push_back(role_name(r));
    return {{"rank", spec.rank}, {"world_size", spec.world_size}, {"roles", std::move(roles)}};
}

ordered_json retention_json(const ActivationRetention& r) {
    ordered_json j;
    j["forward_bytes"] = r.forward_bytes;
    j["retained_bytes"] = r.retained_bytes;
    j["ratio"] = r.ratio();
    j["forward_buffers"] = r.forward_storages;
    j["retained_buffers"] = r.retained_storages;
    j["backward_start"] =
        r.backward_start == kNone ? ordered_json() : ordered_json(r.backward_start);
    return j;
}

std::string plan_to_json(const Plan& plan, bool include_tensors,
                         const std::vector<IterationOutcome>& iterations,
                         const ordered_json& extra) {
    ordered_json arenas = ordered_json::array();
    for (const ArenaPlan& a : plan.arenas) {
        ordered_json j;
        j["name"] = a.config.name;
        j.update(arena_metrics_json(a));
        j["plan_ms"] = ns_to_ms(a.metrics.plan_ns);
        arenas.push_back(std::move(j));
    }
    ordered_json j;
    j["tmmu_version"] = TMMU_VERSION;
    j["source"] = plan.source;
    j["mode"] = mode_name(plan.mode);
    j["strategy"] = plan.strategy;
    j["ir_hash"] = to_hex(plan.ir_hash);
    j["plan_hash"] = to_hex(plan.plan_hash);
    if (!plan.shard.single_rank()) j["shard"] = shard_json(plan.shard);
    if (!plan.dims.empty()) j["dims"] = binding_json(plan.dims);
    j["arenas"] = std::move(arenas);
    j["totals"] = totals_json(plan);
    j["status"] = "success"; // a failed run writes no plan JSON: its trace ends in the failure
    j["metrics"] = seed_metrics_json(plan);
    if (plan.retention) j["activation_retention"] = retention_json(*plan.retention);
    j["series"] = series_json(plan);
    if (include_tensors) {
        ordered_json tensors = ordered_json::array();
        for (const PlannedTensor& t : plan.tensors)
            tensors.push_back(tensor_json(plan, t));
        j["tensors"] = std::move(tensors);
        ordered_json pairs = ordered_json::object();
        for (const ArenaPlan& a : plan.arenas) {
            ordered_json list = ordered_json::array();
            for (const auto& [first, second] : sharing_pairs(a, kListedSharingPairs))
                list.push_back({a.buffer_names[first], a.buffer_names[second]});
            pairs[a.config.name] = {{"count", arena_reuse(a).sharing_pairs},
                                    {"pairs", std::move(list)}};
        }
        j["sharing_pairs"] = std::move(pairs);
    }
    if (!iterations.empty()) j["iterations"] = iterations_json(iterations);
    j["notes"] = plan.notes;
    if (extra.is_object()) j.update(extra);
    return json_text(j, 2) + "\n";
}

} // namespace tmmu
