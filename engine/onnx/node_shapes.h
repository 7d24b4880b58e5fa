#pragma once
// The shapes of a graph's values, completed node by node while folding. Graph inference leaves a
// value open when its shape depends on a value computed from shapes (a Slice whose starts come
// from Shape(k), a Range up to a sequence length): only the next inference, after that value is
// folded, closes it. Running the node's own inference function with the values folded so far
// closes it in the same pass, so a chain that crosses every layer of a model folds in one pass
// instead of one graph inference per layer.
#include "onnx/model_reading.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tmmu::onnx {

class NodeShapes {
  public:
    // The graph's types as inference left them; its initializers are the known data. `opset` is
    // the model's default-domain opset, which picks each node's inference function.
    NodeShapes(const lib::GraphProto& g, int64_t opset);

    // The full static shape of a value, when graph inference or a node's inference found one.
    std::optional<std::vector<int64_t>> static_shape(const std::string& name) const;

    // A value folded into a constant: its data is known from now on, and so is its shape.
    void add_constant(const lib::TensorProto& t);

    // Runs the node's inference function when one of its outputs is open. Only fully static
    // results are taken, so a value's shape is never less known than graph inference left it.
    // Nodes with subgraphs, of other domains or whose inference fails keep what they had.
    void infer(lib::NodeProto& n);

  private:
    void set_type(const std::string& name, const lib::TypeProto& type);

    // Owned copies, because the library's inference context takes mutable pointers; an
    // unordered_map keeps its values' addresses when it grows.
    std::unordered_map<std::string, lib::TypeProto> types_;
    std::unordered_map<std::string, lib::TypeProto*> type_of_;
    std::unordered_map<std::string, const lib::TensorProto*> data_;
    int64_t opset_;
};

} // namespace tmmu::onnx
