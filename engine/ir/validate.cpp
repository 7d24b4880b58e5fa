// finalize_graph(): structural checks of a Graph and derivation of producers, consumers, byte
// sizes and the execution order. Every pass is linear in tensors + node edges; id lookups use a
// hash map built once (Graph::find_tensor is linear and must not be used here).
#include "ir/validate.h"

#include "core/checked.h"
#include "core/failure.h"
#include "ir/dynamic_dims.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <string_view>
#include <unordered_map>

namespace tmmu {
namespace {

constexpr FailureCode kShapes = FailureCode::InvalidIrShapes;

std::string tensor_at(const Tensor& t, std::string_view field) {
    return field.empty() ? fmt::format("tensor '{}'", t.id)
                         : fmt::format("tensor '{}'.{}", t.id, field);
}

std::string node_at(const Node& n, std::string_view field) {
    return field.empty() ? fmt::format("node '{}'", n.id)
                         : fmt::format("node '{}'.{}", n.id, field);
}

class Finalizer {
  public:
    explicit Finalizer(Graph& g) : g_(g) {}

    void run() {
        reset_derived();
        check_tensor_ids();
        check_node_ids();
        check_enums();
        link_producers();
        bind_dynamic_axes();
        compute_bytes();
        check_alignment();
        check_views();
        check_in_place();
        check_must_not_alias();
        check_producer_roles();
        if (g_.execution_order.empty())
            derive_order();
        else
            check_given_order();
        fill_consumers_and_steps();
    }

  private:
    Graph& g_;

    uint32_t tensor_count() const { return static_cast<uint32_t>(g_.tensors.size()); }
    uint32_t node_count() const { return static_cast<uint32_t>(g_.nodes.size()); }

    // Derived fields are recomputed from scratch so finalizing twice is harmless.
    void reset_derived() {
        if (g_.tensors.size() >= kNone || g_.nodes.size() >= kNone)
            fail(kShapes, "graph", "more than 2^32-1 tensors or nodes");
        for (Tensor& t : g_.tensors) {
            t.bytes = 0;
            t.producer = kNone;
            t.consumers.clear();
        }
        g_.step_of.clear();
    }

    void check_tensor_ids() {
        std::unordered_map<std::string_view, uint32_t> seen;
        seen.reserve(g_.tensors.size());
        for (uint32_t i = 0; i < tensor_count(); ++i) {
            Tensor& t = g_.tensors[i];
            if (t.id.empty())
                fail(kShapes, fmt::format("tensors[{}].id", i),
                     "tensor id is empty; every tensor needs a unique, non-empty id");
            auto [it, inserted] = seen.emplace(t.id, i);
            if (!inserted)
                fail(kShapes, tensor_at(t, "id"),
                     fmt::format("duplicate tensor id '{}' (tensors[{}] and tensors[{}])", t.id,
                                 it->second, i));
            if (t.name.empty()) t.name = t.id;
        }
    }

    void check_node_ids() {
        std::unordered_map<std::string_view, uint32_t> seen;
        seen.reserve(g_.nodes.size());
        for (uint32_t i = 0; i < node_count(); ++i) {
            const Node& n = g_.nodes[i];
            if (n.id.empty())
                fail(kShapes, fmt::format("nodes[{}].id", i),
                     "node id is empty; every node needs a unique, non-empty id");
            auto [it, inserted] = seen.emplace(n.id, i);
            if (!inserted)
                fail(kShapes, node_at(n, "id"),
                     fmt::format("duplicate node id '{}' (nodes[{}] and nodes[{}])", n.id,
                                 it->second, i));
        }
    }

    // Enums may come from casts in API callers; an out-of-range value would index past tables.
    void check_enums() {
        for (const Tensor& t : g_.tensors) {
            if (static_cast<uint8_t>(t.dtype) > static_cast<uint8_t>(DType::Bool))
                fail(kShapes, tensor_at(t, "dtype"), "dtype value is not a known DType");
            if (static_cast<uint8_t>(t.role) > static_cast<uint8_t>(Role::Workspace))
                fail(kShapes, tensor_at(t, "role"), "role value is not a known Role");
        }
        for (const Node& n : g_.nodes)
            if (static_cast<uint8_t>(n.phase) > static_cast<uint8_t>(Phase::Optimizer))
                fail(kShapes, node_at(n, "phase"), "phase value is not a known Phase");
    }

