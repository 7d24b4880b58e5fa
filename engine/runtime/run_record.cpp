#include "runtime/run_record.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "runtime/opcode.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tmmu::runtime {

using Json = nlohmann::ordered_json;

DispatchCounters& DispatchCounters::operator+=(const DispatchCounters& other) {
    for (size_t op = 0; op < per_opcode.size(); ++op) {
        per_opcode[op] += other.per_opcode[op];
        device_seconds[op] += other.device_seconds[op];
    }
    total += other.total;
    launches += other.launches;
    return *this;
}

DispatchCounters counted_since(const DispatchCounters& later, const DispatchCounters& earlier) {
    DispatchCounters d;
    for (size_t op = 0; op < d.per_opcode.size(); ++op) {
        d.per_opcode[op] = later.per_opcode[op] - earlier.per_opcode[op];
        d.device_seconds[op] = later.device_seconds[op] - earlier.device_seconds[op];
    }
    d.total = later.total - earlier.total;
    d.launches = later.launches - earlier.launches;
    return d;
}

std::vector<double> RunResult::decode_step_seconds() const {
    std::vector<double> out;
    for (const RunStep& s : steps)
        if (s.phase == StepPhase::Decode) out.push_back(s.seconds);
    return out;
}

namespace {

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

} // namespace

RunRates run_rates(const RunResult& r) {
    const std::vector<double> decode = r.decode_step_seconds();
    double decode_total = 0;
    for (double s : decode)
        decode_total += s;
    const double sequences = double(r.prompt_ids.size());
    const double prompt = r.prompt_ids.empty() ? 0 : double(r.prompt_ids.front().size());
    return {prompt * sequences / std::max(r.prefill_seconds, 1e-9),
            double(decode.size()) * sequences / std::max(decode_total, 1e-9),
            percentile(decode, 0.5) * 1e3, percentile(decode, 0.95) * 1e3};
}

std::vector<int32_t> tokens_of_step(const RunResult& r, size_t step) {
    const RunStep& s = r.steps.at(step);
    if (s.phase == StepPhase::Prefill) return {r.generated_ids.at(s.sequence).at(0)};
    // Decode steps follow every prefill step; decode step k gives token k + 1.
    const size_t prefills = r.prompt_ids.size();
    std::vector<int32_t> out;
    for (const std::vector<int32_t>& ids : r.generated_ids)
        out.push_back(ids.at(step - prefills + 1));
    return out;
}

std::string_view weight_precision_name(WeightPrecision p) {
    return p == WeightPrecision::F16 ? "f16" : "f32";
}

std::string_view step_phase_name(StepPhase phase) {
    return phase == StepPhase::Prefill ? "prefill" : "decode";
}

namespace {

Json counters_json(const DispatchCounters& c, const std::vector<double>& instruction_seconds = {}) {
    Json per = Json::object();
    for (Opcode op : kAllOpcodes)
        if (c.per_opcode[uint8_t(op)])
            per[std::string(opcode_name(op))] = c.per_opcode[uint8_t(op)];
    Json device = Json::object();
    for (Opcode op : kAllOpcodes)
        if (c.device_seconds[uint8_t(op)] > 0)
            device[std::string(opcode_name(op))] = c.device_seconds[uint8_t(op)];
    Json j = {{"per_opcode", per},
              {"total", c.total},
              {"launches", c.launches},
              {"device_seconds", device}};
    if (!instruction_seconds.empty()) j["instruction_seconds"] = instruction_seconds;
    return j;
}

const char* layout_name(RegisterLayout l) {
    return l == RegisterLayout::Planned ? "planned" : "separate";
}

Json request_json(const RunRequest& r) {
    return {{"batch", r.batch},
            {"prompt_ids", r.prompt_ids.empty() ? Json(nullptr) : Json(r.prompt_ids)},
            {"prompt_tokens", r.prompt_tokens},
            {"decode_tokens", r.decode_tokens},
            {"seed", r.seed},
            {"weights", r.weights_path.empty() ? Json(nullptr) : Json(r.weights_path)},
            {"max_seq", r.max_seq},
            {"counters", r.counters},
            {"check_memory", r.check_memory},
            {"layout", layout_name(r.layout)},
            {"weight_precision", weight_precision_name(r.weight_precision)}};
}

Json step_json(const RunStep& s, bool counted) {
    Json j = {{"phase", step_phase_name(s.phase)},
              {"sequence", s.sequence},
              {"seconds", s.seconds},
              {"logits_sha256", to_hex(s.logits_hash)}};
    if (counted) j["dispatches"] = counters_json(s.dispatches);
    return j;
}

Json timings_json(const RunResult& r) {
    const RunRates rates = run_rates(r);
    return {{"prefill_seconds", r.prefill_seconds},
            {"decode_seconds", r.decode_seconds},
            {"prefill_tokens_per_second", rates.prefill_tokens_per_second},
            {"decode_tokens_per_second", rates.decode_tokens_per_second},
            {"step_ms_p50", rates.step_ms_p50},
            {"step_ms_p95", rates.step_ms_p95}};
}

Json memory_json(const RunResult& r) {
    return {{"weight_bytes", r.weight_bytes},
            {"kv_cache_bytes", r.kv_cache_bytes},
            {"decode_register_bytes", r.decode_register_bytes},
            {"prefill_register_bytes", r.prefill_register_bytes},
            {"device_planned_bytes", r.device_memory.planned_bytes},
            {"device_measured_bytes", r.device_memory.measured_bytes}};
}

Json parity_json(const std::optional<RunParity>& p) {
    if (!p) return nullptr;
    return {{"reference", p->reference},
            {"identical", p->identical},
            {"reference_logits_sha256", to_hex(p->reference_logits_hash)}};
}

} // namespace

