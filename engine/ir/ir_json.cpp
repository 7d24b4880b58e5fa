// tmmu-ir JSON reader and writer. Reading is two passes over the parsed document: ids first (so
// references may point forward), then every field with its references resolved through a hash
// map. Every failure names the JSON location of the offending value.
#include "ir/ir_json.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "ir/dynamic_dims.h"
#include "ir/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <unordered_map>

namespace tmmu {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
constexpr FailureCode kShapes = FailureCode::InvalidIrShapes;

// ---------------------------------------------------------------------------------------------
// Parsing with duplicate-key detection. nlohmann keeps the last of duplicate keys silently; a
// strict format must reject them, so a parser callback tracks the path and the keys seen per
// object.
class DuplicateKeyGuard {
  public:
    explicit DuplicateKeyGuard(std::string prefix) : prefix_(std::move(prefix)) {}

    bool operator()(int, json::parse_event_t event, json& parsed) {
        using E = json::parse_event_t;
        switch (event) {
        case E::object_start:
            stack_.emplace_back().array = false;
            break;
        case E::array_start:
            stack_.emplace_back().array = true;
            break;
        case E::key:
            on_key(parsed.get_ref<const std::string&>());
            break;
        case E::object_end:
        case E::array_end:
            stack_.pop_back();
            advance();
            break;
        case E::value:
            advance();
            break;
        }
        return true;
    }

  private:
    struct Frame {
        bool array = false;
        size_t index = 0;
        std::string key;
        std::vector<std::string> keys;
    };
    std::string prefix_;
    std::vector<Frame> stack_;

    void advance() {
        if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
    }

    void on_key(const std::string& key) {
        Frame& top = stack_.back();
        if (std::find(top.keys.begin(), top.keys.end(), key) != top.keys.end()) {
            std::string path;
            for (size_t i = 0; i + 1 < stack_.size(); ++i)
                path += stack_[i].array ? fmt::format("[{}]", stack_[i].index)
                                        : (path.empty() ? "" : ".") + stack_[i].key;
            fail(kShapes, prefix_ + (path.empty() ? "top level" : path),
                 fmt::format("duplicate key \"{}\"; each key may appear once per object", key));
        }
        top.keys.push_back(key);
        top.key = key;
    }
};

std::string with_origin(std::string_view origin, const std::string& where) {
    return origin.empty() ? where : fmt::format("{}: {}", origin, where);
}

// nlohmann reports a byte position; people want line:col.
std::string line_col(std::string_view text, size_t byte) {
    byte = std::min(byte, text.size());
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < byte; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return fmt::format("{}:{}", line, col);
}

json parse_text(std::string_view text, std::string_view origin) {
    try {
        return json::parse(text.begin(), text.end(),
                           DuplicateKeyGuard(origin.empty() ? "" : std::string(origin) + ": "));
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ".
        auto colon = what.find(": ", what.find("column"));
        std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
        fail(kShapes,
             fmt::format("{}:{}", origin.empty() ? "<json>" : origin, line_col(text, e.byte)),
             "JSON syntax error: " + detail);
    } catch (const json::exception& e) {
        // A number too large for a double (1e400) and other values nlohmann cannot hold.
        std::string what = e.what();
        auto bracket = what.find("] ");
        fail(kShapes, origin.empty() ? "<json>" : std::string(origin),
             "JSON value out of range: " +
                 (bracket == std::string::npos ? what : what.substr(bracket + 2)));
    }
}

// ---------------------------------------------------------------------------------------------
// Typed field access. Each helper takes the location of the value it reads.
class Reader {
  public:
    explicit Reader(std::string_view origin) : origin_(origin) {}

    [[noreturn]] void bad(const std::string& where, const std::string& message) const {
        fail(kShapes, with_origin(origin_, where), message);
    }

    static std::string type_of(const json& v) {
        if (v.is_number_float()) return "a non-integer number";
        if (v.is_number()) return "an integer";
        return v.type_name();
    }

    void expect_keys(const json& obj, const std::string& where,
                     std::initializer_list<std::string_view> allowed) const {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
            bad(where, fmt::format("unknown key \"{}\"; allowed keys are {}", it.key(),
                                   fmt::join(allowed, " ")));
        }
    }

    const json& object(const json& v, const std::string& where) const {
        if (!v.is_object()) bad(where, fmt::format("expected an object, got {}", type_of(v)));
        return v;
    }

    const json& array(const json& v, const std::string& where) const {
        if (!v.is_array()) bad(where, fmt::format("expected an array, got {}", type_of(v)));
        return v;
    }