    // `where` is a callable so the location string is only built on failure (hot path).
    template <typename Where>
    void check_ref(TensorIndex t, Where&& where) const {
        if (t >= tensor_count())
            fail(kShapes, where(),
                 fmt::format("tensor index {} is out of range (the graph has {} tensors)", t,
                             tensor_count()));
    }

    void link_producers() {
        for (uint32_t n = 0; n < node_count(); ++n) {
            const Node& node = g_.nodes[n];
            for (size_t k = 0; k < node.outputs.size(); ++k) {
                TensorIndex t = node.outputs[k];
                check_ref(t, [&] { return node_at(node, fmt::format("outputs[{}]", k)); });
                Tensor& out = g_.tensors[t];
                if (out.producer == n)
                    fail(kShapes, node_at(node, fmt::format("outputs[{}]", k)),
                         fmt::format("node lists output '{}' more than once", out.id));
                if (out.producer != kNone)
                    fail(kShapes, tensor_at(out, ""),
                         fmt::format("tensor '{}' has two producers: node '{}' and node '{}'; "
                                     "each tensor is written by at most one node",
                                     out.id, g_.nodes[out.producer].id, node.id));
                out.producer = n;
            }
        }
        for (uint32_t n = 0; n < node_count(); ++n) {
            const Node& node = g_.nodes[n];
            for (size_t k = 0; k < node.inputs.size(); ++k) {
                TensorIndex t = node.inputs[k];
                check_ref(t, [&] { return node_at(node, fmt::format("inputs[{}]", k)); });
                if (g_.tensors[t].producer == n)
                    fail(kShapes, node_at(node, fmt::format("inputs[{}]", k)),
                         fmt::format("node reads its own output '{}'", g_.tensors[t].id));
            }
        }
    }

    // Every dimension is named once and bound inside its envelope; every dynamic axis then takes
    // its dimension's value, so the shapes below are those of the binding (seed 000, II.H).
    void bind_dynamic_axes() {
        check_dims();
        for (Tensor& t : g_.tensors) {
            if (t.shape_dims.empty()) continue;
            if (t.shape_dims.size() != t.shape.size())
                fail(kShapes, tensor_at(t, "shape"),
                     fmt::format("{} dynamic-axis entries for {} axes", t.shape_dims.size(),
                                 t.shape.size()));
            for (size_t k = 0; k < t.shape.size(); ++k) {
                AxisDims& axis = t.shape_dims[k];
                if (axis == AxisDims{}) continue; // fixed, as most are
                const std::string at = tensor_at(t, fmt::format("shape[{}]", k));
                check_axis(axis, at);
                std::sort(axis.dims.begin(), axis.dims.end());
                t.shape[k] = axis_extent(g_, axis, at);
            }
        }
    }

    void check_axis(const AxisDims& axis, const std::string& at) const {
        for (uint32_t d : axis.dims)
            if (d >= g_.dims.size())
                fail(kShapes, at,
                     fmt::format("dimension index {} is out of range (the graph declares {})", d,
                                 g_.dims.size()));
        if (axis.factor < 1 || (axis.fixed() && axis.factor != 1))
            fail(kShapes, at,
                 fmt::format("factor {} of an axis {}", axis.factor,
                             axis.fixed() ? "that follows no dimension (a fixed axis has none)"
                                          : "is not positive"));
    }

