#include "runtime/opcode_map.h"

#include "core/failure.h"

#include <fmt/format.h>

namespace tmmu::runtime {

namespace {

const OperatorMapping* mapping(std::string_view op) {
    for (const OperatorMapping& m : kOperatorMap)
        if (m.op == op) return &m;
    return nullptr;
}

// Inside a macro-op that projections join: not a norm, a residual add or the embedding.
bool joinable(const OperatorMapping* m) {
    return m && !m->joins_neighbour &&
           (m->opcode == Opcode::MultiheadAttention || m->opcode == Opcode::GeluMlp ||
            m->opcode == Opcode::Swiglu);
}

} // namespace

std::vector<Opcode> macro_ops(const Graph& g) {
    std::vector<NodeIndex> producer(g.tensors.size(), kNone);
    std::vector<std::vector<NodeIndex>> consumers(g.tensors.size());
    for (NodeIndex n = 0; n < g.nodes.size(); ++n) {
        for (TensorIndex t : g.nodes[n].outputs)
            producer[t] = n;
        for (TensorIndex t : g.nodes[n].inputs)
            consumers[t].push_back(n);
    }
    std::vector<Opcode> out;
    out.reserve(g.nodes.size());
    for (const Node& node : g.nodes) {
        const OperatorMapping* m = mapping(node.opcode);
        if (!m)
            fail(FailureCode::InvalidArgument, fmt::format("node '{}'", node.id),
                 fmt::format("operator '{}' has no runtime macro-op (runtime plans are for "
                             "inference graphs)",
                             node.opcode));
        Opcode op = m->opcode;
        if (m->joins_neighbour) {
            const NodeIndex before = node.inputs.empty() ? kNone : producer[node.inputs[0]];
            const OperatorMapping* in = before == kNone ? nullptr : mapping(g.nodes[before].opcode);
            if (joinable(in)) {
                op = in->opcode;
            } else {
                for (TensorIndex t : node.outputs)
                    for (NodeIndex c : consumers[t])
                        if (joinable(mapping(g.nodes[c].opcode)))
                            op = mapping(g.nodes[c].opcode)->opcode;
            }
        }
        out.push_back(op);
    }
    return out;
}

} // namespace tmmu::runtime