    const json& require(const json& obj, const char* key, const std::string& where) const {
        auto it = obj.find(key);
        if (it == obj.end()) bad(where, fmt::format("missing required key \"{}\"", key));
        return *it;
    }

    static const json* optional(const json& obj, const char* key) {
        auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }

    const std::string& string(const json& v, const std::string& where) const {
        if (!v.is_string()) bad(where, fmt::format("expected a string, got {}", type_of(v)));
        return v.get_ref<const std::string&>();
    }

    bool boolean(const json& v, const std::string& where) const {
        if (!v.is_boolean()) bad(where, fmt::format("expected true or false, got {}", type_of(v)));
        return v.get<bool>();
    }

    uint64_t u64(const json& v, const std::string& where) const {
        if (v.is_number_unsigned()) return v.get<uint64_t>();
        if (v.is_number_integer())
            bad(where, fmt::format("expected a non-negative integer, got {}", v.get<int64_t>()));
        if (v.is_number_float())
            bad(where, fmt::format("expected an integer in [0, 2^64-1], got {} (not an integer, "
                                   "or too large)",
                                   v.dump()));
        bad(where, fmt::format("expected a non-negative integer, got {}", type_of(v)));
    }

    int64_t dim(const json& v, const std::string& where) const {
        if (v.is_number_integer() && !v.is_number_unsigned()) {
            int64_t d = v.get<int64_t>();
            if (d < 0) bad(where, fmt::format("dimension {} is negative; dimensions are >= 0", d));
            return d;
        }
        uint64_t d = u64(v, where);
        if (d > static_cast<uint64_t>(INT64_MAX))
            bad(where, fmt::format("dimension {} is larger than 2^63-1", d));
        return static_cast<int64_t>(d);
    }

  private:
    std::string_view origin_;
};

std::string dtype_choices() {
    std::string out;
    for (int i = 0; i <= static_cast<int>(DType::Bool); ++i)
        out += fmt::format("{}{}", i ? " " : "", dtype_name(static_cast<DType>(i)));
    return out + " (or f8 for f8e4m3)";
}

std::string role_choices() {
    std::string out;
    for (int i = 0; i <= static_cast<int>(Role::Workspace); ++i)
        out += fmt::format("{}{}", i ? " " : "", role_name(static_cast<Role>(i)));
    return out;
}

// ---------------------------------------------------------------------------------------------
class GraphReader : Reader {
  public:
    explicit GraphReader(std::string_view origin) : Reader(origin) {}

    Graph read(const json& doc) {
        object(doc, "top level");
        expect_keys(doc, "top level",
                    {"$schema", "format", "version", "name", "shape_envelope", "replan_policy",
                     "tensors", "nodes", "execution_order"});
        check_header(doc);
        Graph g;
        if (const json* name = optional(doc, "name")) g.name = string(*name, "name");
        if (const json* envelope = optional(doc, "shape_envelope")) read_envelope(*envelope, g);
        // finalize_graph refuses REPLAN_AT_SAFEPOINT without dimensions; the format refuses the
        // key itself, ABORT included, so a policy is never written where it means nothing.
        if (const json* policy = optional(doc, "replan_policy")) {
            read_policy(*policy, g);
            if (g.dims.empty())
                bad("replan_policy", "a replan policy needs dynamic dimensions: the model "
                                     "declares no shape_envelope");
        }
        graph_ = &g;
        const json& tensors = array(require(doc, "tensors", "top level"), "tensors");
        const json& nodes = array(require(doc, "nodes", "top level"), "nodes");
        index_ids(tensors, "tensors", tensor_ids_);
        index_ids(nodes, "nodes", node_ids_);
        g.tensors.reserve(tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i)
            g.tensors.push_back(read_tensor(tensors[i], i));
        g.nodes.reserve(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i)
            g.nodes.push_back(read_node(nodes[i], i));
        if (const json* order = optional(doc, "execution_order")) read_order(*order, g);
        return g;
    }

  private:
    std::unordered_map<std::string, uint32_t> tensor_ids_, node_ids_;
    const Graph* graph_ = nullptr; // the graph being read, once its envelope is