    // Dimensions are kept in name order (the order a JSON object gives them), so a graph built
    // through the API saves and loads with the same Graph::dims, Plan::dims and summaries.
    void check_dims() {
        sort_dims_by_name();
        for (size_t i = 0; i < g_.dims.size(); ++i) {
            const DynamicDim& d = g_.dims[i];
            const std::string at = fmt::format("shape_envelope.{}", d.name);
            if (const std::string why = dim_name_problem(d.name); !why.empty())
                fail(kShapes, d.name.empty() ? "shape_envelope" : at, why);
            if (i > 0 && g_.dims[i - 1].name == d.name)
                fail(kShapes, at, fmt::format("dimension '{}' is declared twice", d.name));
            if (d.min < 1 || d.min > d.max || d.max > kMaxDynamicDim)
                fail(kShapes, at,
                     fmt::format("envelope [{}, {}] is not inside [1, {}] with min <= max", d.min,
                                 d.max, kMaxDynamicDim));
            check_inside_envelope(d, d.value, at);
        }
        if (static_cast<uint8_t>(g_.replan_policy) >
            static_cast<uint8_t>(ReplanPolicy::ReplanAtSafepoint))
            fail(kShapes, "replan_policy", "replan policy value is not a known ReplanPolicy");
        if (g_.dims.empty() && g_.replan_policy != ReplanPolicy::Abort)
            fail(kShapes, "replan_policy",
                 "a replan policy needs dynamic dimensions: the model declares no "
                 "shape_envelope");
    }

    void sort_dims_by_name() {
        if (std::is_sorted(
                g_.dims.begin(), g_.dims.end(),
                [](const DynamicDim& a, const DynamicDim& b) { return a.name < b.name; }))
            return;
        std::vector<uint32_t> order(g_.dims.size());
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return g_.dims[a].name < g_.dims[b].name; });
        std::vector<uint32_t> new_index(order.size());
        std::vector<DynamicDim> sorted;
        for (uint32_t k = 0; k < order.size(); ++k) {
            new_index[order[k]] = k;
            sorted.push_back(std::move(g_.dims[order[k]]));
        }
        g_.dims = std::move(sorted);
        for (Tensor& t : g_.tensors)
            for (AxisDims& axis : t.shape_dims)
                for (uint32_t& d : axis.dims)
                    if (d < new_index.size()) d = new_index[d];
    }

    static uint64_t mul_or_fail(uint64_t a, uint64_t b, const Tensor& t) {
        uint64_t r;
        if (__builtin_mul_overflow(a, b, &r)) checked_mul(a, b, tensor_at(t, "shape")); // throws
        return r;
    }

    void compute_bytes() {
        for (Tensor& t : g_.tensors) {
            uint64_t elements = 1; // a scalar (empty shape) has one element
            for (size_t k = 0; k < t.shape.size(); ++k) {
                if (t.shape[k] < 0)
                    fail(kShapes, tensor_at(t, fmt::format("shape[{}]", k)),
                         fmt::format("dimension {} is negative; dimensions must be >= 0",
                                     t.shape[k]));
                elements = mul_or_fail(elements, static_cast<uint64_t>(t.shape[k]), t);
            }
            t.bytes = mul_or_fail(elements, dtype_bytes(t.dtype), t);
        }
    }

    void check_alignment() {
        for (const Tensor& t : g_.tensors) {
            if (t.alignment != 0 && !is_power_of_two(t.alignment))
                fail(FailureCode::AlignmentViolation, tensor_at(t, "alignment"),
                     fmt::format("alignment {} is not a power of two (use 0 for the arena "
                                 "default)",
                                 t.alignment));
            if (t.alignment != 0 && t.pinned_offset && *t.pinned_offset % t.alignment != 0)
                fail(FailureCode::AlignmentViolation, tensor_at(t, "offset"),
                     fmt::format("pinned offset {} is not a multiple of the tensor's alignment {}",
                                 *t.pinned_offset, t.alignment));
        }
    }