std::string run_record_json(const RunRecord& rec) {
    const RunResult& r = rec.result;
    Json steps = Json::array();
    for (const RunStep& s : r.steps)
        steps.push_back(step_json(s, rec.request.counters));
    const Json doc = {
        {"format", "tmmu-run"},
        {"version", 1},
        {"backend", rec.backend},
        {"device", rec.device},
        {"model", rec.model},
        {"config_path", rec.config_path},
        {"request", request_json(rec.request)},
        {"prompt_ids", r.prompt_ids},
        {"generated_ids", r.generated_ids},
        {"timings", timings_json(r)},
        {"memory", memory_json(r)},
        {"counters",
         rec.request.counters
             ? Json{{"prefill", counters_json(r.prefill_counters, r.prefill_instruction_seconds)},
                    {"decode", counters_json(r.decode_counters, r.decode_instruction_seconds)}}
             : Json(nullptr)},
        {"steps", steps},
        {"logits_sha256", to_hex(r.logits_hash)},
        {"parity", parity_json(rec.parity)},
        {"config", rec.config_text}};
    return json_text(doc, 2) + "\n";
}

namespace {

// Reads fields of one JSON object, failing with the document and the field's path.
class Reader {
  public:
    Reader(const Json& j, std::string origin, std::string path)
        : j_(j), origin_(std::move(origin)), path_(std::move(path)) {
        if (!j_.is_object()) bad("expected an object");
    }
    const Json& at(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) bad(fmt::format("'{}' is missing", key));
        return *it;
    }
    template <class T>
    T get(const char* key) const {
        try {
            return at(key).get<T>();
        } catch (const nlohmann::json::exception&) {
            bad(fmt::format("'{}' has the wrong type", key));
        }
    }
    bool has(const char* key) const { return j_.contains(key); }
    Reader child(const char* key) const { return {at(key), origin_, field(key)}; }
    std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
    Digest digest(const char* key) const {
        return digest_from_hex(get<std::string>(key), origin_ + ": " + field(key));
    }
    [[noreturn]] void bad(const std::string& message) const {
        fail(FailureCode::InvalidArgument, path_.empty() ? origin_ : origin_ + ": " + path_,
             message);
    }
    const std::string& origin() const { return origin_; }

  private:
    const Json& j_;
    std::string origin_, path_;
};

DispatchCounters read_counters(const Reader& in) {
    DispatchCounters c;
    c.total = in.get<uint64_t>("total");
    if (in.has("launches")) c.launches = in.get<uint64_t>("launches"); // runs before GPU backends
    if (in.has("device_seconds"))
        for (const auto& [name, seconds] : in.at("device_seconds").items()) {
            const auto op = parse_opcode(name);
            if (!op || !seconds.is_number()) in.bad(fmt::format("bad device time '{}'", name));
            c.device_seconds[uint8_t(*op)] = seconds.get<double>();
        }
    for (const auto& [name, count] : in.at("per_opcode").items()) {
        const auto op = parse_opcode(name);
        if (!op || !count.is_number_unsigned()) in.bad(fmt::format("bad counter '{}'", name));
        c.per_opcode[uint8_t(*op)] = count.get<uint64_t>();
    }
    return c;
}

