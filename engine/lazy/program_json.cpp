// Reading "tmmu-lazy-program" JSON (program.h). One pass in program order with a table of the
// names bound so far, so a name used before any statement binds it, or of the wrong kind, fails
// at load with the JSON location of the use; only what needs running is left to the runner.
#include "lazy/program.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace tmmu::lazy {
namespace {

using json = nlohmann::json;
using Keys = std::vector<std::string_view>;
constexpr FailureCode kBad = FailureCode::InvalidIrShapes;

// Limits that keep a hand-written file from exhausting the machine or the stack.
constexpr int kMaxNesting = 32;                    // repeat and tidy bodies
constexpr size_t kMaxRank = 8;                     // shapes and nested "values"
constexpr int64_t kMaxElements = int64_t(1) << 26; // 256 MiB of f32 per tensor
constexpr uint64_t kMaxRepeat = 1'000'000;
constexpr int64_t kMaxIndex = int64_t(1) << 40; // dims, slice bounds
constexpr double kMaxF32 = std::numeric_limits<float>::max();

// nlohmann keeps the last of duplicate keys silently; a hand-written program with two "args"
// is a mistake to name, so a parser callback tracks the keys of each open object.
class DuplicateKeys {
  public:
    explicit DuplicateKeys(std::string origin) : origin_(std::move(origin)) {}
    bool operator()(int, json::parse_event_t event, json& parsed) {
        using E = json::parse_event_t;
        if (event == E::object_start) open_.emplace_back();
        if (event == E::object_end) open_.pop_back();
        if (event != E::key) return true;
        const auto& key = parsed.get_ref<const std::string&>();
        std::vector<std::string>& seen = open_.back();
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            fail(kBad, origin_, fmt::format("duplicate key \"{}\" in one object", key));
        seen.push_back(key);
        return true;
    }

  private:
    std::string origin_;
    std::vector<std::vector<std::string>> open_;
};

json parse_text(std::string_view text, const std::string& origin) {
    try {
        return json::parse(text.begin(), text.end(), DuplicateKeys(origin));
    } catch (const json::parse_error& e) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            col = text[i] == '\n' ? 1 : col + 1;
            line += text[i] == '\n';
        }
        const std::string what = e.what();
        const size_t colon = what.find(": ", what.find("column"));
        fail(kBad, fmt::format("{}:{}:{}", origin, line, col),
             "JSON syntax error: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
    } catch (const json::exception& e) {
        fail(kBad, origin, fmt::format("JSON value out of range: {}", e.what()));
    }
}

std::string type_of(const json& v) {
    if (v.is_number_float()) return "a number";
    if (v.is_number()) return "an integer";
    if (v.is_string()) return fmt::format("the string \"{}\"", v.get_ref<const std::string&>());
    return v.type_name();
}

// A tensor named where a number is needed: the statement becomes a Coercion, raised when it
// runs (the spec's host coercion trap fires at the use, not at load).
struct CoercedNumber {
    std::string field, tensor;
};

struct OpSpec {
    std::string_view name;
    ProgramOp op;
    std::string_view args; // per argument: 't' a tensor, 'n' a number, 'x' either
    Keys attrs;
};

