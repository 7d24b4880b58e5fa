#include "runtime/plan_json.h"

#include "core/failure.h"
#include "core/json_text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tmmu::runtime {

namespace {

using json = nlohmann::ordered_json;
constexpr const char* kFormat = "tmmu-execution-plan";
constexpr int kVersion = 1;

json view_json(const std::string& name, const TensorViewDesc& v) {
    json shape = json::array(), strides = json::array();
    for (uint8_t d = 0; d < v.rank; ++d) {
        shape.push_back(v.shape[d]);
        strides.push_back(v.stride_elems[d]);
    }
    return {{"name", name},
            {"dtype", dtype_name(v.dtype)},
            {"shape", shape},
            {"strides", strides},
            {"layout", layout_name(v.layout)}};
}

std::string hex_of(const ParamBlock& b) {
    std::string out;
    for (uint16_t i = 0; i < b.size; ++i)
        out += fmt::format("{:02x}", b.data[i]);
    return out;
}

json refs_json(const std::vector<RegisterRef>& refs) {
    json out = json::array();
    for (RegisterRef r : refs)
        out.push_back(r.id);
    return out;
}

json instruction_json(const Instruction& i) {
    json weights = json::array();
    for (WeightRef w : i.weights)
        weights.push_back(w.index);
    return {{"opcode", opcode_name(i.opcode)},
            {"inputs", refs_json(i.inputs)},
            {"outputs", refs_json(i.outputs)},
            {"weights", weights},
            {"params", i.param_block},
            {"state", i.state_block == kNoStateBlock ? json(nullptr) : json(i.state_block)}};
}

// Reads fields of one JSON object, naming origin and the field path in failures.
struct Field {
    const json& value;
    std::string where;