RunRequest read_request(const Reader& in) {
    RunRequest r;
    r.batch = in.get<uint32_t>("batch");
    if (!in.at("prompt_ids").is_null()) r.prompt_ids = in.get<std::vector<int32_t>>("prompt_ids");
    r.prompt_tokens = in.get<uint32_t>("prompt_tokens");
    r.decode_tokens = in.get<uint32_t>("decode_tokens");
    r.seed = in.get<uint64_t>("seed");
    if (!in.at("weights").is_null()) r.weights_path = in.get<std::string>("weights");
    r.max_seq = in.get<uint32_t>("max_seq");
    r.counters = in.get<bool>("counters");
    r.check_memory = in.get<bool>("check_memory");
    const std::string layout = in.get<std::string>("layout");
    if (layout != "planned" && layout != "separate")
        in.bad(fmt::format("layout '{}': expected planned or separate", layout));
    r.layout = layout == "planned" ? RegisterLayout::Planned : RegisterLayout::Separate;
    if (in.has("weight_precision")) { // runs recorded before f16 weights are f32
        const std::string precision = in.get<std::string>("weight_precision");
        if (precision != "f32" && precision != "f16")
            in.bad(fmt::format("weight_precision '{}': expected f32 or f16", precision));
        r.weight_precision = precision == "f16" ? WeightPrecision::F16 : WeightPrecision::F32;
    }
    return r;
}

RunStep read_step(const Reader& in) {
    RunStep s;
    const std::string phase = in.get<std::string>("phase");
    if (phase != "prefill" && phase != "decode")
        in.bad(fmt::format("phase '{}': expected prefill or decode", phase));
    s.phase = phase == "prefill" ? StepPhase::Prefill : StepPhase::Decode;
    s.sequence = in.get<uint32_t>("sequence");
    s.seconds = in.get<double>("seconds");
    s.logits_hash = in.digest("logits_sha256");
    return s;
}

// What generate() writes and tokens_of_step() relies on: one prefill step per sequence, in
// order, then the decode steps; every sequence generated one token more than there were decode
// steps (the first comes from its prefill).
void check_steps(const Reader& in, const RunResult& r) {
    const size_t sequences = r.prompt_ids.size();
    if (sequences == 0 || r.generated_ids.size() != sequences)
        in.bad(fmt::format("{} prompts and {} generated sequences", sequences,
                           r.generated_ids.size()));
    if (r.steps.size() < sequences) in.bad("fewer steps than sequences");
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const bool prefill = i < sequences;
        if ((r.steps[i].phase == StepPhase::Prefill) != prefill ||
            (prefill && r.steps[i].sequence != i))
            in.bad(fmt::format("steps[{}]: expected {}", i,
                               prefill ? fmt::format("the prefill of sequence {}", i)
                                       : std::string("a decode step")));
    }
    const size_t tokens = r.steps.size() - sequences + 1;
    for (size_t b = 0; b < sequences; ++b)
        if (r.generated_ids[b].size() != tokens)
            in.bad(fmt::format("generated_ids[{}]: {} tokens, expected {} (the prefill's and one "
                               "per decode step)",
                               b, r.generated_ids[b].size(), tokens));
}

