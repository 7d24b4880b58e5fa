#include "onnx_models.h"

#include <cstring>

#include <fstream>
#include <stdexcept>

namespace tmmu::test {

namespace lib = ::onnx;

void add_value(google::protobuf::RepeatedPtrField<lib::ValueInfoProto>& list,
               const std::string& name, const std::vector<std::string>& dims, int32_t elem) {
    lib::ValueInfoProto* v = list.Add();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (const std::string& d : dims) {
        auto* dim = shape->add_dim();
        if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos)
            dim->set_dim_value(std::stoll(d));
        else
            dim->set_dim_param(d);
    }
}

OnnxModelBuilder::OnnxModelBuilder(int64_t opset, const std::string& name) {
    model_.set_ir_version(7);
    model_.set_producer_name("tmmu-tests");
    model_.add_opset_import()->set_version(opset);
    model_.mutable_graph()->set_name(name);
}

void OnnxModelBuilder::import_opset(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
}

void OnnxModelBuilder::input(const std::string& name, const std::vector<std::string>& dims,
                             int32_t elem) {
    add_value(*graph().mutable_input(), name, dims, elem);
}

void OnnxModelBuilder::output(const std::string& name, const std::vector<std::string>& dims,
                              int32_t elem) {
    add_value(*graph().mutable_output(), name, dims, elem);
}

void OnnxModelBuilder::int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                         const std::vector<int64_t>& values) {
    lib::TensorProto& t = add_tensor(name, dims, lib::TensorProto_DataType_INT64);
    for (int64_t v : values)
        t.add_int64_data(v);
}

namespace {

uint64_t float_bytes(const std::vector<int64_t>& dims) {
    uint64_t bytes = 4;
    for (int64_t d : dims)
        bytes *= uint64_t(d);
    return bytes;
}

} // namespace

lib::TensorProto& OnnxModelBuilder::add_tensor(const std::string& name,
                                               const std::vector<int64_t>& dims, int32_t elem) {
    lib::TensorProto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (int64_t d : dims)
        t->add_dims(d);
    return *t;
}

void OnnxModelBuilder::float_initializer(const std::string& name,
                                         const std::vector<int64_t>& dims) {
    add_tensor(name, dims, lib::TensorProto_DataType_FLOAT)
        .set_raw_data(std::string(float_bytes(dims), '\0'));
}

void OnnxModelBuilder::float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                         const std::vector<float>& values) {
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    add_tensor(name, dims, lib::TensorProto_DataType_FLOAT).set_raw_data(std::move(bytes));
}

void OnnxModelBuilder::external_initializer(const std::string& name,
                                            const std::vector<int64_t>& dims,
                                            const std::string& file, uint64_t offset) {
    lib::TensorProto* t = &add_tensor(name, dims, lib::TensorProto_DataType_FLOAT);
    t->set_data_location(lib::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
        auto* e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
    };
    add("location", file);
    add("offset", std::to_string(offset));
    add("length", std::to_string(float_bytes(dims)));
}

lib::NodeProto& OnnxModelBuilder::node(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& outputs) {
    lib::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(graph().node_size()));
    for (const auto& i : inputs)
        n->add_input(i);
    for (const auto& o : outputs)
        n->add_output(o);
    return *n;
}

void OnnxModelBuilder::save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out || !model_.SerializeToOstream(&out))
        throw std::runtime_error("cannot write ONNX test model " + path);
}

void set_int(lib::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(lib::AttributeProto::INT);
    a->set_i(v);
}

void set_ints(lib::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(lib::AttributeProto::INTS);
    for (int64_t x : v)
        a->add_ints(x);
}

void set_graph(lib::NodeProto& n, const std::string& name, const lib::GraphProto& g) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(lib::AttributeProto::GRAPH);
    *a->mutable_g() = g;
}

void set_int64_tensor(lib::NodeProto& n, const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& values) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(lib::AttributeProto::TENSOR);
    lib::TensorProto* t = a->mutable_t();
    t->set_data_type(lib::TensorProto_DataType_INT64);
    for (int64_t d : dims)
        t->add_dims(d);
    for (int64_t v : values)
        t->add_int64_data(v);
}

void first_dimension(OnnxModelBuilder& b, const std::string& input, const std::string& shape,
                     const std::string& out) {
    b.node("Shape", {input}, {shape});
    b.node("Slice", {shape, "zero", "one"}, {out});
}

void write_shape_chain(const std::string& path) {
    OnnxModelBuilder b(11, "shape_chain");
    b.input("x", {"N", "3", "4", "4"});
    b.int64_initializer("zero", {}, {0});
    b.int64_initializer("minus_one", {1}, {-1});
    b.node("Shape", {"x"}, {"s"});
    set_int(b.node("Gather", {"s", "zero"}, {"batch"}), "axis", 0);
    set_ints(b.node("Unsqueeze", {"batch"}, {"batch1"}), "axes", {0});
    set_int(b.node("Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
    b.node("Reshape", {"x", "target"}, {"y"});
    b.node("Relu", {"y"}, {"z"});
    b.output("z", {"N", "48"});
    b.save(path);
}

void write_symbolic_relu(const std::string& path) {
    OnnxModelBuilder b(13, "relu");
    b.input("x", {"N", "64"});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", {"N", "64"});
    b.save(path);
}

void write_layered_shape_chain(const std::string& path, int layers) {
    OnnxModelBuilder b(13, "layered_shape_chain");
    b.input("x", {"N", "64"});
    b.float_initializer("table", {4096, 64});
    b.int64_initializer("zero", {1}, {0});
    b.int64_initializer("one", {1}, {1});
    std::string h = "x";
    for (int i = 0; i < layers; ++i) {
        const std::string layer = std::to_string(i);
        b.node("Shape", {h}, {"shape" + layer});
        b.node("Slice", {"shape" + layer, "zero", "one"}, {"rows" + layer});
        b.node("Slice", {"table", "zero", "rows" + layer, "zero"}, {"mask" + layer});
        b.node("Add", {h, "mask" + layer}, {"h" + layer});
        h = "h" + layer;
    }
    b.output(h, {"?", "64"});
    b.save(path);
}

} // namespace tmmu::test
