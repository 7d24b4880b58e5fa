#include "report/session_json_read.h"

#include "core/checked.h"
#include "core/digest.h"
#include "core/failure.h"
#include "ir/mode.h"
#include "plan/plan_summary.h"
#include "plan/validator.h"
#include "session_iterations.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tmmu::sessions::report {
namespace {

using json = nlohmann::json;

// Reads field `key` of `j` as T, naming "<where>: <path>" when it is missing or mistyped.
struct Reader {
    std::string_view where;

    [[noreturn]] void bad(std::string_view path, std::string_view what) const {
        fail(FailureCode::IoError, std::string(where), fmt::format("{}: {}", path, what));
    }
    const json& at(const json& j, std::string_view key, std::string_view path) const {
        if (!j.is_object() || !j.contains(key)) bad(path, fmt::format("no \"{}\"", key));
        return j.at(std::string(key));
    }
    // Text, a flag or a list of them.
    template <typename T>
    T get(const json& j, std::string_view key, std::string_view path) const {
        const json& v = at(j, key, path);
        try {
            return v.get<T>();
        } catch (const json::exception&) {
            bad(path, fmt::format("\"{}\" is {}, not {}", key, v.type_name(), expected<T>()));
        }
    }
    // A whole number in [0, max]: json would wrap a negative or too large one silently.
    uint64_t count(const json& j, std::string_view key, std::string_view path,
                   uint64_t max = UINT64_MAX) const {
        const json& v = at(j, key, path);
        if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
            bad(path,
                fmt::format("\"{}\" is {}, not a whole number from 0 to {}", key, v.dump(), max));
        return v.get<uint64_t>();
    }
    std::vector<uint64_t> counts(const json& j, std::string_view key, std::string_view path) const {
        const json& v = at(j, key, path);
        if (!v.is_array()) bad(path, fmt::format("\"{}\" is not a list", key));
        std::vector<uint64_t> out;
        out.reserve(v.size());
        for (const json& x : v) {
            if (!x.is_number_unsigned())
                bad(path, fmt::format("\"{}\" holds {}, not a whole number", key, x.dump()));
            out.push_back(x.get<uint64_t>());
        }
        return out;
    }

