#include "onnx/node_shapes.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

namespace tmmu::onnx {
namespace {

std::optional<std::vector<int64_t>> static_dims(const lib::TypeProto& type) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& d : type.tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return std::nullopt;
        dims.push_back(d.dim_value());
    }
    return dims;
}

bool has_subgraph(const lib::NodeProto& n) {
    for (const auto& a : n.attribute())
        if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

} // namespace

NodeShapes::NodeShapes(const lib::GraphProto& g, int64_t opset, std::string path)
    : opset_(opset), path_(std::move(path)) {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list)
            set_type(v.name(), v.type());
    // Pointers into the graph's initializer list: adding to it keeps existing elements in place.
    for (const lib::TensorProto& t : g.initializer())
        add_constant(t);
}

void NodeShapes::set_type(const std::string& name, const lib::TypeProto& type) {
    lib::TypeProto& stored = types_[name];
    stored = type;
    type_of_[name] = &stored;
}

std::optional<std::vector<int64_t>> NodeShapes::static_shape(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? std::nullopt : static_dims(it->second);
}

void NodeShapes::add_value(lib::TensorProto t) {
    add_constant(held_.emplace_back(std::move(t)));
}

void NodeShapes::add_constant(const lib::TensorProto& t) {
    data_[t.name()] = &t;
    if (static_shape(t.name())) return;
    lib::TypeProto type;
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(t.data_type());
    auto* shape = tensor->mutable_shape();
    for (int64_t d : t.dims())
        shape->add_dim()->set_dim_value(d);
    set_type(t.name(), type);
}

// Inputs of fully static shapes that the node's inference refuses: the model does not hold at
// these dimensions (a sequence past the positions a causal mask was built for). Graph inference
// would drop the node's outputs silently, and libonnx 1.12 then crashes in a Shape of them.
void NodeShapes::refuse_if_known(const lib::NodeProto& n, const std::string& why) const {
    std::vector<std::string> inputs;
    for (const std::string& in : n.input()) {
        if (in.empty()) continue;
        const auto dims = static_shape(in);
        if (!dims) return;
        inputs.push_back(fmt::format("[{}]", fmt::join(*dims, ", ")));
    }
    const std::string node = n.name().empty()
                                 ? fmt::format("the {} writing '{}'", n.op_type(), n.output(0))
                                 : fmt::format("node '{}' ({})", n.name(), n.op_type());
    fail(FailureCode::InvalidIrShapes, path_,
         fmt::format("{} does not hold for inputs of shapes {} ({})", node, fmt::join(inputs, ", "),
                     why));
}

void NodeShapes::infer(lib::NodeProto& n) {
    bool open = false;
    for (const auto& o : n.output())
        open = open || (!o.empty() && !static_shape(o));
    if (!open || !is_default_domain(n.domain()) || has_subgraph(n)) return;
    const lib::OpSchema* schema = lib::OpSchemaRegistry::Schema(n.op_type(), int(opset_));
    if (!schema || !schema->has_type_and_shape_inference_function()) return;
    lib::shape_inference::InferenceContextImpl ctx(n, type_of_, data_, {});
    try {
        schema->GetTypeAndShapeInferenceFunction()(ctx);
    } catch (const std::exception& e) {
        refuse_if_known(n, e.what());
        return; // an input's shape is open: graph inference may still close it
    }
    for (int i = 0; i < n.output_size(); ++i)
        if (!n.output(i).empty() && !static_shape(n.output(i)) &&
            static_dims(*ctx.getOutputType(size_t(i))))
            set_type(n.output(i), *ctx.getOutputType(size_t(i)));
}

bool NodeShapes::close_open(lib::GraphProto& g) const {
    std::unordered_map<std::string, lib::TypeProto*> typed;
    for (auto* list : {g.mutable_output(), g.mutable_value_info()})
        for (lib::ValueInfoProto& v : *list)
            typed.emplace(v.name(), v.mutable_type());
    bool changed = false;
    for (const lib::NodeProto& n : g.node())
        for (const std::string& o : n.output()) {
            auto found = types_.find(o);
            if (o.empty() || found == types_.end() || !static_dims(found->second)) continue;
            auto it = typed.find(o);
            if (it == typed.end()) {
                lib::ValueInfoProto* v = g.add_value_info();
                v->set_name(o);
                *v->mutable_type() = found->second;
                changed = true;
            } else if (!static_dims(*it->second)) {
                close_declared(o, *it->second, found->second);
                changed = true;
            }
        }
    return changed;
}

// A declared output keeps its fixed dims: one that differs from what inference found is refused.
void NodeShapes::close_declared(const std::string& name, lib::TypeProto& declared,
                                const lib::TypeProto& found) const {
    const auto dims = *static_dims(found);
    // No shape, or none known (inference leaves an empty one where it knows no rank).
    if (!declared.tensor_type().has_shape() || declared.tensor_type().shape().dim_size() == 0) {
        declared = found;
        return;
    }
    auto* shape = declared.mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != int(dims.size()))
        fail(FailureCode::InvalidIrShapes, path_,
             fmt::format("'{}' is declared with {} dims, and inference finds [{}]", name,
                         shape->dim_size(), fmt::join(dims, ", ")));
    for (size_t k = 0; k < dims.size(); ++k) {
        auto* d = shape->mutable_dim(int(k));
        if (d->has_dim_value() && d->dim_value() != dims[k])
            fail(FailureCode::InvalidIrShapes, path_,
                 fmt::format("'{}' is declared with dim {} = {}, and inference finds [{}]", name, k,
                             d->dim_value(), fmt::join(dims, ", ")));
        d->set_dim_value(dims[k]);
    }
}

} // namespace tmmu::onnx