    void check_views() {
        for (uint32_t i = 0; i < tensor_count(); ++i) {
            const Tensor& t = g_.tensors[i];
            if (!t.view) continue;
            check_ref(t.view->base, [&] { return tensor_at(t, "view.base"); });
            if (t.view->base == i)
                fail(kShapes, tensor_at(t, "view.base"), "a tensor cannot be a view of itself");
        }
        reject_view_cycles();
        for (Tensor& t : g_.tensors) {
            if (!t.view) continue;
            ViewDesc& v = *t.view;
            // 0 means "the bytes the view spans"; a view with a dynamic axis follows its binding.
            const uint64_t span = view_span(t);
            if (v.byte_length == 0 || t.dynamic()) v.byte_length = span;
            if (v.byte_length != span)
                fail(kShapes, tensor_at(t, "view.byte_length"),
                     v.strides.empty()
                         ? fmt::format("view byte_length {} differs from the tensor's own size {} "
                                       "bytes (shape x dtype); give {} or 0",
                                       v.byte_length, span, span)
                         : fmt::format("view byte_length {} differs from the {} bytes the strided "
                                       "view spans (shape, strides and dtype); give {} or 0",
                                       v.byte_length, span, span));
            const Tensor& base = g_.tensors[v.base];
            uint64_t end;
            if (__builtin_add_overflow(v.byte_offset, v.byte_length, &end))
                checked_add(v.byte_offset, v.byte_length, tensor_at(t, "view")); // throws
            if (end > base.bytes)
                fail(kShapes, tensor_at(t, "view"),
                     fmt::format("view bytes [{}, {}) exceed base '{}' of {} bytes", v.byte_offset,
                                 end, base.id, base.bytes));
        }
    }

    // The bytes a view spans in its base: its own size when contiguous; with strides, from its
    // first element to one past its last, (sum of (extent - 1) * stride + 1) elements.
    uint64_t view_span(const Tensor& t) const {
        const ViewDesc& v = *t.view;
        if (v.strides.empty()) return t.bytes;
        const std::string at = tensor_at(t, "view.stride_desc");
        if (t.dynamic())
            fail(kShapes, at, "a strided view needs a fixed shape (its strides are fixed)");
        if (v.strides.size() != t.shape.size())
            fail(kShapes, at,
                 fmt::format("{} strides for a shape of rank {}; give one per axis",
                             v.strides.size(), t.shape.size()));
        if (g_.tensors[v.base].view && !g_.tensors[v.base].view->strides.empty())
            fail(kShapes, at, "the base is itself a strided view; give the view of the storage");
        if (t.bytes == 0) return 0;
        uint64_t last = 0;
        for (size_t i = 0; i < t.shape.size(); ++i)
            last = checked_add(last, checked_mul(uint64_t(t.shape[i] - 1), v.strides[i], at), at);
        return checked_mul(checked_add(last, 1, at), dtype_bytes(t.dtype), at);
    }

    // Views form a functional graph (one base each); a walk that meets its own path is a cycle.
    void reject_view_cycles() {
        enum : uint8_t { kUnseen, kOnPath, kDone };
        std::vector<uint8_t> state(g_.tensors.size(), kUnseen);
        std::vector<TensorIndex> path;
        for (uint32_t i = 0; i < tensor_count(); ++i) {
            path.clear();
            TensorIndex cur = i;
            while (state[cur] == kUnseen && g_.tensors[cur].view) {
                state[cur] = kOnPath;
                path.push_back(cur);
                cur = g_.tensors[cur].view->base;
            }
            if (state[cur] == kOnPath) {
                auto start = std::find(path.begin(), path.end(), cur);
                std::string chain;
                for (auto it = start; it != path.end(); ++it)
                    chain += fmt::format("'{}' -> ", g_.tensors[*it].id);
                fail(kShapes, tensor_at(g_.tensors[cur], "view.base"),
                     fmt::format("view cycle: {}'{}'; a view chain must end at a non-view tensor",
                                 chain, g_.tensors[cur].id));
            }
            for (TensorIndex p : path)
                state[p] = kDone;
        }
    }

