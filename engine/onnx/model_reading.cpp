#include "onnx/model_reading.h"

#include "core/failure.h"
#include "encoding/utf8.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

namespace tmmu::onnx {

std::optional<DType> dtype_of(int32_t elem) {
    switch (elem) {
    case lib::TensorProto_DataType_FLOAT:
        return DType::F32;
    case lib::TensorProto_DataType_DOUBLE:
        return DType::F64;
    case lib::TensorProto_DataType_FLOAT16:
        return DType::F16;
    case lib::TensorProto_DataType_BFLOAT16:
        return DType::BF16;
    case lib::TensorProto_DataType_INT64:
    case lib::TensorProto_DataType_UINT64:
        return DType::I64;
    case lib::TensorProto_DataType_INT32:
    case lib::TensorProto_DataType_UINT32:
        return DType::I32;
    case lib::TensorProto_DataType_INT16:
    case lib::TensorProto_DataType_UINT16:
        return DType::I16;
    case lib::TensorProto_DataType_INT8:
        return DType::I8;
    case lib::TensorProto_DataType_UINT8:
        return DType::U8;
    case lib::TensorProto_DataType_BOOL:
        return DType::Bool;
    default:
        return std::nullopt; // strings, complex numbers: no fixed size per element
    }
}

namespace {

bool is_external(const lib::TensorProto& t) {
    return t.data_location() == lib::TensorProto_DataLocation_EXTERNAL;
}

// Whether any tensor (initializers, attribute tensors, in subgraphs too) lives in another file.
bool has_external_data(const lib::GraphProto& g) {
    for (const auto& t : g.initializer())
        if (is_external(t)) return true;
    for (const lib::NodeProto& n : g.node())
        for (const lib::AttributeProto& a : n.attribute()) {
            if ((a.has_t() && is_external(a.t())) || (a.has_g() && has_external_data(a.g())))
                return true;
            for (const auto& t : a.tensors())
                if (is_external(t)) return true;
            for (const auto& sub : a.graphs())
                if (has_external_data(sub)) return true;
        }
    return false;
}

// A tensor's inline raw bytes must be exactly its elements' width: ONNX 1.12 reads int64 data
// from raw_data without checking its length, in shape inference (a shape or axes operand) and
// in the checker itself (a sparse tensor's indices): a SIGSEGV or a heap overflow inside the
// library, found by helpers 53 and 55. So it is checked before either runs. External data is
// checked where it is read.
void check_raw_data(const lib::TensorProto& t, const std::string& at) {
    if (!t.has_raw_data() || t.data_location() == lib::TensorProto_DataLocation_EXTERNAL) return;
    const std::optional<DType> dtype = dtype_of(t.data_type());
    if (!dtype) return; // strings, complex numbers: nothing the library reads as numbers
    const uint64_t width = dtype_bytes(*dtype);
    // Bytes the dims need, UINT64_MAX past 64 bits (the checker refuses negative dims).
    uint64_t needed = width;
    for (int64_t d : t.dims())
        needed = d < 0 || (d > 0 && needed > UINT64_MAX / uint64_t(d)) ? UINT64_MAX
                                                                       : needed * uint64_t(d);
    if (needed == t.raw_data().size()) return;
    fail(
        FailureCode::InvalidIrShapes, fmt::format("{}: tensor '{}'", at, t.name()),
        fmt::format("raw_data holds {} bytes; dims [{}] of {}-byte elements need {}",
                    t.raw_data().size(), fmt::join(t.dims(), ", "), width,
                    needed == UINT64_MAX ? std::string("more than 2^64") : std::to_string(needed)));
}

// Names become tensor and node ids, which every plan, hash and checkpoint keeps as UTF-8 text:
// a name in another encoding is refused here, where the model is named, not by the CBOR writer.
void check_name(const std::string& name, const std::string& what, const std::string& where) {
    if (is_valid_utf8(name)) return;
    std::string shown = name;
    for (char& c : shown)
        if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    fail(FailureCode::InvalidIrShapes, where,
         fmt::format("{} '{}' is not UTF-8 text ('?' marks its other bytes)", what, shown));
}

void check_names(const lib::GraphProto& g, const std::string& where) {
    for (const lib::TensorProto& t : g.initializer())
        check_name(t.name(), "initializer", where);
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list) {
            check_name(v.name(), "value", where);
            // Symbolic dims become the names of a plan's bindings.
            if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
                for (const auto& d : v.type().tensor_type().shape().dim())
                    check_name(d.dim_param(), fmt::format("dimension of '{}'", v.name()), where);
        }
    for (const lib::NodeProto& n : g.node()) {
        check_name(n.name(), "node", where);
        for (const auto* names : {&n.input(), &n.output()})
            for (const std::string& v : *names)
                check_name(v, fmt::format("node '{}' reads or writes", n.name()), where);
    }
}

void check_sparse(const lib::SparseTensorProto& t, const std::string& at) {
    check_raw_data(t.values(), at + " values");
    check_raw_data(t.indices(), at + " indices");
}

void check_node_tensors(const lib::NodeProto& n, const std::string& where);

// Every name and every tensor a graph holds inline, in its subgraphs too.
void check_graph_data(const lib::GraphProto& g, const std::string& where) {
    check_names(g, where);
    for (const lib::TensorProto& t : g.initializer())
        check_raw_data(t, where + ": initializer");
    for (const lib::SparseTensorProto& t : g.sparse_initializer())
        check_sparse(t, where + ": sparse initializer");
    for (const lib::NodeProto& n : g.node())
        check_node_tensors(n, where);
}

void check_node_tensors(const lib::NodeProto& n, const std::string& where) {
    for (const lib::AttributeProto& a : n.attribute()) {
        const std::string at =
            fmt::format("{}: node '{}' attribute '{}'", where, n.name(), a.name());
        if (a.has_t()) check_raw_data(a.t(), at);
        for (const lib::TensorProto& t : a.tensors())
            check_raw_data(t, at);
        if (a.has_sparse_tensor()) check_sparse(a.sparse_tensor(), at);
        for (const lib::SparseTensorProto& t : a.sparse_tensors())
            check_sparse(t, at);
        if (a.has_g()) check_graph_data(a.g(), at);
        for (const lib::GraphProto& sub : a.graphs())
            check_graph_data(sub, at);
    }
}

// What the library reads unchecked, before the checker and shape inference run.
void check_model_data(const lib::ModelProto& m, const std::string& path) {
    check_graph_data(m.graph(), path);
    for (const lib::FunctionProto& f : m.functions()) {
        // A node with no name is named after its op: a function's name can become an id.
        check_name(f.name(), "function", path);
        for (const lib::NodeProto& n : f.node())
            check_node_tensors(n, fmt::format("{}: function '{}'", path, f.name()));
    }
}

} // namespace