    [[noreturn]] void bad(const std::string& message) const {
        fail(FailureCode::InvalidExecutionPlan, where, message);
    }
    Field at(const std::string& key) const {
        if (!value.is_object()) bad("expected an object");
        auto it = value.find(key);
        if (it == value.end()) bad(fmt::format("missing field '{}'", key));
        return {*it, where + "." + key};
    }
    Field at(size_t index) const { return {value[index], fmt::format("{}[{}]", where, index)}; }
    size_t size() const {
        if (!value.is_array()) bad("expected an array");
        return value.size();
    }
    uint64_t number(uint64_t max = UINT64_MAX) const {
        if (!value.is_number_unsigned() || value.get<uint64_t>() > max)
            bad(fmt::format("expected an integer from 0 to {}, got {}", max, value.dump()));
        return value.get<uint64_t>();
    }
    std::string text() const {
        if (!value.is_string()) bad("expected a string, got " + value.dump());
        return value.get<std::string>();
    }
    bool boolean() const {
        if (!value.is_boolean()) bad("expected true or false, got " + value.dump());
        return value.get<bool>();
    }
};

TensorViewDesc read_view(const Field& f) {
    const Field shape = f.at("shape"), strides = f.at("strides");
    if (shape.size() > kMaxViewRank)
        fail(FailureCode::UnsupportedTensorRank, f.where,
             fmt::format("rank {} is above the runtime's {}", shape.size(), kMaxViewRank));
    if (strides.size() != shape.size()) strides.bad("expected one stride per dimension");
    TensorViewDesc v;
    const auto dtype = parse_dtype(f.at("dtype").text());
    if (!dtype) f.at("dtype").bad("unknown dtype");
    v.dtype = *dtype;
    v.rank = uint8_t(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        v.shape[d] = uint32_t(shape.at(d).number(UINT32_MAX));
        v.stride_elems[d] = uint32_t(strides.at(d).number(UINT32_MAX));
    }
    const std::string layout = f.at("layout").text();
    if (layout == "contiguous")
        v.layout = ViewLayout::Contiguous;
    else if (layout == "strided")
        v.layout = ViewLayout::Strided;
    else if (layout == "backend_native")
        v.layout = ViewLayout::BackendNative;
    else
        f.at("layout").bad("expected contiguous, strided or backend_native");
    return v;
}

Opcode read_opcode(const Field& f) {
    const auto op = parse_opcode(f.text());
    if (!op) f.bad("unknown opcode");
    return *op;
}

ParamBlock read_params(const Field& f) {
    ParamBlock b;
    b.opcode = read_opcode(f.at("opcode"));
    b.version = uint8_t(f.at("version").number(255));
    const Field payload = f.at("payload");
    const std::string hex = payload.text();
    if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
        payload.bad("expected lowercase hex digits, two per byte");
    if (hex.size() / 2 > kMaxParamBytes)
        fail(FailureCode::InvalidParamBlockAbi, payload.where,
             fmt::format("{} bytes: a parameter block holds at most {}", hex.size() / 2,
                         kMaxParamBytes));
    b.size = uint16_t(hex.size() / 2);
    for (size_t i = 0; i < b.size; ++i)
        b.data[i] = uint8_t(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    return b;
}

std::vector<RegisterRef> read_refs(const Field& f) {
    std::vector<RegisterRef> out;
    for (size_t i = 0; i < f.size(); ++i)
        out.push_back({uint16_t(f.at(i).number(UINT16_MAX))});
    return out;
}

Instruction read_instruction(const Field& f) {
    Instruction insn;
    insn.opcode = read_opcode(f.at("opcode"));
    insn.inputs = read_refs(f.at("inputs"));
    insn.outputs = read_refs(f.at("outputs"));
    const Field weights = f.at("weights");
    for (size_t i = 0; i < weights.size(); ++i)
        insn.weights.push_back({uint32_t(weights.at(i).number(UINT32_MAX))});
    insn.param_block = uint32_t(f.at("params").number(UINT32_MAX));
    const Field state = f.at("state");
    insn.state_block = state.value.is_null() ? kNoStateBlock : uint8_t(state.number(254));
    return insn;
}

StateDescriptor read_state(const Field& f) {
    StateDescriptor s;
    s.id = uint8_t(f.at("id").number(254));
    s.name = f.at("name").text();
    s.size_bytes = f.at("size_bytes").number();
    s.align_bytes = uint16_t(f.at("align_bytes").number(UINT16_MAX));
    s.zero_init = f.at("zero_init").boolean();
    const std::string lifecycle = f.at("lifecycle").text();
    if (lifecycle == "per_request")
        s.lifecycle = StateLifecycle::PerRequest;
    else if (lifecycle == "per_step")
        s.lifecycle = StateLifecycle::PerStep;
    else
        f.at("lifecycle").bad("expected per_request or per_step");
    return s;
}

} // namespace

std::string save_plan_json(const CompiledPlan& c) {
    const ExecutionPlan& p = c.plan;
    json registers = json::array(), weights = json::array(), states = json::array(),
         params = json::array(), instructions = json::array(), diagnostics = json::array();
    for (const RegisterDesc& r : p.registers)
        registers.push_back(view_json(r.name, r.view));
    for (const WeightDesc& w : p.weights)
        weights.push_back(view_json(w.name, w.view));
    for (const StateDescriptor& s : p.states)
        states.push_back({{"id", s.id},
                          {"name", s.name},
                          {"size_bytes", s.size_bytes},
                          {"align_bytes", s.align_bytes},
                          {"zero_init", s.zero_init},
                          {"lifecycle", lifecycle_name(s.lifecycle)}});
    for (const ParamBlock& b : p.params)
        params.push_back(
            {{"opcode", opcode_name(b.opcode)}, {"version", b.version}, {"payload", hex_of(b)}});
    for (const Instruction& i : p.instructions)
        instructions.push_back(instruction_json(i));
    for (const PlanDiagnostic& d : c.diagnostics)
        diagnostics.push_back({{"level", d.level == PlanDiagnostic::Level::Warn ? "warn" : "info"},
                               {"message", d.message}});
    json out{{"format", kFormat},
             {"version", kVersion},
             {"name", p.name},
             {"mode", plan_mode_name(p.mode)},
             {"rows", p.rows},
             {"registers", registers},
             {"weights", weights},
             {"states", states},
             {"params", params},
             {"instructions", instructions},
             {"plan_inputs", refs_json(p.plan_inputs)},
             {"plan_outputs", refs_json(p.plan_outputs)},
             {"peak_registers", c.peak_registers},
             {"register_last_read", c.liveness.register_last_read},
             {"diagnostics", diagnostics}};
    return json_text(out, 1) + "\n";
}

CompiledPlan load_plan_json(std::string_view text, std::string_view origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        fail(FailureCode::InvalidExecutionPlan, std::string(origin),
             fmt::format("not valid JSON: {}", e.what()));
    }
    const Field root{doc, std::string(origin)};
    if (root.at("format").text() != kFormat) root.at("format").bad("expected tmmu-execution-plan");
    if (root.at("version").number() != kVersion)
        root.at("version").bad(fmt::format("this build reads version {}", kVersion));
    ExecutionPlan p;
    p.name = root.at("name").text();
    const std::string mode = root.at("mode").text();
    if (mode != "decode" && mode != "prefill") root.at("mode").bad("expected decode or prefill");
    p.mode = mode == "decode" ? PlanMode::Decode : PlanMode::Prefill;
    p.rows = uint32_t(root.at("rows").number(UINT32_MAX));
    const Field registers = root.at("registers"), weights = root.at("weights"),
                states = root.at("states"), params = root.at("params"),
                instructions = root.at("instructions");
    for (size_t i = 0; i < registers.size(); ++i)
        p.registers.push_back({registers.at(i).at("name").text(), read_view(registers.at(i))});
    for (size_t i = 0; i < weights.size(); ++i)
        p.weights.push_back({weights.at(i).at("name").text(), read_view(weights.at(i))});
    for (size_t i = 0; i < states.size(); ++i)
        p.states.push_back(read_state(states.at(i)));
    for (size_t i = 0; i < params.size(); ++i)
        p.params.push_back(read_params(params.at(i)));
    for (size_t i = 0; i < instructions.size(); ++i)
        p.instructions.push_back(read_instruction(instructions.at(i)));
    p.plan_inputs = read_refs(root.at("plan_inputs"));
    p.plan_outputs = read_refs(root.at("plan_outputs"));
    return compile_plan(std::move(p));
}

bool looks_like_plan_json(std::string_view text) {
    const size_t head = std::min<size_t>(text.size(), 256);
    return text.substr(0, head).find("\"tmmu-execution-plan\"") != std::string::npos;
}

} // namespace tmmu::runtime
