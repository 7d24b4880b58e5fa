#include "io/trace.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "encoding/sha256.h"
#include "io/file_io.h"
#include "io/plan_json.h"
#include "plan/linear_scan.h"
#include "plan/plan_summary.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

namespace tmmu {

namespace {

using ordered_json = nlohmann::ordered_json;
__extension__ typedef unsigned __int128 u128; // sums of uint64 byte counts times 10^k

std::string u128_to_string(u128 v) {
    std::string s;
    do {
        s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v != 0);
    std::reverse(s.begin(), s.end());
    return s;
}

// num / den rounded half-up to `decimals` places (0 <= decimals <= 18).
std::string fixed(u128 num, u128 den, int decimals) {
    u128 scale = 1;
    for (int i = 0; i < decimals; ++i)
        scale *= 10;
    const u128 q = den == 0 ? 0 : (num * scale * 2 + den) / (den * 2);
    std::string frac = u128_to_string(q % scale);
    if (decimals == 0) return u128_to_string(q / scale);
    frac.insert(0, static_cast<size_t>(decimals) - frac.size(), '0');
    return u128_to_string(q / scale) + "." + frac;
}

std::string line(const ordered_json& j) {
    // Replacing invalid UTF-8 (ids from a CSV, say) keeps the writer total; valid text is
    // written unchanged and non-ASCII stays UTF-8.
    return json_text(j) + "\n";
}

const ArenaPlan& arena_of(const Plan& plan, const PlannedTensor& t) {
    if (t.arena >= plan.arenas.size())
        fail(FailureCode::InvalidArgument, "tensor '" + t.id + "'.arena",
             "arena index " + std::to_string(t.arena) + " is out of range");
    const ArenaPlan& a = plan.arenas[t.arena];
    if (t.buffer >= a.problem.buffers.size())
        fail(FailureCode::InvalidArgument, "tensor '" + t.id + "'.buffer",
             "buffer index " + std::to_string(t.buffer) + " is out of range in arena '" +
                 a.config.name + "'");
    return a;
}

ordered_json header(const Plan& plan) {
    ordered_json arenas = ordered_json::array();
    for (const ArenaPlan& a : plan.arenas) {
        ordered_json config = {{"name", a.config.name},
                               {"capacity", capacity_json(a.config.capacity)},
                               {"alignment", a.config.alignment}};
        if (a.config.page_size != 0) config["page_size"] = a.config.page_size;
        arenas.push_back(std::move(config));
    }
    ordered_json j;
    j["record"] = "allocation_header";
    j["ir_hash"] = to_hex(plan.ir_hash);
    j["mode"] = mode_name(plan.mode);
    j["replay_token_prefix"] = to_hex(plan.replay_token).substr(0, 8);
    j["strategy"] = plan.strategy;
    if (!plan.shard.single_rank()) j["shard"] = shard_json(plan.shard);
    if (!plan.dims.empty()) j["dims"] = binding_json(plan.dims);
    j["arenas"] = std::move(arenas);
    return j;
}

// Per arena, per buffer: seed 000 II.F's generation of the buffer in its logical slot.
std::vector<std::vector<uint32_t>> generations(const Plan& plan) {
    std::vector<std::vector<uint32_t>> out;
    for (const ArenaPlan& a : plan.arenas) {
        if (a.slot_of_buffer.size() != a.problem.buffers.size())
            fail(FailureCode::InvalidArgument, "arena '" + a.config.name + "'",
                 fmt::format("{} slots for {} buffers", a.slot_of_buffer.size(),
                             a.problem.buffers.size()));
        out.push_back(slot_generations(a.problem, a.slot_of_buffer));
    }
    return out;
}

ordered_json tensor_record(const Plan& plan, const PlannedTensor& t,
                           const std::vector<std::vector<uint32_t>>& generation) {
    const ArenaPlan& a = arena_of(plan, t);
    ordered_json j;
    j["record"] = "tensor";
    j["tensor_id"] = t.id;
    j["name"] = t.name;
    j["arena"] = a.config.name;
    j["logical_slot"] = t.slot;
    j["generation"] = generation[t.arena][t.buffer];
    j["logical_address"] = t.offset;
    j["size"] = t.size;
    j["alignment"] = t.alignment;
    j["live_range"] = ordered_json::array({t.life.begin, t.life.end});
    j["bytes"] = a.problem.buffers[t.buffer].size;
    return j;
}

// Seed 000 II.J's resource ledger at the memory series' point `i`, per arena: the bytes of the
// buffers live then, the peak so far (the highest top of the live buffers up to then), and the
// share of the bytes below the current top that no live buffer uses. A plan's buffers all fit,
// so allocation_failures is 0: a buffer that does not fit fails the run (ARENA_TOO_SMALL), and
// its trace is the failure record.
ordered_json ledger_record(const Plan& plan, size_t i, std::vector<uint64_t>& peak_so_far) {
    const MemorySeries& s = plan.series;
    ordered_json allocated = ordered_json::object(), peaks = ordered_json::object(),
                 fragmentation = ordered_json::object();
    for (size_t a = 0; a < plan.arenas.size(); ++a) {
        const std::string& name = plan.arenas[a].config.name;
        // An arena without a row (a restored plan's empty arena) held nothing.
        const auto at = [&](const std::vector<std::vector<uint64_t>>& rows) {
            return a < rows.size() && i < rows[a].size() ? rows[a][i] : uint64_t{0};
        };
        const uint64_t live = at(s.live_bytes), top = at(s.high_water);
        peak_so_far[a] = std::max(peak_so_far[a], top);
        allocated[name] = live;
        peaks[name] = peak_so_far[a];
        fragmentation[name] = fixed(top > live ? top - live : 0, top, 4);
    }
    ordered_json j;
    j["record"] = "ledger";
    j["t"] = s.times[i];
    j["bytes_allocated"] = std::move(allocated);
    j["peak_bytes"] = std::move(peaks);
    j["allocation_failures"] = 0;
    j["internal_fragmentation_ratio"] = std::move(fragmentation);
    return j;
}

ordered_json summary(const Plan& plan) {
    ordered_json peaks = ordered_json::object();
    ordered_json bounds = ordered_json::object();
    for (const ArenaPlan& a : plan.arenas) {
        peaks[a.config.name] = a.metrics.peak_bytes;
        bounds[a.config.name] = a.metrics.lower_bound;
    }
    const PlanTotals totals = plan_totals(plan);
    const u128 peak_sum = totals.peak_bytes, tensors = plan.tensors.size();
    const u128 reused = reused_tensors(plan, totals), wasted = bytes_over_bound(totals);
    ordered_json j;
    j["record"] = "summary";
    j["peak_bytes_per_arena"] = std::move(peaks);
    j["lower_bound_per_arena"] = std::move(bounds);
    j["total_logical_slots"] = totals.slot_count;
    j["reuse_ratio"] = fixed(reused, tensors, 4);
    j["fragmentation_pct"] = fixed(wasted * 100, peak_sum, 2);
    if (plan.retention)
        j["activation_retention_ratio"] =
            fixed(plan.retention->retained_bytes, plan.retention->forward_bytes, 4);
    j["plan_hash"] = to_hex(plan.plan_hash);
    return j;
}

} // namespace

std::string format_fixed(uint64_t numerator, uint64_t denominator, int decimals) {
    if (decimals < 0 || decimals > 18)
        fail(FailureCode::InvalidArgument, "format_fixed decimals",
             "expected 0..18 decimals, got " + std::to_string(decimals));
    return fixed(numerator, denominator, decimals);
}

std::string trace_jsonl(const Plan& plan) {
    std::string out = line(header(plan));
    std::vector<size_t> order(plan.tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return plan.tensors[a].id < plan.tensors[b].id; });
    const std::vector<std::vector<uint32_t>> generation = generations(plan);
    for (size_t i : order)
        out += line(tensor_record(plan, plan.tensors[i], generation));
    std::vector<uint64_t> peak_so_far(plan.arenas.size(), 0);
    for (size_t i = 0; i < plan.series.times.size(); ++i)
        out += line(ledger_record(plan, i, peak_so_far));
    out += line(summary(plan));
    return out;
}