  private:
    template <typename T>
    static const char* expected() {
        if constexpr (std::is_same_v<T, bool>)
            return "true or false";
        else if constexpr (std::is_same_v<T, std::string>)
            return "a string";
        else
            return "a list of strings";
    }
};

// inputs.shard, present for a rank of a distributed run: {"rank", "world_size", "roles"}.
ShardSpec read_shard(const Reader& r, const json& inputs) {
    constexpr std::string_view path = "inputs.shard";
    const json& j = r.at(inputs, "shard", "inputs");
    try {
        return stored_shard_spec(r.count(j, "world_size", path), r.count(j, "rank", path),
                                 r.get<std::vector<std::string>>(j, "roles", path), path);
    } catch (const Failure& f) {
        if (f.code() != FailureCode::InvalidArgument) throw;
        r.bad(path, f.message());
    }
}

uint32_t arena_index(const Reader& r, const Plan& plan, const std::string& name,
                     std::string_view path) {
    for (size_t i = 0; i < plan.arenas.size(); ++i)
        if (plan.arenas[i].config.name == name) return uint32_t(i);
    r.bad(path, fmt::format("arena '{}' is not among the metrics' arenas", name));
}

// The plan's arenas (those it placed tensors in) with their configuration and metrics.
void read_arenas(const Reader& r, const json& list, Plan& plan) {
    if (!list.is_array() || list.empty()) r.bad("metrics", "no arenas");
    for (const json& m : list) {
        ArenaPlan a;
        ArenaConfig& c = a.config;
        c.name = r.get<std::string>(m, "arena", "metrics");
        c.capacity =
            r.at(m, "capacity", c.name).is_null() ? UINT64_MAX : r.count(m, "capacity", c.name);
        c.alignment = r.count(m, "alignment", c.name);
        if (m.contains("page_size")) {
            c.page_size = r.count(m, "page_size", c.name);
            if (!is_power_of_two(c.page_size)) r.bad(c.name, "page_size is not a power of two");
        }
        a.strategy = r.get<std::string>(m, "strategy", c.name);
        ArenaMetrics& out = a.metrics;
        out.peak_bytes = r.count(m, "peak_bytes", c.name);
        out.lower_bound = r.count(m, "lower_bound", c.name);
        out.slot_count = r.count(m, "slots", c.name, UINT32_MAX);
        out.max_live = r.count(m, "max_live", c.name, UINT32_MAX);
        out.buffers = r.count(m, "buffers", c.name, UINT32_MAX);
        out.tensors = r.count(m, "tensors", c.name, UINT32_MAX);
        out.derive_ratios();
        plan.arenas.push_back(std::move(a));
    }
}

void read_tensors(const Reader& r, const json& list, Plan& plan) {
    if (!list.is_array()) r.bad("tensors", "not a list");
    for (const json& t : list) {
        PlannedTensor p;
        p.id = r.get<std::string>(t, "id", "tensors");
        const std::string path = "tensor '" + p.id + "'";
        p.name = r.get<std::string>(t, "name", path);
        const auto role = parse_role(r.get<std::string>(t, "role", path));
        if (!role) r.bad(path, "unknown role");
        p.role = *role;
        p.arena = arena_index(r, plan, r.get<std::string>(t, "arena", path), path);
        p.buffer = r.count(t, "buffer", path, list.size() - 1); // a buffer holds a tensor
        p.slot = r.count(t, "slot", path, UINT32_MAX);
        p.offset = r.count(t, "offset", path);
        p.size = r.count(t, "size", path);
        p.alignment = r.count(t, "alignment", path);
        p.life.begin = r.count(t, "begin", path, UINT32_MAX);
        p.life.end = r.count(t, "end", path, UINT32_MAX);
        if (p.life.end <= p.life.begin) r.bad(path, "its lifetime [begin, end) is empty");
        if (p.offset > UINT64_MAX - p.size) r.bad(path, "offset + size overflows");
        plan.tensors.push_back(std::move(p));
    }
}

// Each arena's buffers from the tensors that use them: a buffer spans its tensors' bytes (its
// offset is their lowest: the root tensor's; views sit above it) and their lifetimes, and
// takes their slot. The placement is then checked like any plan's.
void place_buffers(const Reader& r, Plan& plan) {
    for (uint32_t a = 0; a < plan.arenas.size(); ++a) {
        ArenaPlan& arena = plan.arenas[a];
        std::vector<bool> used;
        std::vector<uint64_t> top;
        for (const PlannedTensor& t : plan.tensors) {
            if (t.arena != a) continue;
            if (t.buffer >= used.size()) {
                used.resize(t.buffer + 1, false);
                top.resize(t.buffer + 1, 0);
                arena.problem.buffers.resize(t.buffer + 1);
                arena.solution.offsets.resize(t.buffer + 1, 0);
                arena.buffer_names.resize(t.buffer + 1);
                arena.slot_of_buffer.resize(t.buffer + 1, 0);
            }
            Buffer& b = arena.problem.buffers[t.buffer];
            uint64_t& offset = arena.solution.offsets[t.buffer];
            if (!used[t.buffer] || t.offset < offset) arena.buffer_names[t.buffer] = t.id;
            offset = used[t.buffer] ? std::min(offset, t.offset) : t.offset;
            top[t.buffer] = std::max(top[t.buffer], t.offset + t.size);
            b.begin = used[t.buffer] ? std::min<uint64_t>(b.begin, t.life.begin) : t.life.begin;
            b.end = std::max<uint64_t>(b.end, t.life.end);
            b.alignment = std::max<uint64_t>(b.alignment, t.alignment ? t.alignment : 1);
            arena.slot_of_buffer[t.buffer] = t.slot;
            used[t.buffer] = true;
        }
        for (size_t i = 0; i < used.size(); ++i) {
            if (!used[i]) r.bad(arena.config.name, fmt::format("buffer {} holds no tensor", i));
            arena.problem.buffers[i].size = top[i] - arena.solution.offsets[i];
        }
        arena.problem.capacity = arena.config.usable_capacity();
        arena.solution.producer = arena.strategy;
        arena.solution.height = solution_height(arena.problem, arena.solution.offsets);
        validate_solution(arena.problem, arena.solution.offsets, arena.config.name,
                          [&](size_t i) { return arena.buffer_names[i]; });
        if (arena.solution.height != arena.metrics.peak_bytes)
            r.bad(arena.config.name, fmt::format("peak_bytes is {} but the tensors reach {}",
                                                 arena.metrics.peak_bytes, arena.solution.height));
    }
}

void read_series(const Reader& r, const json& s, Plan& plan) {
    plan.series.times = r.counts(s, "times", "series");
    const json& arenas = r.at(s, "arenas", "series");
    plan.series.live_bytes.assign(plan.arenas.size(), {});
    plan.series.high_water.assign(plan.arenas.size(), {});
    for (size_t a = 0; a < plan.arenas.size(); ++a) {
        const std::string& name = plan.arenas[a].config.name;
        if (!arenas.contains(name)) continue; // an arena without buffers
        const json& one = arenas.at(name);
        plan.series.live_bytes[a] = r.counts(one, "live_bytes", name);
        plan.series.high_water[a] = r.counts(one, "high_water", name);
        if (plan.series.live_bytes[a].size() != plan.series.times.size() ||
            plan.series.high_water[a].size() != plan.series.times.size())
            r.bad("series." + name, "not one value per time point");
    }
}

// The export's optional "activation_retention" (plan JSON form), checked against the plan's
// mode and buffers (the export has no schedule to check backward_start against).
void read_retention(const Reader& r, const json& j, Plan& plan) {
    const std::string_view path = "activation_retention";
    ActivationRetention a;
    a.forward_bytes = r.count(j, "forward_bytes", path);
    a.retained_bytes = r.count(j, "retained_bytes", path, a.forward_bytes);
    a.forward_storages = uint32_t(r.count(j, "forward_buffers", path, UINT32_MAX));
    a.retained_storages = uint32_t(r.count(j, "retained_buffers", path, a.forward_storages));
    if (!r.at(j, "backward_start", path).is_null())
        a.backward_start = uint32_t(r.count(j, "backward_start", path, UINT32_MAX));
    plan.retention = a;
    if (const std::string wrong = retention_inconsistency(plan, false); !wrong.empty())
        r.bad(path, wrong);
}

// inputs.iterations: the history as history_json writes it, ending on the plan.
IterationHistory read_history(const Reader& r, const json& j, const Plan& plan) {
    constexpr std::string_view path = "inputs.iterations";
    std::optional<IterationHistory> h;
    try {
        h = read_history_json(j, std::string(path));
    } catch (const Failure& f) {
        r.bad(path, f.message());
    }
    if (const std::string wrong = iterations_problem(h, plan); !wrong.empty()) r.bad(path, wrong);
    return std::move(*h);
}

} // namespace

