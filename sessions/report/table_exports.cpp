// Exports for other tools: the tensor table as CSV, and the whole session as one JSON document.
#include "report/formats.h"
#include "report/report_data.h"
#include "report/text_util.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "io/plan_json.h"
#include "replay.h"
#include "session_iterations.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace tmmu::sessions::report {
namespace {

using ojson = nlohmann::ordered_json;

// Per plan tensor, its dtype name from the stored graph; "" for offset problems. The dtype is
// not part of the plan, so a stored model that no longer loads only loses this column: the
// placement data exported comes from the verified plan, not from the model text.
std::vector<std::string> tensor_dtypes(const Session& s, const Plan& p) {
    std::vector<std::string> out(p.tensors.size());
    if (s.input.is_problem) return out;
    std::optional<Graph> g;
    try {
        g = load_input(s.input).graph;
    } catch (const Failure&) {
        return out;
    }
    if (!g) return out;
    std::unordered_map<std::string_view, DType> by_id;
    for (const Tensor& t : g->tensors)
        by_id.emplace(t.id, t.dtype);
    for (size_t i = 0; i < p.tensors.size(); ++i)
        if (auto it = by_id.find(p.tensors[i].id); it != by_id.end())
            out[i] = std::string(dtype_name(it->second));
    return out;
}

std::string arena_name(const Plan& p, uint32_t arena) {
    return arena < p.arenas.size() ? p.arenas[arena].config.name : "";
}

ojson session_json(const Session& s) {
    const SessionSummary& m = s.summary;
    return ojson{{"id", m.id},           {"created", m.created},
                 {"title", m.title},     {"notes", s.notes},
                 {"tags", m.tags},       {"program_version", s.program_version},
                 {"altered", s.altered}, {"altered_reason", s.altered_reason}};
}

ojson inputs_json(const Session& s) {
    const SessionInput& in = s.input;
    const bool shaped = request_shapes_model(in);
    ojson arenas = ojson::array();
    for (const ArenaConfig& a : in.options.policy.arenas) {
        ojson arena{
            {"name", a.name}, {"capacity", capacity_json(a.capacity)}, {"alignment", a.alignment}};
        if (a.page_size != 0) arena["page_size"] = a.page_size;
        arenas.push_back(std::move(arena));
    }
    ojson routes = ojson::object();
    for (size_t r = 0; r < in.options.policy.arena_of_role.size(); ++r)
        routes[std::string(role_name(Role(r)))] = in.options.policy.arena_of_role[r];
    ojson j{{"source_path", in.source_path},
            {"kind", in.is_problem ? "problem" : "graph"},
            {"mode", mode_text(s)},
            {"batch", shaped ? ojson(in.request.batch) : ojson(nullptr)},
            {"seq", shaped ? ojson(in.request.seq) : ojson(nullptr)},
            {"strategy", in.options.strategy},
            {"search_budget", in.options.search_budget},
            {"search_budget_ms", in.options.search_budget_ms},
            {"arenas", arenas},
            {"routes", in.is_problem ? ojson(nullptr) : routes}};
    if (!in.options.shard.single_rank()) j["shard"] = shard_json(in.options.shard);
    if (in.iterations) j["iterations"] = history_json(*in.iterations);
    return j;
}

} // namespace

std::string csv_tensors(const Session& s) {
    const Plan& p = checked_plan(s);
    std::vector<std::string> dtypes = tensor_dtypes(s, p);
    std::string out = "id,name,role,dtype,arena,buffer,slot,offset,size,alignment,begin,end\r\n";
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlannedTensor& t = p.tensors[i];
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\r\n", csv_field(t.id),
                           csv_field(t.name), role_name(t.role), dtypes[i],
                           csv_field(arena_name(p, t.arena)), t.buffer, t.slot, t.offset, t.size,
                           t.alignment, t.life.begin, t.life.end);
    }
    return out;
}

std::string json_document(const Session& s) {
    const Plan& p = checked_plan(s);
    std::vector<std::string> dtypes = tensor_dtypes(s, p);
    ojson tensors = ojson::array();
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlannedTensor& t = p.tensors[i];
        tensors.push_back({{"id", t.id},
                           {"name", t.name},
                           {"role", std::string(role_name(t.role))},
                           {"dtype", dtypes[i].empty() ? ojson(nullptr) : ojson(dtypes[i])},
                           {"arena", arena_name(p, t.arena)},
                           {"buffer", t.buffer},
                           {"slot", t.slot},
                           {"offset", t.offset},
                           {"size", t.size},
                           {"alignment", t.alignment},
                           {"begin", t.life.begin},
                           {"end", t.life.end}});
    }
    ojson doc{{"format", "tmmu-session"},      {"version", 1},
              {"session", session_json(s)},    {"inputs", inputs_json(s)},
              {"ir_hash", s.ir_hash},          {"plan_hash", s.summary.plan_hash},
              {"metrics", metrics_json(p)},    {"notes", p.notes},
              {"tensors", std::move(tensors)}, {"series", series_json(p)}};
    if (p.retention) doc["activation_retention"] = retention_json(*p.retention);
    // Replacing malformed UTF-8 keeps the export working for any stored text.
    return json_text(doc) + "\n";
}

} // namespace tmmu::sessions::report
