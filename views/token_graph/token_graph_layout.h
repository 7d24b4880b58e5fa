#pragma once
// Geometry of the token graph view: the events of each forced plan as a layered DAG. An event's
// layer is one past the deepest event it depends on (data or token) inside its plan, so every
// edge runs left to right; within a layer events stack in PlanLinearOrder. Plans follow each
// other left to right. Pool traffic and mark_step phases are not nodes: they belong to the
// node before them (the cursor on one highlights that node). A compiled call is one node unless
// it is expanded: its body's subevents then follow it as nodes of their own; collapsed, they
// belong to the call's node, and the edges that reach them reach the call.
#include "lazy/event_trace.h"

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace tmmu::views {

struct GraphNode {
    uint64_t event = 0;
    uint32_t layer = 0; // x, in layers (plans side by side)
    uint32_t row = 0;   // y, in rows
};

struct GraphEdge {
    uint32_t from = 0, to = 0; // node indices
    bool token = false;        // a token edge (ordering), else data
};

struct PlanBand {
    uint64_t plan = 0;
    uint32_t first_layer = 0, end_layer = 0; // [first, end)
};

struct TokenGraphLayout {
    std::vector<GraphNode> nodes; // sorted by (layer, row): visible ranges by binary search
    std::vector<GraphEdge> edges;
    std::vector<std::vector<uint32_t>> in_edges, out_edges; // per node, edge indices
    std::vector<int64_t> node_at_event; // per trace event: its node, or the node before it (-1)
    std::vector<int64_t> call_of;       // per trace event: the compiled call it is inside, or -1
    std::map<uint64_t, uint32_t> call_subevents; // per compiled call event: its body's events
    std::vector<PlanBand> plans;
    uint32_t layers = 0, rows = 0;

    // Nodes whose layer lies in [lo, hi): a contiguous range of `nodes`.
    std::pair<size_t, size_t> nodes_in_layers(uint32_t lo, uint32_t hi) const;
};

// `expanded`: the compiled call events whose bodies are shown as nodes.
TokenGraphLayout layout_token_graph(const lazy::Trace& trace,
                                    const std::set<uint64_t>& expanded = {});

} // namespace tmmu::views
