#include "token_graph/token_graph_layout.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace tmmu::views {
namespace {

bool is_node(const lazy::TraceEvent& e) {
    using lazy::EventKind;
    return e.plan != lazy::kNone && e.kind != EventKind::PoolAcquire &&
           e.kind != EventKind::PoolRelease && e.kind != EventKind::PoolFlush &&
           e.kind != EventKind::MarkStep;
}

// For each event, the compiled call whose body it belongs to (-1 for none): the events after a
// compiled_call keyed under its graph instance ("g40:n0" -> "g40:s...", pool traffic included),
// and the call's own pool traffic around them (its region arena's, "g40:n0+acquire").
std::vector<int64_t> calls_of(const lazy::Trace& trace) {
    std::vector<int64_t> out(trace.events.size(), -1);
    const auto starts = [](const std::string& key, const std::string& prefix) {
        return key.compare(0, prefix.size(), prefix) == 0;
    };
    for (size_t c = 0; c < trace.events.size(); ++c) {
        const lazy::TraceEvent& call = trace.events[c];
        if (call.kind != lazy::EventKind::CompiledCall) continue;
        const std::string body = call.key.substr(0, call.key.find(':')) + ":s";
        const std::string own = call.key + "+";
        for (size_t i = c + 1; i < trace.events.size(); ++i) {
            const std::string& key = trace.events[i].key;
            if (!starts(key, body) && !starts(key, own)) break;
            out[i] = int64_t(c);
        }
    }
    return out;
}

} // namespace

std::pair<size_t, size_t> TokenGraphLayout::nodes_in_layers(uint32_t lo, uint32_t hi) const {
    const auto first = std::lower_bound(nodes.begin(), nodes.end(), lo,
                                        [](const GraphNode& n, uint32_t l) { return n.layer < l; });
    const auto last = std::lower_bound(first, nodes.end(), hi,
                                       [](const GraphNode& n, uint32_t l) { return n.layer < l; });
    return {size_t(first - nodes.begin()), size_t(last - nodes.begin())};
}

TokenGraphLayout layout_token_graph(const lazy::Trace& trace, const std::set<uint64_t>& expanded) {
    TokenGraphLayout g;
    const size_t n = trace.events.size();
    g.call_of = calls_of(trace);
    std::vector<int64_t> node_of(n, -1);
    std::vector<uint32_t> layer_of(n, 0);
    std::vector<uint32_t> rows_in_layer;
    uint32_t base = 0; // first layer of the current plan
    int64_t plan = lazy::kNone;
    // Events arrive in PlanLinearOrder, so every dependency inside a plan is already placed.
    for (const lazy::TraceEvent& e : trace.events) {
        if (!is_node(e)) continue;
        const int64_t call = g.call_of[e.index];
        if (call >= 0) ++g.call_subevents[uint64_t(call)];
        if (call >= 0 && !expanded.count(uint64_t(call))) {
            node_of[e.index] = node_of[size_t(call)]; // drawn as its call
            layer_of[e.index] = layer_of[size_t(call)];
            continue;
        }
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
    // Each node's events: its own, and a collapsed call's body. The call's edges are every edge
    // into or out of its body, once, none inside it.
    std::vector<std::vector<uint64_t>> members(g.nodes.size());
    for (size_t i = 0; i < n; ++i)
        if (node_of[i] >= 0 && is_node(trace.events[i])) members[size_t(node_of[i])].push_back(i);
    std::set<std::tuple<uint32_t, uint32_t, bool>> linked;
    for (uint32_t to = 0; to < g.nodes.size(); ++to) {
        const auto link = [&](const std::vector<int64_t>& from, bool token) {
            for (int64_t f : from) {
                if (f < 0 || node_of[size_t(f)] < 0) continue;
                const auto source = uint32_t(node_of[size_t(f)]);
                if (source == to || !linked.insert({source, to, token}).second) continue;
                const auto idx = uint32_t(g.edges.size());
                g.edges.push_back({source, to, token});
                g.in_edges[to].push_back(idx);
                g.out_edges[source].push_back(idx);
            }
        };
        for (uint64_t ev : members[to]) {
            link(trace.events[ev].data_from, false);
            link(trace.events[ev].token_from, true);
        }
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
