#pragma once
// The shapes of a graph's values, completed node by node while folding. Graph inference leaves a
// value open when its shape depends on a value computed from shapes (a Slice whose starts come
// from Shape(k), a Range up to a sequence length): only the next inference, after that value is
// folded, closes it. Running the node's own inference function with the values folded so far
// closes it in the same pass, so a chain that crosses every layer of a model folds in one pass
// instead of one graph inference per layer.
#include "onnx/model_reading.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tmmu::onnx {

class NodeShapes {
  public:
    // The graph's types as inference left them; its initializers are the known data. `opset` is
    // the model's default-domain opset, which picks each node's inference function; `path`
    // names the model in failures.
    NodeShapes(const lib::GraphProto& g, int64_t opset, std::string path);

    // The full static shape of a value, when graph inference or a node's inference found one.
    std::optional<std::vector<int64_t>> static_shape(const std::string& name) const;

    // A value folded into a constant: its data is known from now on, and so is its shape. `t`
    // must outlive this object (the graph's initializers do).
    void add_constant(const lib::TensorProto& t);
    // A value known but kept as a node's output (a graph output, an empty result): held here.
    void add_value(lib::TensorProto t);

    // Runs the node's inference function when one of its outputs is open. Only fully static
    // results are taken, so a value's shape is never less known than graph inference left it.
    // Nodes with subgraphs or of other domains keep what they had. A node whose inference fails
    // keeps it too, unless every input's shape is static: then the model does not hold at
    // these dimensions, and it is refused (INVALID_IR_SHAPES, naming the node and its inputs).
    void infer(lib::NodeProto& n);

    // Gives the graph's values that graph inference left open the static shapes found here: a
    // Reshape by a shape that stays a node (it is also a graph output) is closed only here. A
    // declared output keeps its fixed dims (one that differs is refused). True when something
    // changed: graph inference must then run again, to check what follows against it.
    bool close_open(lib::GraphProto& g) const;

  private:
    void set_type(const std::string& name, const lib::TypeProto& type);
    void refuse_if_known(const lib::NodeProto& n, const std::string& why) const;
    void close_declared(const std::string& name, lib::TypeProto& declared,
                        const lib::TypeProto& found) const;

    // Owned copies, because the library's inference context takes mutable pointers; an
    // unordered_map keeps its values' addresses when it grows.
    std::unordered_map<std::string, lib::TypeProto> types_;
    std::unordered_map<std::string, lib::TypeProto*> type_of_;
    std::unordered_map<std::string, const lib::TensorProto*> data_;
    std::deque<lib::TensorProto> held_; // add_value's; a deque keeps their addresses
    int64_t opset_;
    std::string path_;
};

} // namespace tmmu::onnx
