#include "onnx/onnx_loader.h"

#include "core/failure.h"
#include "ir/validate.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <unordered_map>

namespace tmmu::onnx {
namespace {

namespace lib = ::onnx;

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

lib::ModelProto read_model(const std::string& path) {
    // The checker's file form resolves external data relative to the model (toolchain.md), and
    // runs before anything else touches the model: shape inference crashes on some corrupt ones.
    try {
        lib::checker::check_model(path);
    } catch (const std::exception& e) {
        fail(FailureCode::InvalidIrShapes, path,
             fmt::format("not a valid ONNX model: {}", e.what()));
    }
    std::ifstream in(path, std::ios::binary);
    lib::ModelProto model;
    if (!in || !model.ParseFromIstream(&in))
        fail(FailureCode::InvalidIrShapes, path, "not an ONNX model (the protobuf does not parse)");
    return model;
}

// --input-shape replaces a graph input's dims, --dim fills symbolic ones, before inference so
// the values propagate.
void apply_bindings(lib::GraphProto& g, const OnnxBindings& b, const std::string& path) {
    std::set<std::string> inputs;
    for (lib::ValueInfoProto& in : *g.mutable_input()) {
        inputs.insert(in.name());
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
    // Shapes stored downstream were computed for the old dims: inference computes them again.
    if (b.dims.empty() && b.input_shapes.empty()) return;
    g.clear_value_info();
    for (lib::ValueInfoProto& out : *g.mutable_output())
        out.mutable_type()->mutable_tensor_type()->clear_shape();
}

void check_ops_known(const lib::ModelProto& m, const std::string& path) {
    std::unordered_map<std::string, int> opset;
    for (const auto& o : m.opset_import())
        opset[o.domain() == "ai.onnx" ? "" : o.domain()] = int(o.version());
    std::set<std::string> functions;
    for (const auto& f : m.functions())
        functions.insert(f.domain() + ":" + f.name());
    for (const lib::NodeProto& n : m.graph().node()) {
        const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
        if (functions.count(n.domain() + ":" + n.op_type())) continue;
        const auto it = opset.find(domain);
        const int version = it == opset.end() ? 0 : it->second;
        if (!lib::OpSchemaRegistry::Schema(n.op_type(), version, domain))
            fail(FailureCode::InvalidIrShapes, fmt::format("{}: node '{}'", path, n.name()),
                 fmt::format("unsupported op '{}' in domain '{}' (opset {}): ONNX 1.12's tables do "
                             "not know it",
                             n.op_type(), domain.empty() ? "ai.onnx" : domain, version));
    }
}

struct TensorType {
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
};

// Types and shapes by tensor name, from initializers, inputs, outputs and inferred value_info;
// unknown dims are collected, not thrown one by one.
class Shapes {
  public:
    Shapes(const lib::GraphProto& g, const OnnxBindings& b) : b_(b) {
        for (const auto& t : g.initializer()) {
            TensorType tt;
            tt.dtype = dtype_or_fail(t.data_type(), t.name());
            tt.shape.assign(t.dims().begin(), t.dims().end());
            known_[t.name()] = tt;
        }
        for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
            for (const lib::ValueInfoProto& v : *list)
                types_.emplace(v.name(), &v.type());
    }

    std::optional<TensorType> of(const std::string& name) {
        if (auto it = known_.find(name); it != known_.end()) return it->second;
        auto it = types_.find(name);
        if (it == types_.end() || !it->second->has_tensor_type() ||
            !it->second->tensor_type().has_shape()) {
            unbound_["no inferred shape"].push_back(fmt::format("'{}'", name));
            return std::nullopt;
        }
        const auto& tt = it->second->tensor_type();
        TensorType out;
        out.dtype = dtype_or_fail(tt.elem_type(), name);
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            if (d.has_dim_value()) {
                out.shape.push_back(d.dim_value());
            } else if (d.has_dim_param() && b_.dims.count(d.dim_param())) {
                out.shape.push_back(b_.dims.at(d.dim_param()));
            } else {
                // Named dims are listed once with where they are used; unnamed ones each.
                const std::string key =
                    d.has_dim_param() ? "'" + d.dim_param() + "'" : "an unnamed dim";
                unbound_[key].push_back(fmt::format("'{}' dim {}", name, i));
                out.shape.push_back(1);
            }
        }
        return out;
    }

    // "'N' (used by 'x' dim 0, 'y' dim 0); an unnamed dim (used by 'z' dim 1)", at most a few
    // places per name; empty when every dim is known.
    std::string unbound() const {
        std::vector<std::string> parts;
        for (const auto& [what, used] : unbound_) {
            const size_t shown = std::min<size_t>(used.size(), 3);
            std::string list =
                fmt::format("{}", fmt::join(used.begin(), used.begin() + long(shown), ", "));
            if (used.size() > shown) list += fmt::format(" and {} more", used.size() - shown);
            parts.push_back(fmt::format("{} (used by {})", what, list));
        }
        return fmt::format("{}", fmt::join(parts, "; "));
    }

  private:
    DType dtype_or_fail(int32_t elem, const std::string& name) const {
        if (auto d = dtype_of(elem)) return *d;
        fail(FailureCode::InvalidIrShapes, fmt::format("tensor '{}'", name),
             fmt::format("element type {} ({}) has no fixed size", elem,
                         lib::TensorProto_DataType_Name(lib::TensorProto_DataType(elem))));
    }
    const OnnxBindings& b_;
    std::unordered_map<std::string, TensorType> known_;
    std::unordered_map<std::string, const lib::TypeProto*> types_;
    std::map<std::string, std::vector<std::string>> unbound_; // what -> where used
};

class GraphBuilder {
  public:
    GraphBuilder(const lib::GraphProto& g, Shapes& shapes) : g_(g), shapes_(shapes) {}