constexpr std::string_view kUnary = "t";
const OpSpec kOps[] = {
    {"neg", ProgramOp::Neg, kUnary, {}},
    {"exp", ProgramOp::Exp, kUnary, {}},
    {"log", ProgramOp::Log, kUnary, {}},
    {"relu", ProgramOp::Relu, kUnary, {}},
    {"sigmoid", ProgramOp::Sigmoid, kUnary, {}},
    {"tanh", ProgramOp::Tanh, kUnary, {}},
    {"sqrt", ProgramOp::Sqrt, kUnary, {}},
    {"abs", ProgramOp::Abs, kUnary, {}},
    {"rsqrt", ProgramOp::Rsqrt, kUnary, {}},
    {"sin", ProgramOp::Sin, kUnary, {}},
    {"cos", ProgramOp::Cos, kUnary, {}},
    {"floor", ProgramOp::Floor, kUnary, {}},
    {"ceil", ProgramOp::Ceil, kUnary, {}},
    {"round", ProgramOp::Round, kUnary, {}},
    {"gelu", ProgramOp::Gelu, kUnary, {}},
    {"silu", ProgramOp::Silu, kUnary, {}},
    {"add", ProgramOp::Add, "xx", {}},
    {"sub", ProgramOp::Sub, "xx", {}},
    {"mul", ProgramOp::Mul, "xx", {}},
    {"div", ProgramOp::Div, "xx", {}},
    {"maximum", ProgramOp::Maximum, "xx", {}},
    {"minimum", ProgramOp::Minimum, "xx", {}},
    {"pow", ProgramOp::Pow, "xx", {}},
    {"eq", ProgramOp::Eq, "xx", {}},
    {"ne", ProgramOp::Ne, "xx", {}},
    {"lt", ProgramOp::Lt, "xx", {}},
    {"le", ProgramOp::Le, "xx", {}},
    {"gt", ProgramOp::Gt, "xx", {}},
    {"ge", ProgramOp::Ge, "xx", {}},
    {"matmul", ProgramOp::Matmul, "tt", {}},
    {"sum", ProgramOp::Sum, kUnary, {"dims", "keepdim"}},
    {"mean", ProgramOp::Mean, kUnary, {"dims", "keepdim"}},
    {"copy", ProgramOp::Copy, kUnary, {}},
    {"rand", ProgramOp::Rand, "", {"shape"}},
    {"dropout", ProgramOp::Dropout, kUnary, {"p"}},
    {"slice", ProgramOp::Slice, kUnary, {"dim", "start", "end", "step"}},
    {"transpose", ProgramOp::Transpose, kUnary, {"dim0", "dim1"}},
    {"reshape", ProgramOp::Reshape, kUnary, {"shape"}},
    {"add_", ProgramOp::AddInPlace, "tx", {}},
    {"sub_", ProgramOp::SubInPlace, "tx", {}},
    {"mul_", ProgramOp::MulInPlace, "tx", {}},
    {"copy_", ProgramOp::CopyInPlace, "tt", {}},
    {"fill_", ProgramOp::FillInPlace, "tn", {}},
};

// The key that says what a statement is, with the other keys it takes.
struct KindSpec {
    std::string_view key;
    StatementKind kind;
    Keys keys;
    bool binds; // takes (and needs) "let"
};
const KindSpec kKinds[] = {
    {"tensor", StatementKind::Tensor, {}, true},
    {"param", StatementKind::Param, {}, true},
    {"op",
     StatementKind::Op,
     {"args", "dims", "keepdim", "dim", "start", "end", "step", "dim0", "dim1", "shape", "p"},
     true},
    {"grad", StatementKind::Grad, {}, true},
    {"sgd", StatementKind::Sgd, {}, true},
    {"adamw", StatementKind::AdamW, {}, true},
    {"backward", StatementKind::Backward, {}, false},
    {"read", StatementKind::Read, {}, false},
    {"mark_step", StatementKind::MarkStep, {}, false},
    {"step", StatementKind::Step, {}, false},
    {"zero_grad", StatementKind::ZeroGrad, {"set_to_null"}, false},
    {"repeat", StatementKind::Repeat, {"body"}, false},
    {"tidy", StatementKind::Tidy, {"keep"}, false},
    {"dispose", StatementKind::Dispose, {}, false},
    {"retain_grad", StatementKind::RetainGrad, {}, false},
    {"manual_seed", StatementKind::ManualSeed, {}, false},
    {"checkpoint", StatementKind::Checkpoint, {}, false},
    {"compile", StatementKind::Compile, {"body", "returns"}, false},
};

std::string kind_keys() {
    std::string out;
    for (const KindSpec& k : kKinds)
        out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", k.key);
    return out;
}

enum class NameKind { Tensor, Optimizer };

class Parser {
  public:
    explicit Parser(std::string origin) : origin_(std::move(origin)) {}

    LazyProgram read(const json& doc) {
        object(doc, "top level");
        only_keys(doc, "top level",
                  {"$schema", "format", "version", "name", "description", "program"});
        const std::string format = text(need(doc, "format", "top level"), "format");
        if (format != kLazyProgramFormat)
            bad("format", fmt::format("expected \"{}\", got \"{}\"", kLazyProgramFormat, format));
        const json& version = need(doc, "version", "top level");
        if (!version.is_number_integer() || version.get<int64_t>() != kLazyProgramVersion)
            bad("version", fmt::format("expected {}, got {}", kLazyProgramVersion, version.dump()));
        LazyProgram p;
        p.origin = origin_;
        if (const json* n = find(doc, "name")) p.name = text(*n, "name");
        if (const json* d = find(doc, "description")) p.description = text(*d, "description");
        p.program = block(need(doc, "program", "top level"), "program", 0);
        p.statement_count = count_;
        return p;
    }

