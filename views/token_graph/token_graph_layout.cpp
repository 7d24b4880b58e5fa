#include "token_graph/token_graph_layout.h"

#include <algorithm>

namespace tmmu::views {
namespace {

bool is_node(const lazy::TraceEvent& e) {
    using lazy::EventKind;
    return e.plan != lazy::kNone && e.kind != EventKind::PoolAcquire &&
           e.kind != EventKind::PoolRelease && e.kind != EventKind::PoolFlush &&
           e.kind != EventKind::MarkStep;
}

} // namespace

std::pair<size_t, size_t> TokenGraphLayout::nodes_in_layers(uint32_t lo, uint32_t hi) const {
    const auto first = std::lower_bound(nodes.begin(), nodes.end(), lo,
                                        [](const GraphNode& n, uint32_t l) { return n.layer < l; });
    const auto last = std::lower_bound(first, nodes.end(), hi,
                                       [](const GraphNode& n, uint32_t l) { return n.layer < l; });
    return {size_t(first - nodes.begin()), size_t(last - nodes.begin())};
}

TokenGraphLayout layout_token_graph(const lazy::Trace& trace) {
    TokenGraphLayout g;
    const size_t n = trace.events.size();
    std::vector<int64_t> node_of(n, -1);
    std::vector<uint32_t> layer_of(n, 0);
    std::vector<uint32_t> rows_in_layer;
    uint32_t base = 0; // first layer of the current plan
    int64_t plan = lazy::kNone;
    // Events arrive in PlanLinearOrder, so every dependency inside a plan is already placed.
    for (const lazy::TraceEvent& e : trace.events) {
        if (!is_node(e)) continue;
        if (e.plan != plan) {
            if (!g.plans.empty()) g.plans.back().end_layer = g.layers;
            base = g.layers == 0 ? 0 : g.layers + 1; // one empty layer between plans
            plan = e.plan;
            g.plans.push_back({uint64_t(plan), base, base});
        }
        uint32_t layer = base;
        const auto deepen = [&](const std::vector<int64_t>& from) {
            for (int64_t f : from)
                if (f >= 0 && node_of[size_t(f)] >= 0 && trace.events[size_t(f)].plan == plan)
                    layer = std::max(layer, layer_of[size_t(f)] + 1);
        };
        deepen(e.data_from);
        deepen(e.token_from);
        if (rows_in_layer.size() <= layer) rows_in_layer.resize(layer + 1, 0);
        node_of[e.index] = int64_t(g.nodes.size());
        layer_of[e.index] = layer;
        g.nodes.push_back({e.index, layer, rows_in_layer[layer]++});
        g.layers = std::max(g.layers, layer + 1);
    }
    if (!g.plans.empty()) g.plans.back().end_layer = g.layers;
    for (uint32_t r : rows_in_layer)
        g.rows = std::max(g.rows, r);

    // Sort by (layer, row) and renumber; edges after, on the final numbering.
    std::vector<uint32_t> order(g.nodes.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return std::pair(g.nodes[a].layer, g.nodes[a].row) <
               std::pair(g.nodes[b].layer, g.nodes[b].row);
    });
    std::vector<GraphNode> sorted;
    std::vector<uint32_t> renumber(order.size());
    for (uint32_t i = 0; i < order.size(); ++i) {
        renumber[order[i]] = i;
        sorted.push_back(g.nodes[order[i]]);
    }
    g.nodes = std::move(sorted);
    for (int64_t& v : node_of)
        if (v >= 0) v = renumber[size_t(v)];

    g.in_edges.resize(g.nodes.size());
    g.out_edges.resize(g.nodes.size());
    for (uint32_t to = 0; to < g.nodes.size(); ++to) {
        const lazy::TraceEvent& e = trace.events[g.nodes[to].event];
        const auto link = [&](const std::vector<int64_t>& from, bool token) {
            for (int64_t f : from) {
                if (f < 0 || node_of[size_t(f)] < 0) continue;
                const auto idx = uint32_t(g.edges.size());
                g.edges.push_back({uint32_t(node_of[size_t(f)]), to, token});
                g.in_edges[to].push_back(idx);
                g.out_edges[size_t(node_of[size_t(f)])].push_back(idx);
            }
        };
        link(e.data_from, false);
        link(e.token_from, true);
    }
    g.node_at_event.assign(n, -1);
    int64_t last = -1;
    for (size_t i = 0; i < n; ++i) {
        if (node_of[i] >= 0) last = node_of[i];
        g.node_at_event[i] = last;
    }
    return g;
}

} // namespace tmmu::views