bool looks_like_session_json(std::string_view head) {
    if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
    const size_t first = head.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && head[first] == '{' &&
           head.find("\"tmmu-session\"") != std::string_view::npos;
}

ExportedSession read_session_json(std::string_view text, std::string_view where) {
    const Reader r{where};
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        fail(FailureCode::IoError, std::string(where), fmt::format("not JSON: {}", e.what()));
    }
    if (!j.is_object() || j.value("format", "") != "tmmu-session")
        r.bad("format", "not a session exported by tmmu export --format json");
    if (r.count(j, "version", "version") != 1)
        r.bad("version", "this tmmu reads version 1 of the session format");
    ExportedSession out;
    const json& session = r.at(j, "session", "session");
    out.id = int64_t(r.count(session, "id", "session", INT64_MAX));
    out.title = r.get<std::string>(session, "title", "session");
    out.altered = r.get<bool>(session, "altered", "session");
    out.altered_reason = r.get<std::string>(session, "altered_reason", "session");
    Plan& plan = out.plan;
    const json& inputs = r.at(j, "inputs", "inputs");
    plan.source = r.get<std::string>(inputs, "source_path", "inputs");
    plan.mode = parse_mode(r.get<std::string>(inputs, "mode", "inputs")); // "none": no mode
    plan.strategy = r.get<std::string>(inputs, "strategy", "inputs");
    if (inputs.contains("shard")) plan.shard = read_shard(r, inputs);
    plan.ir_hash = digest_from_hex(r.get<std::string>(j, "ir_hash", "ir_hash"), "ir_hash");
    plan.plan_hash = digest_from_hex(r.get<std::string>(j, "plan_hash", "plan_hash"), "plan_hash");
    read_arenas(r, r.at(j, "metrics", "metrics"), plan);
    read_tensors(r, r.at(j, "tensors", "tensors"), plan);
    place_buffers(r, plan);
    read_series(r, r.at(j, "series", "series"), plan);
    if (j.contains("activation_retention")) read_retention(r, j["activation_retention"], plan);
    plan.notes = r.get<std::vector<std::string>>(j, "notes", "notes");
    if (inputs.contains("iterations")) out.iterations = read_history(r, inputs["iterations"], plan);
    return out;
}

} // namespace tmmu::sessions::report
