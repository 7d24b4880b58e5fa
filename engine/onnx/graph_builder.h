#pragma once
// One ONNX graph (the main graph or an If/Loop/Scan body) as model IR. Initializers and Constant
// outputs are parameters, declared inputs come from outside, node outputs are activations and
// graph outputs outputs. A node that owns subgraphs reads every outer value they capture (so
// those stay live across it) and writes a workspace holding its bodies' peak: the larger branch
// of an If, one iteration of a Loop or Scan. With aliasing on, shape-only ops are views and
// single-consumer elementwise ops write in place, as ONNX runtimes do; notes say which and why.
#include "onnx/tensor_types.h"

#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tmmu::onnx {

struct BuildContext {
    const std::map<std::string, int64_t>& dims;
    UnboundDims& unbound;
    bool aliasing = true;
    std::vector<std::string>& notes;
};

class GraphBuilder {
  public:
    // external: the role of values from outside this graph (Input for the main graph; a body's
    // inputs and captures are planned by the enclosing graph, so Parameter keeps them out of the
    // body's activations).
    GraphBuilder(const lib::GraphProto& g, const TypeTable& types, BuildContext& ctx,
                 Role external);

    Graph build(const std::string& name);
    // [node index of the built graph]: the node's attributes as text.
    std::vector<std::vector<std::pair<std::string, std::string>>> take_attributes() {
        return std::move(attributes_);
    }

  private:
    TensorIndex add(const std::string& id, Role role);
    void add_node(const lib::NodeProto& n, size_t i);
    void add_workspace(const lib::NodeProto& n, Node& node);
    uint64_t body_peak(const lib::GraphProto& body, const std::string& scope);

    const lib::GraphProto& g_;
    const TypeTable& types_;
    BuildContext& ctx_;
    Role external_;
    Graph out_;
    std::unordered_map<std::string, TensorIndex> index_;
    std::set<std::string> node_ids_;
    std::vector<std::vector<std::pair<std::string, std::string>>> attributes_;
};

} // namespace tmmu::onnx