    void check_in_place() {
        for (uint32_t i = 0; i < tensor_count(); ++i) {
            const Tensor& t = g_.tensors[i];
            if (t.in_place_of == kNone) continue;
            check_ref(t.in_place_of, [&] { return tensor_at(t, "in_place_of"); });
            if (t.in_place_of == i)
                fail(kShapes, tensor_at(t, "in_place_of"), "a tensor cannot be in place of itself");
            const Tensor& target = g_.tensors[t.in_place_of];
            if (target.bytes != t.bytes)
                fail(kShapes, tensor_at(t, "in_place_of"),
                     fmt::format("in-place write needs equal sizes: '{}' is {} bytes, '{}' is {} "
                                 "bytes",
                                 t.id, t.bytes, target.id, target.bytes));
            const bool reads_target =
                t.producer != kNone &&
                std::find(g_.nodes[t.producer].inputs.begin(), g_.nodes[t.producer].inputs.end(),
                          t.in_place_of) != g_.nodes[t.producer].inputs.end();
            if (!reads_target)
                fail(kShapes, tensor_at(t, "in_place_of"),
                     t.producer == kNone
                         ? fmt::format("in-place tensor '{}' has no producer; it must be written "
                                       "by a node that reads '{}'",
                                       t.id, target.id)
                         : fmt::format("producer '{}' of in-place tensor '{}' does not read '{}'; "
                                       "an in-place write must overwrite one of its node's inputs",
                                       g_.nodes[t.producer].id, t.id, target.id));
        }
    }

    void check_must_not_alias() {
        for (uint32_t i = 0; i < tensor_count(); ++i) {
            const Tensor& t = g_.tensors[i];
            for (size_t k = 0; k < t.must_not_alias.size(); ++k) {
                auto where = [&] { return tensor_at(t, fmt::format("must_not_alias[{}]", k)); };
                check_ref(t.must_not_alias[k], where);
                if (t.must_not_alias[k] == i)
                    fail(kShapes, where(), "a tensor cannot be listed in its own must_not_alias");
            }
        }
    }

    // Values from outside the graph (parameters, inputs, optimizer state) need no producer and
    // may only be written by an in-place update; every other role must be written by a node.
    void check_producer_roles() {
        for (const Tensor& t : g_.tensors) {
            const bool external = t.role == Role::Parameter || t.role == Role::Input ||
                                  t.role == Role::OptimizerState;
            if (!external && t.producer == kNone)
                fail(kShapes, tensor_at(t, "producer"),
                     fmt::format("{} tensor '{}' has no producer; only parameters, inputs and "
                                 "optimizer_state may come from outside the graph",
                                 role_name(t.role), t.id));
            if (external && t.producer != kNone && t.in_place_of == kNone)
                fail(kShapes, tensor_at(t, "producer"),
                     fmt::format("{} tensor '{}' is written by node '{}'; a {} may only be "
                                 "produced by an in-place update (set in_place_of)",
                                 role_name(t.role), t.id, g_.nodes[t.producer].id,
                                 role_name(t.role)));
        }
    }

    void check_given_order() {
        std::vector<uint32_t> pos(g_.nodes.size(), kNone);
        const auto& order = g_.execution_order;
        for (uint32_t k = 0; k < order.size(); ++k) {
            std::string where = fmt::format("execution_order[{}]", k);
            if (order[k] >= node_count())
                fail(kShapes, where,
                     fmt::format("node index {} is out of range (the graph has {} nodes)", order[k],
                                 node_count()));
            if (pos[order[k]] != kNone)
                fail(kShapes, where,
                     fmt::format("node '{}' is listed twice (also at execution_order[{}])",
                                 g_.nodes[order[k]].id, pos[order[k]]));
            pos[order[k]] = k;
        }
        if (order.size() != g_.nodes.size()) {
            auto missing = std::find(pos.begin(), pos.end(), kNone) - pos.begin();
            fail(kShapes, "execution_order",
                 fmt::format("node '{}' is missing; the order must list every node exactly once",
                             g_.nodes[missing].id));
        }
        for (uint32_t k = 0; k < order.size(); ++k) {
            const Node& node = g_.nodes[order[k]];
            for (size_t i = 0; i < node.inputs.size(); ++i) {
                const Tensor& t = g_.tensors[node.inputs[i]];
                if (t.producer != kNone && pos[t.producer] > k)
                    fail(FailureCode::LivenessCycle, node_at(node, fmt::format("inputs[{}]", i)),
                         fmt::format("node '{}' (execution_order[{}]) reads tensor '{}' before "
                                     "its producer '{}' runs (execution_order[{}])",
                                     node.id, k, t.id, g_.nodes[t.producer].id, pos[t.producer]));
            }
        }
    }