lib::ModelProto read_model(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    lib::ModelProto model;
    if (!in || !model.ParseFromIstream(&in))
        fail(FailureCode::InvalidIrShapes, path, "not an ONNX model (the protobuf does not parse)");
    check_model_data(model, path);
    // The checker runs before anything else touches the model: shape inference crashes on some
    // corrupt ones (toolchain.md). Its file form is the one that resolves external data next to
    // the model, but it parses the file again: only worth it when the weights are elsewhere and
    // the file is small (a 500 MB model with inline weights would be read twice).
    try {
        if (has_external_data(model.graph()))
            lib::checker::check_model(path);
        else
            lib::checker::check_model(model);
    } catch (const std::exception& e) {
        fail(FailureCode::InvalidIrShapes, path,
             fmt::format("not a valid ONNX model: {}", e.what()));
    }
    return model;
}

namespace {

using Opsets = std::unordered_map<std::string, int>;

// Window attributes (convolutions and pooling) whose every value must be at least 1, and a
// convolution's group count: ONNX 1.12's shape inference divides by a stride of 0 (a SIGFPE
// inside the library, found by the fuzzer), so they are checked before it runs.
constexpr std::string_view kPositiveAttributes[] = {"strides", "dilations", "kernel_shape",
                                                    "group"};

void check_window_attributes(const lib::NodeProto& n, const std::string& at) {
    for (const lib::AttributeProto& a : n.attribute()) {
        if (std::find(std::begin(kPositiveAttributes), std::end(kPositiveAttributes), a.name()) ==
            std::end(kPositiveAttributes))
            continue;
        if (a.type() == lib::AttributeProto::INT && a.i() < 1)
            fail(FailureCode::InvalidIrShapes, at,
                 fmt::format("{} attribute '{}' is {}; it must be at least 1", n.op_type(),
                             a.name(), a.i()));
        for (int k = 0; k < a.ints_size(); ++k)
            if (a.ints(k) < 1)
                fail(FailureCode::InvalidIrShapes, at,
                     fmt::format("{} attribute '{}' has {} at index {}; every value must be at "
                                 "least 1",
                                 n.op_type(), a.name(), a.ints(k), k));
    }
}

void check_graph_ops(const lib::GraphProto& g, const Opsets& opset,
                     const std::set<std::string>& functions, const std::string& where) {
    for (const lib::NodeProto& n : g.node()) {
        const std::string domain = is_default_domain(n.domain()) ? "" : n.domain();
        const std::string at = fmt::format("{}: node '{}'", where, n.name());
        check_window_attributes(n, at);
        if (!functions.count(n.domain() + ":" + n.op_type())) {
            const auto it = opset.find(domain);
            const int version = it == opset.end() ? 0 : it->second;
            if (!lib::OpSchemaRegistry::Schema(n.op_type(), version, domain))
                fail(FailureCode::InvalidIrShapes, at,
                     fmt::format("unsupported op '{}' in domain '{}' (opset {}): ONNX 1.12's "
                                 "tables do not know it",
                                 n.op_type(), domain.empty() ? "ai.onnx" : domain, version));
        }
        for (const lib::AttributeProto& a : n.attribute()) {
            if (a.has_g()) check_graph_ops(a.g(), opset, functions, at + " " + a.name());
            for (const lib::GraphProto& sub : a.graphs())
                check_graph_ops(sub, opset, functions, at + " " + a.name());
        }
    }
}

} // namespace

