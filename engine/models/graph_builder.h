#pragma once
// Appends tensors and nodes to a Graph. take() gives them zero-padded ids ("t000123",
// "n000045", all of one width), so the lexicographic id order the planner uses for ties equals
// creation order. The execution order is creation order: create nodes in a valid schedule.
#include "ir/graph.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tmmu {

class GraphBuilder {
  public:
    explicit GraphBuilder(std::string graph_name);

    TensorIndex add_tensor(std::string name, std::vector<int64_t> shape, DType dtype, Role role);
    NodeIndex add_node(std::string opcode, std::vector<TensorIndex> inputs,
                       std::vector<TensorIndex> outputs, Phase phase);

    Tensor& tensor(TensorIndex t) { return graph_.tensors[t]; }
    const Graph& graph() const { return graph_; }
    size_t tensor_count() const { return graph_.tensors.size(); }
    size_t node_count() const { return graph_.nodes.size(); }

    // Drops every tensor and node created after the given counts (a later part of the graph
    // that must not reference earlier tensors' fields, which holds for backward/optimizer).
    void truncate(size_t tensors, size_t nodes);

    // Returns the graph with execution_order = creation order (not yet finalized).
    Graph take();

  private:
    Graph graph_;
};

} // namespace tmmu
