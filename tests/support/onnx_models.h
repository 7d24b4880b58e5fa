#pragma once
// Small ONNX models written by the tests and benchmarks themselves (the corpus has no opset
// 9-12 exports with shape chains, no views worth checking and no external data): a builder over
// the ONNX project's protobuf classes. Built only with the ONNX loader.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::test {

class OnnxModelBuilder {
  public:
    explicit OnnxModelBuilder(int64_t opset, const std::string& name = "model");

    // dims: "3" fixed, "N" symbolic; element type float unless given.
    void input(const std::string& name, const std::vector<std::string>& dims,
               int32_t elem = ::onnx::TensorProto_DataType_FLOAT);
    void output(const std::string& name, const std::vector<std::string>& dims,
                int32_t elem = ::onnx::TensorProto_DataType_FLOAT);
    void int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& values);
    // Float weights (zeros) stored in the model itself, as raw data.
    void float_initializer(const std::string& name, const std::vector<int64_t>& dims);
    // A float constant with these values (a Resize's scales), as raw data.
    void float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<float>& values);
    // Float weights stored in `file` (relative to the model) at `offset`, length from dims.
    void external_initializer(const std::string& name, const std::vector<int64_t>& dims,
                              const std::string& file, uint64_t offset);
    ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs);

    void import_opset(const std::string& domain, int64_t version);
    ::onnx::GraphProto& graph() { return *model_.mutable_graph(); }
    void save(const std::string& path) const;

  private:
    // An initializer with its name, element type and dims, and no data yet.
    ::onnx::TensorProto& add_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    int32_t elem);

    ::onnx::ModelProto model_;
};

void set_int(::onnx::NodeProto& n, const std::string& name, int64_t v);
void set_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_graph(::onnx::NodeProto& n, const std::string& name, const ::onnx::GraphProto& g);
// An int64 tensor attribute (ConstantOfShape's fill `value`).
void set_int64_tensor(::onnx::NodeProto& n, const std::string& name,
                      const std::vector<int64_t>& dims, const std::vector<int64_t>& values);

// `out` = [first dimension of `input`], through `shape` = Shape(input); the model needs the int64
// initializers "zero" and "one".
void first_dimension(OnnxModelBuilder& b, const std::string& input, const std::string& shape,
                     const std::string& out);

// An opset-11 export: y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])), the batch
// dim symbolic. The ONNX library's data propagation does not follow these op versions.
void write_shape_chain(const std::string& path);

// y = Relu(x), x and y [N, 64] with N symbolic: the smallest model whose dimension can vary.
void write_symbolic_relu(const std::string& path);

// `layers` layers over x [N, 64]: rows<i> = Shape(h<i-1>)[0:1], mask<i> = table[0:rows<i>] (a
// Slice whose ends come from a shape, as a causal mask is sliced up to the sequence length) and
// h<i> = h<i-1> + mask<i>, from h<-1> = x. No layer's shape is known before the chain ahead of it
// folds.
void write_layered_shape_chain(const std::string& path, int layers);

// A value_info entry for a subgraph's inputs and outputs (bodies declare their own).
void add_value(google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>& list,
               const std::string& name, const std::vector<std::string>& dims,
               int32_t elem = ::onnx::TensorProto_DataType_FLOAT);

} // namespace tmmu::test