void check_ops_known(const lib::ModelProto& m, const std::string& path) {
    Opsets opset;
    for (const auto& o : m.opset_import())
        opset[is_default_domain(o.domain()) ? "" : o.domain()] = int(o.version());
    std::set<std::string> functions;
    for (const auto& f : m.functions())
        functions.insert(f.domain() + ":" + f.name());
    check_graph_ops(m.graph(), opset, functions, path);
}

bool apply_bindings(lib::GraphProto& g, const OnnxBindings& b, const std::string& path) {
    std::set<std::string> inputs;
    for (lib::ValueInfoProto& in : *g.mutable_input()) {
        inputs.insert(in.name());
        if (!in.type().has_tensor_type()) continue; // sequences, maps: refused when planned
        auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        if (auto it = b.input_shapes.find(in.name()); it != b.input_shapes.end()) {
            shape->clear_dim();
            for (int64_t d : it->second)
                shape->add_dim()->set_dim_value(d);
            continue;
        }
        for (auto& d : *shape->mutable_dim())
            if (d.has_dim_param())
                if (auto it = b.dims.find(d.dim_param()); it != b.dims.end())
                    d.set_dim_value(it->second);
    }
    for (const auto& [name, shape] : b.input_shapes)
        if (!inputs.count(name))
            fail(FailureCode::InvalidArgument, "--input-shape",
                 fmt::format("'{}' is not an input of {}", name, path));
    if (b.dims.empty() && b.input_shapes.empty()) return false;
    // Shapes stored downstream were computed for the old dims: inference computes them again.
    g.clear_value_info();
    for (lib::ValueInfoProto& out : *g.mutable_output())
        if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    return true;
}

void infer_shapes(lib::ModelProto& m, const std::string& path) {
    try {
        lib::shape_inference::InferShapes(m, lib::OpSchemaRegistry::Instance(),
                                          lib::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
        fail(FailureCode::InvalidIrShapes, path,
             fmt::format("shape inference failed: {}", e.what()));
    }
}

namespace {

template <typename Fn>
void for_each_value(const lib::GraphProto& g, Fn fn) {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list)
            if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
                fn(v.name(), v.type().tensor_type().shape());
}

std::string dim_text(const lib::TensorShapeProto_Dimension& d) {
    if (d.has_dim_value()) return std::to_string(d.dim_value());
    return d.has_dim_param() ? d.dim_param() : "?";
}

// Symbolic names of a graph's values and of its subgraphs' (a body may use its own).
void collect_dim_params(const lib::GraphProto& g, std::set<std::string>& names) {
    for_each_value(g, [&](const std::string&, const lib::TensorShapeProto& shape) {
        for (const auto& d : shape.dim())
            if (d.has_dim_param()) names.insert(d.dim_param());
    });
    for (const lib::NodeProto& n : g.node())
        for (const lib::AttributeProto& a : n.attribute()) {
            if (a.has_g()) collect_dim_params(a.g(), names);
            for (const lib::GraphProto& sub : a.graphs())
                collect_dim_params(sub, names);
        }
}

} // namespace

DimNames symbolic_dim_names(const lib::GraphProto& g) {
    DimNames out;
    for_each_value(g, [&](const std::string& name, const lib::TensorShapeProto& shape) {
        std::vector<std::string> names;
        bool any = false;
        for (const auto& d : shape.dim()) {
            names.push_back(d.has_dim_param() ? d.dim_param() : "");
            any |= d.has_dim_param();
        }
        if (any) out[name] = std::move(names);
    });
    return out;
}

OpenAxes open_axes(const lib::GraphProto& g) {
    OpenAxes out;
    for (const lib::TensorProto& t : g.initializer())
        out[t.name()].assign(size_t(t.dims_size()), false);
    for_each_value(g, [&](const std::string& name, const lib::TensorShapeProto& shape) {
        std::vector<bool> open;
        for (const auto& d : shape.dim())
            open.push_back(!d.has_dim_value());
        out.emplace(name, std::move(open));
    });
    return out;
}

std::vector<ModelAnnotations::Input> declared_inputs_of(const lib::GraphProto& g) {
    std::set<std::string> initializers;
    for (const auto& t : g.initializer())
        initializers.insert(t.name());
    std::vector<ModelAnnotations::Input> out;
    for (const lib::ValueInfoProto& in : g.input()) {
        if (initializers.count(in.name())) continue;
        ModelAnnotations::Input input{in.name(), {}};
        if (in.type().has_tensor_type())
            for (const auto& d : in.type().tensor_type().shape().dim())
                input.dims.push_back(dim_text(d));
        out.push_back(std::move(input));
    }
    return out;
}

std::vector<std::string> symbolic_names(const lib::GraphProto& g) {
    std::set<std::string> names;
    collect_dim_params(g, names);
    return {names.begin(), names.end()};
}

} // namespace tmmu::onnx