    // Kahn's algorithm; among ready nodes the lowest node index goes first, so the order is a
    // pure function of the graph.
    void derive_order() {
        const uint32_t n = node_count();
        std::vector<uint32_t> indeg(n, 0), first(n + 1, 0);
        for_each_edge([&](NodeIndex from, NodeIndex) { ++first[from + 1]; });
        for (uint32_t i = 0; i < n; ++i)
            first[i + 1] += first[i];
        std::vector<NodeIndex> succ(first[n]);
        std::vector<uint32_t> fill(first.begin(), first.end() - 1);
        for_each_edge([&](NodeIndex from, NodeIndex to) {
            succ[fill[from]++] = to;
            ++indeg[to];
        });
        std::priority_queue<NodeIndex, std::vector<NodeIndex>, std::greater<>> ready;
        for (uint32_t i = 0; i < n; ++i)
            if (indeg[i] == 0) ready.push(i);
        auto& order = g_.execution_order;
        order.reserve(n);
        while (!ready.empty()) {
            NodeIndex v = ready.top();
            ready.pop();
            order.push_back(v);
            for (uint32_t e = first[v]; e < first[v + 1]; ++e)
                if (--indeg[succ[e]] == 0) ready.push(succ[e]);
        }
        if (order.size() != n) report_cycle(indeg);
    }

    template <typename Fn>
    void for_each_edge(Fn&& fn) const {
        for (uint32_t v = 0; v < node_count(); ++v)
            for (TensorIndex t : g_.nodes[v].inputs)
                if (g_.tensors[t].producer != kNone) fn(g_.tensors[t].producer, v);
    }

    // Every node Kahn left behind still has an unprocessed predecessor, so walking predecessors
    // from the lowest such node must revisit a node: that loop is a cycle.
    [[noreturn]] void report_cycle(const std::vector<uint32_t>& indeg) {
        std::vector<uint32_t> on_path(g_.nodes.size(), kNone);
        std::vector<std::pair<NodeIndex, TensorIndex>> path; // node, tensor it reads from pred
        NodeIndex v = static_cast<NodeIndex>(
            std::find_if(indeg.begin(), indeg.end(), [](uint32_t d) { return d > 0; }) -
            indeg.begin());
        while (on_path[v] == kNone) {
            on_path[v] = static_cast<uint32_t>(path.size());
            TensorIndex via = kNone;
            for (TensorIndex t : g_.nodes[v].inputs) {
                NodeIndex p = g_.tensors[t].producer;
                if (p != kNone && indeg[p] > 0) {
                    via = t;
                    break;
                }
            }
            path.emplace_back(v, via);
            v = g_.tensors[via].producer;
        }
        // path[on_path[v]..] walks against the dataflow; print it reversed, along the dataflow.
        std::string chain = fmt::format("'{}'", g_.nodes[v].id);
        for (size_t i = path.size(); i-- > on_path[v];) {
            NodeIndex reader = path[i].first;
            chain +=
                fmt::format(" --{}--> '{}'", g_.tensors[path[i].second].id, g_.nodes[reader].id);
        }
        fail(FailureCode::LivenessCycle, node_at(g_.nodes[v], ""),
             fmt::format("the dataflow has a cycle: {}; no execution order exists", chain));
    }

    void fill_consumers_and_steps() {
        g_.step_of.assign(g_.nodes.size(), kNone);
        for (uint32_t step = 0; step < g_.execution_order.size(); ++step) {
            NodeIndex v = g_.execution_order[step];
            g_.step_of[v] = step;
            for (TensorIndex t : g_.nodes[v].inputs) {
                auto& consumers = g_.tensors[t].consumers;
                if (consumers.empty() || consumers.back() != v) consumers.push_back(v);
            }
        }
    }
};

} // namespace

void finalize_graph(Graph& g) {
    Finalizer(g).run();
}

} // namespace tmmu