void write_trace_file(const Plan& plan, const std::string& path,
                      const std::vector<IterationOutcome>& iterations) {
    write_output(path, schedule_trace_jsonl(plan, iterations));
}

std::string replan_record_jsonl(const IterationOutcome& iteration) {
    ordered_json j;
    j["record"] = "replan";
    j["iteration"] = iteration.iteration;
    j["safepoint"] = "iteration_boundary";
    j["old_plan_hash"] = to_hex(iteration.old_plan_hash);
    j["new_plan_hash"] = to_hex(iteration.plan_hash);
    j["dims"] = binding_json(iteration.plan_binding);
    j["replan_key"] = to_hex(iteration.replan_key);
    return line(j);
}

std::string schedule_trace_jsonl(const Plan& plan,
                                 const std::vector<IterationOutcome>& iterations) {
    std::string out = trace_jsonl(plan);
    for (const IterationOutcome& i : iterations)
        if (i.replanned) out += replan_record_jsonl(i);
    return out;
}

std::string failure_trace_jsonl(const Failure& failure, const Digest& replay_token,
                                const std::vector<IterationOutcome>& decided) {
    std::string out;
    for (const IterationOutcome& i : decided)
        if (i.replanned) out += replan_record_jsonl(i);
    ordered_json j;
    j["record"] = "failure";
    j["t"] = failure.step() ? ordered_json(*failure.step()) : ordered_json(nullptr);
    j["failure_code"] = failure_code_name(failure.code());
    j["failure_operator"] = failure.operator_name().empty() ? ordered_json(nullptr)
                                                            : ordered_json(failure.operator_name());
    j["replay_token_prefix"] = to_hex(replay_token).substr(0, 8);
    j["where"] = failure.where();
    j["message"] = failure.message();
    return out + line(j);
}

} // namespace tmmu
