#include "report/report_data.h"

#include "session_iterations.h"
#include "session_source.h"

#include "core/failure.h"
#include "core/units.h"
#include "encoding/sha256.h"
#include "ir/dynamic_dims.h"
#include "plan/plan_summary.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace tmmu::sessions::report {
namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep) {
    std::string out;
    for (const std::string& s : v)
        out += (out.empty() ? "" : std::string(sep)) + s;
    return out;
}

std::string capacity_text(uint64_t c) {
    return c == UINT64_MAX ? "unbounded" : format_bytes(c) + fmt::format(" ({} B)", c);
}

std::vector<Fact> input_facts(const Session& s, const Plan& p) {
    const SessionInput& in = s.input;
    std::vector<Fact> f;
    f.push_back({"source", in.source_path});
    if (!in.source_sha256.empty()) f.push_back({"source SHA-256", in.source_sha256});
    if (in.onnx) f.push_back({"ONNX bindings", bindings_text(in)});
    if (in.iterations) {
        f.push_back({"iterations", history_text(*in.iterations)});
        for (const IterationOutcome& i : in.iterations->decided)
            f.push_back({fmt::format("iteration {}", i.iteration), iteration_decision(i)});
    }
    f.push_back({"model kind", in.is_problem ? "offset-assignment problem (CSV)" : "IR graph"});
    f.push_back({"mode", mode_text(s)});
    // After iterations the plan's shapes are the last replan's; the first plan's are in the
    // iterations' line.
    if (in.iterations)
        f.push_back({"plan shapes", binding_text(p.dims)});
    else if (request_shapes_model(in))
        f.push_back({"batch / seq", fmt::format("{} / {}", in.request.batch, in.request.seq)});
    f.push_back({"strategy", in.options.strategy});
    if (!in.options.shard.single_rank())
        f.push_back({"shard", describe_shard_spec(in.options.shard)});
    if (in.options.search_budget)
        f.push_back({"search budget", fmt::format("{} nodes", in.options.search_budget)});
    if (in.options.search_budget_ms)
        f.push_back({"search budget",
                     fmt::format("{} ms (not reproducible)", in.options.search_budget_ms)});
    // The arenas the plan was made with (a CSV problem uses one arena whatever the policy).
    for (const ArenaPlan& a : p.arenas)
        f.push_back(
            {"arena " + a.config.name,
             fmt::format(
                 "capacity {}, alignment {} B{}", capacity_text(a.config.capacity),
                 a.config.alignment,
                 a.config.page_size == 0
                     ? std::string()
                     : fmt::format(", pages of {} ({} committed)", format_bytes(a.config.page_size),
                                   format_bytes(a.config.committed_bytes(a.metrics.peak_bytes))))});
    if (!in.is_problem) {
        std::vector<std::string> routes;
        for (size_t r = 0; r < in.options.policy.arena_of_role.size(); ++r)
            routes.push_back(
                fmt::format("{}: {}", role_name(Role(r)), in.options.policy.arena_of_role[r]));
        f.push_back({"routes", join(routes, ", ")});
    }
    return f;
}

Table metrics_table(const Plan& p) {
    Table t{{"arena", "strategy", "peak", "lower bound", "over LB", "slots", "max live", "buffers",
             "tensors", "reuse", "fragmentation", "saved"},
            {false, false, true, true, true, true, true, true, true, true, true, true},
            {}};
    for (const ArenaPlan& a : p.arenas) {
        const ArenaMetrics& m = a.metrics;
        t.rows.push_back({a.config.name, a.strategy, format_bytes(m.peak_bytes),
                          format_bytes(m.lower_bound),
                          fmt::format("{:.2f}%", (m.peak_over_bound - 1.0) * 100.0),
                          fmt::format("{}", m.slot_count), fmt::format("{}", m.max_live),
                          fmt::format("{}", m.buffers), fmt::format("{}", m.tensors),
                          fmt::format("{:.4f}", m.reuse_ratio),
                          fmt::format("{:.2f}%", m.internal_fragmentation * 100.0),
                          format_bytes(arena_reuse(a).saved_bytes)});
    }
    return t;
}

Table tensor_table(const Plan& p, size_t max_rows) {
    Table t{{"id", "name", "role", "arena", "slot", "offset", "size", "align", "life"},
            {false, false, false, false, true, true, true, true, true},
            {}};
    std::vector<size_t> order(p.tensors.size());
    std::iota(order.begin(), order.end(), size_t(0));
    // Largest first; equal sizes keep the plan's ascending-id order (stable).
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return p.tensors[a].size > p.tensors[b].size; });
    order.resize(std::min(order.size(), max_rows));
    for (size_t i : order) {
        const PlannedTensor& x = p.tensors[i];
        std::string arena = x.arena < p.arenas.size() ? p.arenas[x.arena].config.name : "?";
        t.rows.push_back({x.id, x.name == x.id ? "" : x.name, std::string(role_name(x.role)), arena,
                          fmt::format("{}", x.slot), fmt::format("{}", x.offset),
                          format_bytes(x.size), fmt::format("{}", x.alignment),
                          fmt::format("[{}, {})", x.life.begin, x.life.end)});
    }
    return t;
}

} // namespace

const Plan& checked_plan(const Session& s) {
    if (!s.plan)
        fail(FailureCode::CorruptCheckpoint, fmt::format("session {}", s.summary.id),
             "the stored plan does not decode" +
                 (s.altered_reason.empty() ? std::string() : " (" + s.altered_reason + ")") +
                 "; there is nothing to export");
    return *s.plan;
}

std::string mode_text(const Session& s) {
    return std::string(mode_name(planned_mode(s.input)));
}

ReportData report_data(const Session& s, size_t max_tensor_rows) {
    const Plan& p = checked_plan(s);
    const SessionSummary& m = s.summary;
    ReportData d;
    // Id 0: a plan exported without being recorded (the studio's File > Export of a fresh plan).
    std::string title = m.title.empty() ? "(untitled)" : m.title;
    d.heading = m.id > 0 ? fmt::format("Session {}: {}", m.id, title) : "Plan: " + title;
    if (s.altered)
        d.altered = "ALTERED: this session failed its integrity check (" + s.altered_reason +
                    "). The report shows the session as it is stored now.";
    d.facts.push_back({"created", m.created.empty() ? "not recorded" : m.created});
    d.facts.push_back({"program version", "tmmu " + s.program_version});
    if (!m.tags.empty()) d.facts.push_back({"tags", join(m.tags, ", ")});
    if (!s.notes.empty()) d.facts.push_back({"notes", s.notes});
    for (Fact& f : input_facts(s, p))
        d.facts.push_back(std::move(f));
    if (const std::string retained = retention_text(p); !retained.empty())
        d.facts.push_back({"activation retention", retained});
    d.facts.push_back({"IR hash", s.ir_hash});
    d.facts.push_back({"plan hash", m.plan_hash});
    if (s.altered) d.facts.push_back({"decoded plan hash", to_hex(p.plan_hash)});
    d.metrics = metrics_table(p);
    d.plan_notes = p.notes;
    d.tensors = tensor_table(p, max_tensor_rows);
    d.tensors_total = p.tensors.size();
    return d;
}

} // namespace tmmu::sessions::report
