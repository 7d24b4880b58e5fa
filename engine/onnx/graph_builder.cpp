#include "onnx/graph_builder.h"

#include "core/units.h"
#include "ir/validate.h"
#include "onnx/aliasing.h"
#include "onnx/node_attributes.h"
#include "plan/planner.h"

#include <fmt/format.h>

#include <algorithm>

namespace tmmu::onnx {
namespace {

// Every subgraph a node owns, with the attribute that holds it.
std::vector<std::pair<std::string, const lib::GraphProto*>> bodies_of(const lib::NodeProto& n) {
    std::vector<std::pair<std::string, const lib::GraphProto*>> out;
    for (const lib::AttributeProto& a : n.attribute()) {
        if (a.has_g()) out.emplace_back(a.name(), &a.g());
        for (const lib::GraphProto& sub : a.graphs())
            out.emplace_back(a.name(), &sub);
    }
    return out;
}

// Names a subgraph reads from enclosing scopes (nested subgraphs included), in first-use order.
std::vector<std::string> captured_names(const lib::GraphProto& g) {
    std::vector<std::string> out;
    std::set<std::string> defined, seen;
    for (const auto& in : g.input())
        defined.insert(in.name());
    for (const auto& t : g.initializer())
        defined.insert(t.name());
    auto use = [&](const std::string& name) {
        if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
    };
    for (const lib::NodeProto& n : g.node()) {
        for (const auto& in : n.input())
            use(in);
        for (const auto& [attr, body] : bodies_of(n))
            for (const std::string& name : captured_names(*body))
                use(name);
        for (const auto& o : n.output())
            defined.insert(o);
    }
    for (const auto& o : g.output())
        use(o.name()); // an output may pass an outer value straight through
    return out;
}

} // namespace

GraphBuilder::GraphBuilder(const lib::GraphProto& g, const TypeTable& types, BuildContext& ctx,
                           Role external)
    : g_(g), types_(types), ctx_(ctx), external_(external) {}

Graph GraphBuilder::build(const std::string& name) {
    out_.name = name;
    for (const auto& t : g_.initializer())
        add(t.name(), Role::Parameter);
    for (const auto& in : g_.input())
        if (!index_.count(in.name())) add(in.name(), external_);
    for (size_t i = 0; i < size_t(g_.node_size()); ++i)
        add_node(g_.node(int(i)), i);
    for (const auto& o : g_.output())
        if (auto it = index_.find(o.name());
            it != index_.end() && out_.tensors[it->second].role == Role::Activation)
            out_.tensors[it->second].role = Role::Output;
    if (ctx_.aliasing) alias_like_runtimes(out_, ctx_.notes);
    return std::move(out_);
}

TensorIndex GraphBuilder::add(const std::string& id, Role role) {
    if (auto it = index_.find(id); it != index_.end()) return it->second;
    Tensor t;
    t.id = id;
    t.name = id;
    t.role = role;
    if (auto tt = types_.of(id)) {
        t.dtype = tt->dtype;
        t.shape = tt->shape;
    }
    const auto index = TensorIndex(out_.tensors.size());
    out_.tensors.push_back(std::move(t));
    index_[id] = index;
    return index;
}

void GraphBuilder::add_node(const lib::NodeProto& n, size_t i) {
    // Some exporters keep weights in Constant nodes: they count as parameters.
    if (n.op_type() == "Constant" && is_default_domain(n.domain())) {
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
        if (!in.empty()) node.inputs.push_back(add(in, external_));
    for (const auto& o : n.output())
        if (!o.empty()) node.outputs.push_back(add(o, Role::Activation));
    add_workspace(n, node);
    out_.nodes.push_back(std::move(node));
    attributes_.push_back(attribute_texts(n));
}

// Captured outer values become inputs of the owning node (live until it finishes); the bodies'
// peak becomes its workspace. If runs one branch, so the larger one counts; Loop and Scan run
// their body once per iteration, reusing the same bytes.
void GraphBuilder::add_workspace(const lib::NodeProto& n, Node& node) {
    const auto bodies = bodies_of(n);
    if (bodies.empty()) return;
    uint64_t peak = 0;
    std::string largest;
    for (const auto& [attr, body] : bodies) {
        for (const std::string& name : captured_names(*body)) {
            const TensorIndex t = add(name, external_);
            if (std::find(node.inputs.begin(), node.inputs.end(), t) == node.inputs.end())
                node.inputs.push_back(t);
        }
        const std::string scope = fmt::format("{} '{}' of node '{}'", attr, body->name(), node.id);
        const uint64_t p = body_peak(*body, scope);
        if (p > peak || largest.empty()) largest = scope;
        peak = std::max(peak, p);
    }
    if (peak == 0) return;
    Tensor ws;
    ws.id = node.id + "/workspace";
    ws.name = ws.id;
    ws.role = Role::Workspace;
    ws.dtype = DType::U8;
    ws.shape = {int64_t(peak)};
    const auto index = TensorIndex(out_.tensors.size());
    out_.tensors.push_back(std::move(ws));
    index_[out_.tensors.back().id] = index;
    node.outputs.push_back(index);
    ctx_.notes.push_back(
        fmt::format("'{}' holds {} of workspace for {} {}: the peak of {}", out_.tensors[index].id,
                    format_bytes(peak), node.opcode,
                    n.op_type() == "If" ? "(its larger branch)" : "(one iteration)", largest));
}

// A body is built with a context of its own: its aliasing decisions stay inside it, and a body
// whose sizes depend on data (a Slice by the iteration count) cannot be sized, so the node gets
// no workspace for it and a note says what was left out, rather than failing the whole model.
uint64_t GraphBuilder::body_peak(const lib::GraphProto& body, const std::string& scope) {
    UnboundDims unbound;
    std::vector<std::string> notes;
    BuildContext inner_ctx{ctx_.dims, unbound, ctx_.aliasing, notes};
    const TypeTable types(body, ctx_.dims, unbound, &types_, scope);
    GraphBuilder inner(body, types, inner_ctx, Role::Parameter);
    Graph g = inner.build(scope);
    if (!unbound.empty()) {
        ctx_.notes.push_back(fmt::format("the temporaries of {} are not in its workspace: their "
                                         "sizes are unknown before it runs: {}",
                                         scope, unbound.text()));
        return 0;
    }
    if (g.nodes.empty()) return 0;
    finalize_graph(g);
    const Plan plan = plan_graph(g, Mode::Inference, PlanOptions{}, Progress{}, scope);
    for (const ArenaPlan& a : plan.arenas)
        if (a.config.name == "activations") return a.metrics.peak_bytes;
    return 0;
}

} // namespace tmmu::onnx