    // {"seq": {"min": 1, "max": 2048, "default": 512}, ...}: dims in name order (the parsed
    // object's, as finalize_graph keeps them); the binding is "default", else the max.
    void read_envelope(const json& v, Graph& g) const {
        object(v, "shape_envelope");
        for (auto it = v.begin(); it != v.end(); ++it) {
            const std::string at = fmt::format("shape_envelope.{}", it.key());
            if (const std::string why = dim_name_problem(it.key()); !why.empty()) bad(at, why);
            const json& d = object(it.value(), at);
            expect_keys(d, at, {"min", "max", "default"});
            DynamicDim dim{it.key(), this->dim(require(d, "min", at), at + ".min"),
                           this->dim(require(d, "max", at), at + ".max"), 0};
            dim.value = dim.max;
            if (const json* def = optional(d, "default"))
                dim.value = this->dim(*def, at + ".default");
            g.dims.push_back(std::move(dim));
        }
    }

    void read_policy(const json& v, Graph& g) const {
        const std::string& name = string(v, "replan_policy");
        auto policy = parse_replan_policy(name);
        if (!policy)
            bad("replan_policy",
                fmt::format("unknown replan policy \"{}\"; expected ABORT or REPLAN_AT_SAFEPOINT",
                            name));
        g.replan_policy = *policy;
    }

    // A shape entry: a fixed size, or a dynamic axis.
    void read_shape_entry(const json& v, const std::string& where, Tensor& t) const {
        if (!v.is_string()) {
            t.shape.push_back(dim(v, where));
            if (!t.shape_dims.empty()) t.shape_dims.emplace_back();
            return;
        }
        t.shape_dims.resize(t.shape.size());
        t.shape_dims.push_back(axis_named(v.get_ref<const std::string&>(), where));
        t.shape.push_back(0); // finalize_graph binds it, once the envelope is checked
    }

    // "batch", "batch*seq", "4*N": declared dimensions and positive integers joined by '*'.
    AxisDims axis_named(const std::string& text, const std::string& where) const {
        AxisDims axis;
        for (size_t begin = 0; begin <= text.size();) {
            const size_t end = std::min(text.find('*', begin), text.size());
            const std::string part = text.substr(begin, end - begin);
            begin = end + 1;
            if (part.empty())
                bad(where, fmt::format("\"{}\" has an empty part: an axis joins declared "
                                       "dimensions and positive integers with single '*'",
                                       text));
            if (part.find_first_not_of("0123456789") == std::string::npos) {
                axis.factor = factor_in(part, text, axis.factor, where);
                continue;
            }
            const uint32_t index = graph_->find_dim(part);
            if (index == kNone) bad(where, undeclared(part));
            axis.dims.push_back(index);
        }
        if (axis.fixed())
            bad(where,
                fmt::format("\"{}\" names no dimension; write a fixed size as a number", text));
        return axis; // finalize_graph puts the dims in order
    }

    int64_t factor_in(const std::string& part, const std::string& text, int64_t factor,
                      const std::string& where) const {
        errno = 0;
        const long long n = std::strtoll(part.c_str(), nullptr, 10);
        if (errno == ERANGE || n < 1 || __builtin_mul_overflow(factor, int64_t(n), &factor))
            bad(where, fmt::format("factor {} in \"{}\" is not a positive integer below 2^63", part,
                                   text));
        return factor;
    }

    std::string undeclared(const std::string& name) const {
        return graph_->dims.empty()
                   ? fmt::format("dimension \"{}\" is not declared: the model has no "
                                 "shape_envelope",
                                 name)
                   : fmt::format("dimension \"{}\" is not declared; the shape_envelope "
                                 "declares {}",
                                 name, declared_dim_names(*graph_));
    }

    void check_header(const json& doc) const {
        const std::string& format = string(require(doc, "format", "top level"), "format");
        if (format != kIrFormatName)
            bad("format", fmt::format("format is \"{}\"; expected \"{}\"", format, kIrFormatName));
        const json& version = require(doc, "version", "top level");
        if (!version.is_number_unsigned() || version.get<uint64_t>() != kIrFormatVersion)
            bad("version", fmt::format("unsupported version {}; supported versions: {}",
                                       version.dump(), kIrFormatVersion));
    }

    // First pass: every id, so references can point at later entries.
    void index_ids(const json& list, const char* what,
                   std::unordered_map<std::string, uint32_t>& ids) const {
        ids.reserve(list.size());
        for (size_t i = 0; i < list.size(); ++i) {
            std::string where = fmt::format("{}[{}]", what, i);
            const json& entry = object(list[i], where);
            const std::string& id = string(require(entry, "id", where), where + ".id");
            if (id.empty()) bad(where + ".id", "id is empty; ids must be non-empty");
            auto [it, inserted] = ids.emplace(id, static_cast<uint32_t>(i));
            if (!inserted)
                bad(where + ".id", fmt::format("duplicate id \"{}\" (first used by {}[{}])", id,
                                               what, it->second));
        }
    }