  private:
    std::string origin_;
    std::map<std::string, NameKind> names_;
    uint64_t count_ = 0;

    [[noreturn]] void bad(const std::string& where, const std::string& message) const {
        fail(kBad, origin_.empty() ? where : fmt::format("{}: {}", origin_, where), message);
    }

    // --- typed access ---
    static const json* find(const json& obj, std::string_view key) {
        const auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }
    const json& need(const json& obj, std::string_view key, const std::string& where) const {
        if (const json* v = find(obj, key)) return *v;
        bad(where, fmt::format("missing key \"{}\"", key));
    }
    void object(const json& v, const std::string& where) const {
        if (!v.is_object()) bad(where, fmt::format("expected an object, got {}", type_of(v)));
    }
    void only_keys(const json& obj, const std::string& where, const Keys& allowed) const {
        for (const auto& [key, value] : obj.items())
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                bad(where, fmt::format("unknown key \"{}\"; this takes {}", key,
                                       fmt::join(allowed, ", ")));
    }
    const json& list(const json& v, const std::string& where) const {
        if (!v.is_array()) bad(where, fmt::format("expected an array, got {}", type_of(v)));
        return v;
    }
    std::string text(const json& v, const std::string& where) const {
        if (!v.is_string()) bad(where, fmt::format("expected a string, got {}", type_of(v)));
        return v.get<std::string>();
    }
    bool boolean(const json& v, const std::string& where) const {
        if (!v.is_boolean()) bad(where, fmt::format("expected true or false, got {}", type_of(v)));
        return v.get<bool>();
    }
    // A number, or a tensor's name (CoercedNumber); anything else is malformed.
    [[noreturn]] void not_a_number(const json& v, const std::string& where,
                                   const char* expected) const {
        if (v.is_string()) {
            const auto it = names_.find(v.get_ref<const std::string&>());
            if (it != names_.end() && it->second == NameKind::Tensor)
                throw CoercedNumber{where, it->first};
        }
        bad(where, fmt::format("expected {}, got {}", expected, type_of(v)));
    }
    float number(const json& v, const std::string& where) const {
        if (!v.is_number()) not_a_number(v, where, "a number");
        const double d = v.get<double>();
        if (!(std::fabs(d) <= kMaxF32))
            bad(where, fmt::format("{} is outside the f32 range", v.dump()));
        return static_cast<float>(d);
    }
    int64_t integer(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
        if (!v.is_number_integer()) not_a_number(v, where, "an integer");
        if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(hi) : v.get<int64_t>() > hi)
            bad(where, fmt::format("{} is above {}", v.dump(), hi));
        const int64_t n = v.get<int64_t>();
        if (n < lo) bad(where, fmt::format("{} is below {}", n, lo));
        return n;
    }

    // --- names ---
    std::string ref(const json& v, const std::string& where, NameKind kind) const {
        const char* what = kind == NameKind::Tensor ? "tensor" : "optimizer";
        if (!v.is_string())
            bad(where, fmt::format("expected the name of a {}, got {}", what, type_of(v)));
        const std::string name = v.get<std::string>();
        const auto it = names_.find(name);
        if (it == names_.end())
            bad(where, fmt::format("unknown {} \"{}\": no earlier statement binds it (\"let\")",
                                   what, name));
        if (it->second != kind)
            bad(where,
                fmt::format("\"{}\" is {}, not a {}", name,
                            it->second == NameKind::Tensor ? "a tensor" : "an optimizer", what));
        return name;
    }
    // One name, or an array of them.
    std::vector<std::string> refs(const json& v, const std::string& where) const {
        if (!v.is_array()) return {ref(v, where, NameKind::Tensor)};
        std::vector<std::string> out;
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(ref(v[i], fmt::format("{}[{}]", where, i), NameKind::Tensor));
        return out;
    }
    void bind(const std::string& name, NameKind kind, const std::string& where) {
        const auto [it, fresh] = names_.emplace(name, kind);
        if (!fresh && it->second != kind)
            bad(where, fmt::format("\"{}\" already names {}; a name keeps its kind", name,
                                   it->second == NameKind::Tensor ? "a tensor" : "an optimizer"));
    }

    // --- shapes and values ---
    Shape shape(const json& v, const std::string& where) const {
        list(v, where);
        if (v.size() > kMaxRank) bad(where, fmt::format("rank {} is above {}", v.size(), kMaxRank));
        Shape s;
        int64_t elements = 1;
        for (size_t i = 0; i < v.size(); ++i) {
            const std::string at = fmt::format("{}[{}]", where, i);
            // The engine has no empty tensors: a 0 is refused here, at its place in the file.
            s.push_back(integer(v[i], at, 1, std::numeric_limits<int64_t>::max()));
            if (s.back() > kMaxElements)
                bad(at, fmt::format("dimension {} is above the limit of {} elements per tensor",
                                    s.back(), kMaxElements));
            elements *= s.back(); // both factors are at most 2^26 here, so no overflow
            if (elements > kMaxElements)
                bad(where, fmt::format("{} elements is above the limit of {} per tensor", elements,
                                       kMaxElements));
        }
        return s;
    }
    // Flat or nested (rectangular) numbers; `dims` gets the nesting's shape.
    void flatten(const json& v, const std::string& where, size_t depth, Shape& dims,
                 std::vector<float>& out) const {
        if (!v.is_array()) {
            if (depth != dims.size()) bad(where, "nested values are not rectangular");
            out.push_back(number(v, where));
            return;
        }
        if (depth == kMaxRank) bad(where, fmt::format("values nest deeper than {}", kMaxRank));
        if (depth == dims.size() && out.empty()) {
            if (v.empty()) bad(where, "holds no values; a tensor needs at least one");
            dims.push_back(int64_t(v.size()));
        }
        if (depth >= dims.size() || dims[depth] != int64_t(v.size()))
            bad(where, "nested values are not rectangular");
        // The common case, a row of plain numbers, without a location string per value.
        const bool row =
            depth + 1 == dims.size() && std::all_of(v.begin(), v.end(), [](const json& x) {
                return x.is_number() && std::fabs(x.get<double>()) <= kMaxF32;
            });
        if (row) {
            for (const json& x : v)
                out.push_back(static_cast<float>(x.get<double>()));
            return;
        }
        for (size_t i = 0; i < v.size(); ++i)
            flatten(v[i], fmt::format("{}[{}]", where, i), depth + 1, dims, out);
    }
    void tensor_spec(const json& v, const std::string& where, Statement& s) const {
        object(v, where);
        only_keys(v, where,
                  {"shape", "values", "fill", "zeros", "ones", "arange", "uniform", "seed"});
        const char* given = nullptr;
        for (const char* k : {"values", "fill", "zeros", "ones", "arange", "uniform"}) {
            if (!find(v, k)) continue;
            if (given) bad(where, fmt::format("give one of \"{}\" and \"{}\", not both", given, k));
            given = k;
        }
        if (!given)
            bad(where, "needs its values: one of \"values\", \"fill\", \"zeros\", \"ones\", "
                       "\"arange\" or \"uniform\"");
        if (find(v, "seed") && std::string_view(given) != "uniform")
            bad(where + ".seed", "applies to \"uniform\" only");
        const json* shape_json = find(v, "shape");
        if (shape_json) s.shape = shape(*shape_json, where + ".shape");
        const std::string at = fmt::format("{}.{}", where, given);
        if (std::string_view(given) == "values") return values_init(v["values"], at, shape_json, s);
        if (!shape_json) bad(where, fmt::format("needs \"shape\" with \"{}\"", given));
        other_init(v, given, where, s.init);
    }
    void values_init(const json& v, const std::string& at, bool shape_given, Statement& s) const {
        Shape nested;
        s.init.kind = TensorInit::Kind::Values;
        flatten(v, at, 0, nested, s.init.values);
        if (s.init.values.size() > size_t(kMaxElements))
            bad(at, fmt::format("{} values is above the limit of {} per tensor",
                                s.init.values.size(), kMaxElements));
        if (!shape_given) s.shape = nested;
        if (int64_t(s.init.values.size()) != element_count(s.shape))
            bad(at, fmt::format("{} values for shape {} ({} elements)", s.init.values.size(),
                                shape_text(s.shape), element_count(s.shape)));
    }
    void other_init(const json& v, std::string_view given, const std::string& where,
                    TensorInit& init) const {
        const json& x = v[std::string(given)];
        const std::string at = fmt::format("{}.{}", where, given);
        if (given == "zeros" || given == "ones") {
            if (!boolean(x, at)) bad(at, "write true, or leave it out");
            init.fill = given == "ones" ? 1.0f : 0.0f;
        } else if (given == "fill") {
            init.fill = number(x, at);
        } else if (given == "arange") {
            init.kind = TensorInit::Kind::Arange;
            if (x.is_boolean() && x.get<bool>()) return;
            if (!x.is_array() || x.size() != 2)
                bad(at, "expected true (0, 1, 2, ...) or [start, step]");
            init.start = number(x[0], at + "[0]");
            init.step = number(x[1], at + "[1]");
        } else {
            init.kind = TensorInit::Kind::Uniform;
            if (!x.is_array() || x.size() != 2) bad(at, "expected [low, high]");
            init.low = number(x[0], at + "[0]");
            init.high = number(x[1], at + "[1]");
            if (!(init.low < init.high)) bad(at, "low must be below high");
            if (const json* seed = find(v, "seed"))
                init.seed = uint64_t(
                    integer(*seed, where + ".seed", 0, std::numeric_limits<int64_t>::max()));
        }
    }

    // --- statements ---
    std::vector<Statement> block(const json& v, const std::string& where, int depth) {
        list(v, where);
        if (depth > kMaxNesting) bad(where, fmt::format("bodies nest deeper than {}", kMaxNesting));
        std::vector<Statement> out;
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(statement(v[i], fmt::format("{}[{}]", where, i), depth));
        return out;
    }

    const KindSpec& kind_of(const json& v, const std::string& path) const {
        const KindSpec* found = nullptr;
        for (const KindSpec& k : kKinds) {
            if (!find(v, k.key)) continue;
            // "step" is a statement and a slice's attribute; "op" comes first in kKinds.
            if (found &&
                std::find(found->keys.begin(), found->keys.end(), k.key) != found->keys.end())
                continue;
            if (found)
                bad(path, fmt::format("one statement per object: \"{}\" and \"{}\" both given",
                                      found->key, k.key));
            found = &k;
        }
        if (!found) bad(path, "a statement needs one of " + kind_keys());
        return *found;
    }

    Statement statement(const json& v, const std::string& path, int depth) {
        object(v, path);
        ++count_;
        const KindSpec& k = kind_of(v, path);
        Statement s;
        s.kind = k.kind;
        s.path = path;
        const bool pure_op = k.kind == StatementKind::Op && !is_in_place_op(v, path);
        const bool binds = k.binds && (k.kind != StatementKind::Op || pure_op);
        if (binds) {
            if (!find(v, "let"))
                bad(path, fmt::format("needs \"let\": the name of the {} it makes",
                                      k.kind == StatementKind::Op ? "result" : k.key));
            s.let = text(v["let"], path + ".let");
            if (s.let.empty()) bad(path + ".let", "a name cannot be empty");
        } else if (find(v, "let")) {
            bad(path + ".let", k.kind == StatementKind::Op
                                   ? "an in-place op changes its first argument and binds nothing"
                                   : fmt::format("\"{}\" binds nothing", k.key));
        }
        Keys allowed{k.key, "comment"};
        if (binds) allowed.push_back("let");
        allowed.insert(allowed.end(), k.keys.begin(), k.keys.end());
        only_keys(v, path, allowed);
        if (const json* c = find(v, "comment")) text(*c, path + ".comment");
        const NameKind bound = k.kind == StatementKind::Sgd || k.kind == StatementKind::AdamW
                                   ? NameKind::Optimizer
                                   : NameKind::Tensor;
        try {
            fill(v, path, depth, k.key, s);
        } catch (const CoercedNumber& c) {
            s.kind = StatementKind::Coercion;
            s.coerced_field = c.field;
            s.coerced_tensor = c.tensor;
        }
        if (binds) bind(s.let, bound, path + ".let");
        return s;
    }

    bool is_in_place_op(const json& v, const std::string& path) const {
        const std::string name = text(v["op"], path + ".op");
        return !name.empty() && name.back() == '_';
    }

    void fill(const json& v, const std::string& path, int depth, std::string_view key,
              Statement& s) {
        const auto at = [&](std::string_view k) { return fmt::format("{}.{}", path, k); };
        const json& x = v[std::string(key)];
        switch (s.kind) {
        case StatementKind::Tensor:
        case StatementKind::Param:
            return tensor_spec(x, at(key), s);
        case StatementKind::Op:
            return op(v, path, s);
        case StatementKind::Sgd:
        case StatementKind::AdamW:
            return optimizer(v, path, s);
        case StatementKind::Grad:
        case StatementKind::Backward:
        case StatementKind::Dispose:
        case StatementKind::RetainGrad:
            s.names = {ref(x, at(key), NameKind::Tensor)};
            return;
        case StatementKind::Read:
            s.names = refs(x, at(key));
            return;
        case StatementKind::MarkStep:
            if (!boolean(x, at(key))) bad(at(key), "write true");
            return;
        case StatementKind::Step:
            s.names = {ref(x, at(key), NameKind::Optimizer)};
            return;
        case StatementKind::ZeroGrad:
            return zero_grad(v, path, s);
        case StatementKind::Repeat:
            s.body = block(need(v, "body", path), at("body"), depth + 1);
            s.count = uint64_t(integer(x, at(key), 0, int64_t(kMaxRepeat)));
            return;
        case StatementKind::Checkpoint:
            s.body = block(x, at(key), depth + 1);
            return;
        case StatementKind::Compile:
            s.function = text(x, at(key));
            if (s.function.empty()) bad(at(key), "name the compiled function");
            s.body = block(need(v, "body", path), at("body"), depth + 1);
            if (const json* r = find(v, "returns")) s.names = refs(*r, at("returns"));
            return;
        case StatementKind::Tidy:
            s.body = block(x, at(key), depth + 1);
            if (const json* keep = find(v, "keep")) s.names = refs(*keep, at("keep"));
            return;
        case StatementKind::ManualSeed:
            s.seed = uint64_t(integer(x, at(key), 0, std::numeric_limits<int64_t>::max()));
            return;
        case StatementKind::Coercion:
            return;
        }
    }

    void zero_grad(const json& v, const std::string& path, Statement& s) const {
        const json& target = v["zero_grad"];
        const std::string where = path + ".zero_grad";
        const auto it = target.is_string() ? names_.find(target.get<std::string>()) : names_.end();
        s.names_optimizer = it != names_.end() && it->second == NameKind::Optimizer;
        s.names = s.names_optimizer ? std::vector<std::string>{it->first} : refs(target, where);
        if (const json* null = find(v, "set_to_null"))
            s.set_to_null = boolean(*null, path + ".set_to_null");
    }

    void optimizer(const json& v, const std::string& path, Statement& s) const {
        const bool adamw = s.kind == StatementKind::AdamW;
        const std::string where = path + (adamw ? ".adamw" : ".sgd");
        const json& o = v[adamw ? "adamw" : "sgd"];
        object(o, where);
        if (adamw)
            only_keys(o, where, {"params", "lr", "betas", "eps", "weight_decay"});
        else
            only_keys(o, where, {"params", "lr"});
        s.names = refs(list(need(o, "params", where), where + ".params"), where + ".params");
        if (s.names.empty()) bad(where + ".params", "an optimizer needs a parameter");
        AdamWOptions& a = s.optimizer;
        a.lr = number(need(o, "lr", where), where + ".lr");
        if (!adamw) return;
        if (const json* betas = find(o, "betas")) {
            if (!betas->is_array() || betas->size() != 2)
                bad(where + ".betas", "expected [beta1, beta2]");
            a.beta1 = number((*betas)[0], where + ".betas[0]");
            a.beta2 = number((*betas)[1], where + ".betas[1]");
        }
        if (const json* eps = find(o, "eps")) a.eps = number(*eps, where + ".eps");
        if (const json* wd = find(o, "weight_decay"))
            a.weight_decay = number(*wd, where + ".weight_decay");
    }

    void op(const json& v, const std::string& path, Statement& s) const {
        const std::string name = text(v["op"], path + ".op");
        const auto spec = std::find_if(std::begin(kOps), std::end(kOps),
                                       [&](const OpSpec& o) { return o.name == name; });
        if (spec == std::end(kOps)) {
            std::vector<std::string_view> known;
            for (const OpSpec& o : kOps)
                known.push_back(o.name);
            bad(path + ".op",
                fmt::format("unknown op \"{}\"; ops are {}", name, fmt::join(known, " ")));
        }
        s.op = spec->op;
        for (const auto& [key, value] : v.items()) {
            const bool attr = key != "op" && key != "args" && key != "let" && key != "comment";
            if (attr && std::find(spec->attrs.begin(), spec->attrs.end(), key) == spec->attrs.end())
                bad(path + "." + key, fmt::format("\"{}\" takes no \"{}\"", name, key));
        }
        const std::string at = path + ".args";
        const json& args = list(need(v, "args", path), at);
        if (args.size() != spec->args.size())
            bad(at, fmt::format("\"{}\" takes {} argument{}, got {}", name, spec->args.size(),
                                spec->args.size() == 1 ? "" : "s", args.size()));
        for (size_t i = 0; i < args.size(); ++i)
            s.args.push_back(operand(args[i], fmt::format("{}[{}]", at, i), spec->args[i]));
        attributes(v, path, s);
    }

    Operand operand(const json& v, const std::string& where, char takes) const {
        if (takes == 't' || (takes == 'x' && v.is_string()))
            return {ref(v, where, NameKind::Tensor), 0};
        if (takes == 'x' && !v.is_number())
            bad(where, fmt::format("expected a tensor's name or a number, got {}", type_of(v)));
        return {"", number(v, where)};
    }

    void attributes(const json& v, const std::string& path, Statement& s) const {
        const auto index = [&](const char* key, int64_t fallback) {
            const json* x = find(v, key);
            return x ? integer(*x, path + "." + key, -kMaxIndex, kMaxIndex) : fallback;
        };
        if (const json* dims = find(v, "dims")) {
            list(*dims, path + ".dims");
            for (size_t i = 0; i < dims->size(); ++i)
                s.dims.push_back(integer((*dims)[i], fmt::format("{}.dims[{}]", path, i),
                                         -int64_t(kMaxRank), int64_t(kMaxRank)));
        }
        if (const json* keepdim = find(v, "keepdim"))
            s.keepdim = boolean(*keepdim, path + ".keepdim");
        s.dim = index("dim", 0);
        s.start = index("start", 0);
        s.end_given = find(v, "end") != nullptr;
        s.end = index("end", 0);
        s.step = index("step", 1);
        if (s.step < 1) bad(path + ".step", "a slice's step is at least 1");
        s.dim0 = index("dim0", 0);
        s.dim1 = index("dim1", 1);
        if (s.op == ProgramOp::Reshape || s.op == ProgramOp::Rand)
            s.shape = shape(need(v, "shape", path), path + ".shape");
        if (s.op == ProgramOp::Dropout) {
            s.p = number(need(v, "p", path), path + ".p");
            if (!(s.p >= 0.0f && s.p < 1.0f))
                bad(path + ".p", fmt::format("a dropout probability is in [0, 1), got {}", s.p));
        }
    }
};

} // namespace