    Graph build(const std::string& name) {
        out_.name = name;
        for (const auto& t : g_.initializer())
            add(t.name(), Role::Parameter);
        for (const auto& in : g_.input())
            if (!index_.count(in.name())) add(in.name(), Role::Input);
        for (size_t i = 0; i < size_t(g_.node_size()); ++i)
            add_node(g_.node(int(i)), i);
        for (const auto& o : g_.output())
            if (auto it = index_.find(o.name());
                it != index_.end() && out_.tensors[it->second].role == Role::Activation)
                out_.tensors[it->second].role = Role::Output;
        return std::move(out_);
    }

  private:
    TensorIndex add(const std::string& id, Role role) {
        if (auto it = index_.find(id); it != index_.end()) return it->second;
        Tensor t;
        t.id = id;
        t.name = id;
        t.role = role;
        if (auto tt = shapes_.of(id)) {
            t.dtype = tt->dtype;
            t.shape = tt->shape;
        }
        const auto index = TensorIndex(out_.tensors.size());
        out_.tensors.push_back(std::move(t));
        index_[id] = index;
        return index;
    }

    void add_node(const lib::NodeProto& n, size_t i) {
        // Some exporters keep weights in Constant nodes: they count as parameters.
        if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) {
            for (const auto& o : n.output())
                add(o, Role::Parameter);
            return;
        }
        Node node;
        node.id = n.name().empty() || !node_ids_.insert(n.name()).second
                      ? fmt::format("{}#{}", n.op_type(), i)
                      : n.name();
        node.opcode = n.op_type();
        for (const auto& in : n.input())
            if (!in.empty()) node.inputs.push_back(add(in, Role::Input));
        for (const auto& o : n.output())
            if (!o.empty()) node.outputs.push_back(add(o, Role::Activation));
        out_.nodes.push_back(std::move(node));
    }

    const lib::GraphProto& g_;
    Shapes& shapes_;
    Graph out_;
    std::unordered_map<std::string, TensorIndex> index_;
    std::set<std::string> node_ids_;
};

std::vector<std::string> symbolic_names(const lib::GraphProto& g) {
    std::set<std::string> names;
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list)
            if (v.type().has_tensor_type())
                for (const auto& d : v.type().tensor_type().shape().dim())
                    if (d.has_dim_param()) names.insert(d.dim_param());
    return {names.begin(), names.end()};
}

} // namespace

OnnxModel load_onnx(const std::string& path, const OnnxBindings& bindings) {
    lib::ModelProto m = read_model(path);
    check_ops_known(m, path);
    OnnxModel out;
    out.symbolic_dims = symbolic_names(m.graph());
    apply_bindings(*m.mutable_graph(), bindings, path);
    try {
        lib::shape_inference::InferShapes(m, lib::OpSchemaRegistry::Instance(),
                                          lib::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
        fail(FailureCode::InvalidIrShapes, path,
             fmt::format("shape inference failed: {}", e.what()));
    }
    Shapes shapes(m.graph(), bindings);
    out.graph =
        GraphBuilder(m.graph(), shapes).build(m.graph().name().empty() ? path : m.graph().name());
    if (const std::string unbound = shapes.unbound(); !unbound.empty())
        fail(FailureCode::UnboundDimension, path,
             fmt::format("unbound dimensions (bind them with --dim NAME=VALUE or --input-shape "
                         "INPUT=AxBxC): {}",
                         unbound));
    finalize_graph(out.graph);
    out.producer = m.producer_name();
    for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") out.opset = o.version();
    return out;
}

} // namespace tmmu::onnx