    uint32_t resolve(const std::unordered_map<std::string, uint32_t>& ids, const json& v,
                     const std::string& where, const char* kind) const {
        const std::string& id = string(v, where);
        auto it = ids.find(id);
        if (it == ids.end()) bad(where, fmt::format("unknown {} id \"{}\"", kind, id));
        return it->second;
    }

    TensorIndex tensor_ref(const json& v, const std::string& where) const {
        return resolve(tensor_ids_, v, where, "tensor");
    }

    std::vector<TensorIndex> tensor_refs(const json& v, const std::string& where) const {
        array(v, where);
        std::vector<TensorIndex> out;
        out.reserve(v.size());
        for (size_t k = 0; k < v.size(); ++k)
            out.push_back(tensor_ref(v[k], fmt::format("{}[{}]", where, k)));
        return out;
    }

    Tensor read_tensor(const json& j, size_t i) const {
        Tensor t;
        t.id = j.at("id").get<std::string>();
        const std::string at = fmt::format("tensors[{}] ('{}')", i, t.id);
        expect_keys(j, at,
                    {"id", "name", "shape", "dtype", "role", "alias_group", "view", "in_place_of",
                     "saved_for_backward", "must_not_alias", "alignment", "offset"});
        if (const json* v = optional(j, "name")) t.name = string(*v, at + ".name");
        const json& shape = array(require(j, "shape", at), at + ".shape");
        t.shape.reserve(shape.size());
        for (size_t k = 0; k < shape.size(); ++k)
            read_shape_entry(shape[k], fmt::format("{}.shape[{}]", at, k), t);
        const std::string& dtype = string(require(j, "dtype", at), at + ".dtype");
        auto dt = parse_dtype(dtype);
        if (!dt)
            bad(at + ".dtype",
                fmt::format("unknown dtype \"{}\"; expected one of {}", dtype, dtype_choices()));
        t.dtype = *dt;
        const std::string& role = string(require(j, "role", at), at + ".role");
        auto r = parse_role(role);
        if (!r)
            bad(at + ".role",
                fmt::format("unknown role \"{}\"; expected one of {}", role, role_choices()));
        t.role = *r;
        read_tensor_options(j, at, t);
        return t;
    }

    void read_tensor_options(const json& j, const std::string& at, Tensor& t) const {
        if (const json* v = optional(j, "alias_group"))
            t.alias_group = string(*v, at + ".alias_group");
        if (const json* v = optional(j, "view")) {
            t.view = read_view(*v, at + ".view");
            if (t.dynamic() && t.view->byte_length != 0)
                bad(at + ".view.byte_length",
                    "a view with a dynamic axis has the length of its shape at each binding; "
                    "leave byte_length out");
        }
        if (const json* v = optional(j, "in_place_of"))
            t.in_place_of = tensor_ref(*v, at + ".in_place_of");
        if (const json* v = optional(j, "saved_for_backward"))
            t.saved_for_backward = boolean(*v, at + ".saved_for_backward");
        if (const json* v = optional(j, "must_not_alias"))
            t.must_not_alias = tensor_refs(*v, at + ".must_not_alias");
        if (const json* v = optional(j, "alignment")) t.alignment = u64(*v, at + ".alignment");
        if (const json* v = optional(j, "offset")) t.pinned_offset = u64(*v, at + ".offset");
    }

    ViewDesc read_view(const json& v, const std::string& at) const {
        object(v, at);
        expect_keys(v, at, {"base", "byte_offset", "byte_length", "stride_desc"});
        ViewDesc d;
        d.base = tensor_ref(require(v, "base", at), at + ".base");
        if (const json* o = optional(v, "byte_offset"))
            d.byte_offset = u64(*o, at + ".byte_offset");
        if (const json* l = optional(v, "byte_length"))
            d.byte_length = u64(*l, at + ".byte_length");
        if (const json* s = optional(v, "stride_desc")) {
            const std::string where = at + ".stride_desc";
            object(*s, where);
            expect_keys(*s, where, {"strides"});
            const json& strides = array(require(*s, "strides", where), where + ".strides");
            for (size_t i = 0; i < strides.size(); ++i)
                d.strides.push_back(u64(strides[i], fmt::format("{}.strides[{}]", where, i)));
        }
        return d;
    }

