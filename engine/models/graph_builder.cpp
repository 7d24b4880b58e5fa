#include "models/graph_builder.h"

#include <fmt/format.h>

#include <numeric>
#include <utility>

namespace tmmu {

GraphBuilder::GraphBuilder(std::string graph_name) {
    graph_.name = std::move(graph_name);
}

TensorIndex GraphBuilder::add_tensor(std::string name, std::vector<int64_t> shape, DType dtype,
                                     Role role) {
    auto index = static_cast<TensorIndex>(graph_.tensors.size());
    Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.role = role;
    graph_.tensors.push_back(std::move(t));
    return index;
}

NodeIndex GraphBuilder::add_node(std::string opcode, std::vector<TensorIndex> inputs,
                                 std::vector<TensorIndex> outputs, Phase phase) {
    Node n;
    n.opcode = std::move(opcode);
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.phase = phase;
    graph_.nodes.push_back(std::move(n));
    return static_cast<NodeIndex>(graph_.nodes.size() - 1);
}

void GraphBuilder::truncate(size_t tensors, size_t nodes) {
    graph_.tensors.resize(tensors);
    graph_.nodes.resize(nodes);
}

namespace {

// Ids sort like their indices only when all have the same number of digits.
int id_width(size_t count) {
    int width = 6;
    for (size_t limit = 1000000; count > limit && width < 20; limit *= 10)
        ++width;
    return width;
}

} // namespace

Graph GraphBuilder::take() {
    int tensor_width = id_width(graph_.tensors.size());
    for (size_t i = 0; i < graph_.tensors.size(); ++i)
        graph_.tensors[i].id = fmt::format("t{:0{}}", i, tensor_width);
    int node_width = id_width(graph_.nodes.size());
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
        graph_.nodes[i].id = fmt::format("n{:0{}}", i, node_width);
    graph_.execution_order.resize(graph_.nodes.size());
    std::iota(graph_.execution_order.begin(), graph_.execution_order.end(), NodeIndex{0});
    return std::move(graph_);
}

} // namespace tmmu