RunResult read_result(const Reader& in) {
    RunResult r;
    r.prompt_ids = in.get<std::vector<std::vector<int32_t>>>("prompt_ids");
    r.generated_ids = in.get<std::vector<std::vector<int32_t>>>("generated_ids");
    const Reader timings = in.child("timings"), memory = in.child("memory");
    r.prefill_seconds = timings.get<double>("prefill_seconds");
    r.decode_seconds = timings.get<double>("decode_seconds");
    r.weight_bytes = memory.get<uint64_t>("weight_bytes");
    r.kv_cache_bytes = memory.get<uint64_t>("kv_cache_bytes");
    r.decode_register_bytes = memory.get<uint64_t>("decode_register_bytes");
    r.prefill_register_bytes = memory.get<uint64_t>("prefill_register_bytes");
    if (memory.has("device_planned_bytes")) { // runs recorded before GPU backends have neither
        r.device_memory.planned_bytes = memory.get<uint64_t>("device_planned_bytes");
        r.device_memory.measured_bytes = memory.get<uint64_t>("device_measured_bytes");
    }
    if (!in.at("counters").is_null()) {
        const Reader counters = in.child("counters");
        r.prefill_counters = read_counters(counters.child("prefill"));
        r.decode_counters = read_counters(counters.child("decode"));
        const auto per_instruction = [](const Reader& phase) {
            return phase.has("instruction_seconds")
                       ? phase.get<std::vector<double>>("instruction_seconds")
                       : std::vector<double>{};
        };
        r.prefill_instruction_seconds = per_instruction(counters.child("prefill"));
        r.decode_instruction_seconds = per_instruction(counters.child("decode"));
    }
    const Json& steps = in.at("steps");
    if (!steps.is_array()) in.bad("'steps' must be an array");
    for (size_t i = 0; i < steps.size(); ++i) {
        const Reader step(steps[i], in.origin(), fmt::format("steps[{}]", i));
        r.steps.push_back(read_step(step));
        if (steps[i].contains("dispatches"))
            r.steps.back().dispatches = read_counters(step.child("dispatches"));
    }
    r.logits_hash = in.digest("logits_sha256");
    check_steps(in, r);
    return r;
}

} // namespace

RunRecord parse_run_record(std::string_view text, std::string_view origin) {
    Json doc;
    try {
        doc = Json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        fail(FailureCode::InvalidArgument, std::string(origin),
             fmt::format("not valid JSON: {}", e.what()));
    }
    const Reader in(doc, std::string(origin), "");
    if (in.get<std::string>("format") != "tmmu-run" || in.get<int>("version") != 1)
        in.bad("not a tmmu-run document of version 1");
    RunRecord rec;
    rec.backend = in.get<std::string>("backend");
    rec.device = in.get<std::string>("device");
    rec.model = in.get<std::string>("model");
    rec.config_path = in.get<std::string>("config_path");
    rec.config_text = in.get<std::string>("config");
    rec.request = read_request(in.child("request"));
    rec.result = read_result(in);
    if (!in.at("parity").is_null()) {
        const Reader p = in.child("parity");
        rec.parity = RunParity{p.get<std::string>("reference"), p.get<bool>("identical"),
                               p.digest("reference_logits_sha256")};
    }
    return rec;
}

namespace {

std::string ids_text(const std::vector<int32_t>& ids) {
    return fmt::format("{}", fmt::join(ids, ","));
}

std::string step_label(const RunStep& s, size_t index) {
    return s.phase == StepPhase::Prefill
               ? fmt::format("step {} (prefill of sequence {})", index, s.sequence)
               : fmt::format("step {} (decode)", index);
}

} // namespace

RunComparison compare_runs(const RunResult& recorded, const RunResult& replayed) {
    const size_t common = std::min(recorded.steps.size(), replayed.steps.size());
    for (size_t i = 0; i < common; ++i) {
        const RunStep &a = recorded.steps[i], &b = replayed.steps[i];
        if (a.phase != b.phase || a.sequence != b.sequence)
            return {false, i, step_label(a, i) + ": the replay ran " + step_label(b, i)};
        const std::vector<int32_t> want = tokens_of_step(recorded, i),
                                   got = tokens_of_step(replayed, i);
        if (want != got)
            return {false, i,
                    fmt::format("{}: tokens {} where the recording has {}", step_label(a, i),
                                ids_text(got), ids_text(want))};
        if (a.logits_hash != b.logits_hash)
            return {false, i,
                    fmt::format("{}: logits differ (sha256 {} where the recording has {}); the "
                                "tokens are the same",
                                step_label(a, i), to_hex(b.logits_hash).substr(0, 12),
                                to_hex(a.logits_hash).substr(0, 12))};
    }
    if (recorded.steps.size() != replayed.steps.size())
        return {false, common,
                fmt::format("the replay ran {} steps, the recording {}", replayed.steps.size(),
                            recorded.steps.size())};
    if (recorded.generated_ids != replayed.generated_ids ||
        recorded.prompt_ids != replayed.prompt_ids)
        return {false, common, "the prompts or the generated tokens differ"};
    return {true, std::nullopt, {}};
}

} // namespace tmmu::runtime