    Node read_node(const json& j, size_t i) const {
        Node n;
        n.id = j.at("id").get<std::string>();
        const std::string at = fmt::format("nodes[{}] ('{}')", i, n.id);
        expect_keys(j, at, {"id", "opcode", "inputs", "outputs", "phase"});
        n.opcode = string(require(j, "opcode", at), at + ".opcode");
        if (n.opcode.empty()) bad(at + ".opcode", "opcode is empty");
        n.inputs = tensor_refs(require(j, "inputs", at), at + ".inputs");
        n.outputs = tensor_refs(require(j, "outputs", at), at + ".outputs");
        if (const json* v = optional(j, "phase")) {
            const std::string& phase = string(*v, at + ".phase");
            auto p = parse_phase(phase);
            if (!p)
                bad(at + ".phase", fmt::format("unknown phase \"{}\"; expected one of forward "
                                               "backward optimizer",
                                               phase));
            n.phase = *p;
        }
        return n;
    }

    void read_order(const json& v, Graph& g) const {
        array(v, "execution_order");
        g.execution_order.reserve(v.size());
        for (size_t k = 0; k < v.size(); ++k)
            g.execution_order.push_back(
                resolve(node_ids_, v[k], fmt::format("execution_order[{}]", k), "node"));
    }
};

// ---------------------------------------------------------------------------------------------
// Writing: a fixed layout, one tensor or node per line, so diffs of saved models stay readable.
void dump_inline(const ordered_json& j, std::string& out) {
    if (j.is_object()) {
        out += '{';
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
            out += first ? "" : ", ";
            first = false;
            out += json_text(ordered_json(it.key()));
            out += ": ";
            dump_inline(it.value(), out);
        }
        out += '}';
    } else if (j.is_array()) {
        out += '[';
        for (size_t k = 0; k < j.size(); ++k) {
            out += k ? ", " : "";
            dump_inline(j[k], out);
        }
        out += ']';
    } else {
        out += json_text(j);
    }
}

std::string quoted(const std::string& s) {
    return json_text(ordered_json(s));
}

class GraphWriter {
  public:
    explicit GraphWriter(const Graph& g) : g_(g) {}

    std::string write() {
        out_ += "{\n";
        out_ += fmt::format("  \"format\": {},\n", quoted(std::string(kIrFormatName)));
        out_ += fmt::format("  \"version\": {},\n", kIrFormatVersion);
        out_ += fmt::format("  \"name\": {},\n", quoted(g_.name));
        write_envelope();
        write_list("tensors", g_.tensors.size(), [&](size_t i) { return tensor(g_.tensors[i]); });
        out_ += ",\n";
        write_list("nodes", g_.nodes.size(), [&](size_t i) { return node(g_.nodes[i]); });
        if (!g_.execution_order.empty()) {
            out_ += ",\n";
            write_order();
        }
        out_ += "\n}\n";
        return std::move(out_);
    }

  private:
    const Graph& g_;
    std::string out_;

    template <typename Fn>
    void write_list(const char* key, size_t count, Fn&& item) {
        out_ += fmt::format("  \"{}\": [", key);
        for (size_t i = 0; i < count; ++i) {
            out_ += i ? ",\n    " : "\n    ";
            dump_inline(item(i), out_);
        }
        out_ += count ? "\n  ]" : "]";
    }

    // The binding is saved as each dimension's default, so a saved graph loads bound as it was.
    void write_envelope() {
        if (!g_.dims.empty()) {
            ordered_json envelope = ordered_json::object();
            for (const DynamicDim& d : g_.dims) {
                ordered_json e{{"min", d.min}, {"max", d.max}};
                if (d.value != d.max) e["default"] = d.value;
                envelope[d.name] = std::move(e);
            }
            out_ += "  \"shape_envelope\": ";
            dump_inline(envelope, out_);
            out_ += ",\n";
        }
        if (g_.replan_policy != ReplanPolicy::Abort)
            out_ += fmt::format("  \"replan_policy\": {},\n",
                                quoted(std::string(replan_policy_name(g_.replan_policy))));
    }

    ordered_json shape(const Tensor& t) const {
        ordered_json a = ordered_json::array();
        for (size_t k = 0; k < t.shape.size(); ++k) {
            if (k >= t.shape_dims.size() || t.shape_dims[k].fixed()) {
                a.push_back(t.shape[k]);
                continue;
            }
            for (uint32_t d : t.shape_dims[k].dims)
                if (d >= g_.dims.size())
                    fail(FailureCode::InvalidArgument, "save_ir_json",
                         fmt::format("tensor '{}' names dimension index {} of {}; finalize the "
                                     "graph first",
                                     t.id, d, g_.dims.size()));
            a.push_back(axis_text(g_, t.shape_dims[k]));
        }
        return a;
    }