std::string_view checkpoint_policy_name(CheckpointPolicy p) {
    return p == CheckpointPolicy::Keep ? "keep" : "recompute";
}

std::optional<CheckpointPolicy> checkpoint_policy_from(std::string_view name) {
    if (name == "recompute") return CheckpointPolicy::Recompute;
    if (name == "keep") return CheckpointPolicy::Keep;
    return std::nullopt;
}

std::string_view program_op_name(ProgramOp op) {
    for (const OpSpec& o : kOps)
        if (o.op == op) return o.name;
    return "unknown";
}

LazyProgram parse_lazy_program(std::string_view text, std::string where) {
    const std::string origin = where.empty() ? "<json>" : where;
    LazyProgram p = Parser(where).read(parse_text(text, origin));
    if (p.name.empty()) p.name = std::filesystem::path(where).stem().string();
    if (p.name.empty()) p.name = "program";
    return p;
}

LazyProgram load_lazy_program(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        fail(FailureCode::IoError, path, "is a directory, not a program file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, fmt::format("cannot open: {}", std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read failed");
    return parse_lazy_program(text.str(), path);
}

bool looks_like_lazy_program(std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{') return false;
    return text.substr(first, 4096).find("\"tmmu-lazy-program\"") != std::string_view::npos;
}

} // namespace tmmu::lazy