    const std::string& tensor_id(TensorIndex t) const {
        if (t >= g_.tensors.size())
            fail(FailureCode::InvalidArgument, "save_ir_json",
                 fmt::format("tensor index {} is out of range; finalize the graph first", t));
        return g_.tensors[t].id;
    }

    ordered_json tensor_ids(const std::vector<TensorIndex>& list) const {
        ordered_json a = ordered_json::array();
        for (TensorIndex t : list)
            a.push_back(tensor_id(t));
        return a;
    }

    ordered_json tensor(const Tensor& t) const {
        ordered_json j;
        j["id"] = t.id;
        if (!t.name.empty() && t.name != t.id) j["name"] = t.name;
        j["shape"] = shape(t);
        j["dtype"] = dtype_name(t.dtype);
        j["role"] = role_name(t.role);
        if (!t.alias_group.empty()) j["alias_group"] = t.alias_group;
        if (t.view) {
            j["view"] = ordered_json{{"base", tensor_id(t.view->base)},
                                     {"byte_offset", t.view->byte_offset}};
            if (!t.dynamic()) j["view"]["byte_length"] = t.view->byte_length;
            if (!t.view->strides.empty())
                j["view"]["stride_desc"] = ordered_json{{"strides", t.view->strides}};
        }
        if (t.in_place_of != kNone) j["in_place_of"] = tensor_id(t.in_place_of);
        if (t.saved_for_backward) j["saved_for_backward"] = true;
        if (!t.must_not_alias.empty()) j["must_not_alias"] = tensor_ids(t.must_not_alias);
        if (t.alignment != 0) j["alignment"] = t.alignment;
        if (t.pinned_offset) j["offset"] = *t.pinned_offset;
        return j;
    }

    ordered_json node(const Node& n) const {
        ordered_json j;
        j["id"] = n.id;
        j["opcode"] = n.opcode;
        j["inputs"] = tensor_ids(n.inputs);
        j["outputs"] = tensor_ids(n.outputs);
        if (n.phase != Phase::Forward) j["phase"] = phase_name(n.phase);
        return j;
    }

    // Node ids wrapped at about 100 columns.
    void write_order() {
        out_ += "  \"execution_order\": [\n    ";
        size_t column = 4;
        for (size_t k = 0; k < g_.execution_order.size(); ++k) {
            NodeIndex v = g_.execution_order[k];
            if (v >= g_.nodes.size())
                fail(FailureCode::InvalidArgument, fmt::format("execution_order[{}]", k),
                     "node index out of range; finalize the graph first");
            std::string item = quoted(g_.nodes[v].id);
            if (k) {
                if (column + item.size() + 2 > 100) {
                    out_ += ",\n    ";
                    column = 4;
                } else {
                    out_ += ", ";
                    column += 2;
                }
            }
            out_ += item;
            column += item.size();
        }
        out_ += "\n  ]";
    }
};

} // namespace

Graph load_ir_string(std::string_view text, std::string_view origin) {
    json doc = parse_text(text, origin);
    Graph g = GraphReader(origin).read(doc);
    try {
        finalize_graph(g);
        check_envelope_corners(g);
    } catch (const Failure& f) {
        throw Failure(f.code(), with_origin(origin, f.where()), f.message());
    }
    return g;
}

Graph load_ir_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        fail(FailureCode::IoError, path,
             fmt::format("cannot open model file for reading: {}", std::strerror(errno)));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read error while loading the model file");
    std::string text = std::move(buffer).str();
    Graph g = load_ir_string(text, path);
    if (g.name.empty()) g.name = std::filesystem::path(path).stem().string();
    return g;
}

std::string save_ir_json(const Graph& g) {
    return GraphWriter(g).write();
}

void save_ir_file(const Graph& g, const std::string& path) {
    std::string text = save_ir_json(g);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        fail(FailureCode::IoError, path,
             fmt::format("cannot open file for writing: {}", std::strerror(errno)));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) fail(FailureCode::IoError, path, "write error while saving the model file");
}

bool looks_like_ir_json(std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{') return false;
    std::string_view head = text.substr(first, 4096);
    return head.find("\"tmmu-ir\"") != std::string_view::npos;
}

} // namespace tmmu
