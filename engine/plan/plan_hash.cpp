#include "plan/plan_hash.h"

#include "core/failure.h"
#include "encoding/sha256.h"
#include "ir/dynamic_dims.h"
#include "liveness/liveness.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace tmmu {

namespace {

using cbor::Value;

Digest hash_value(const Value& v) {
    return sha256(cbor::encode_canonical(v));
}

// A CBOR array built by moving its items in: tuple(...) goes through an
// initializer_list, which copies every item, and a copied 100k-row table dominated hashing time.
template <class... Items>
Value tuple(Items&&... items) {
    Value a = Value::array();
    a.items.reserve(sizeof...(items));
    (a.items.push_back(std::forward<Items>(items)), ...);
    return a;
}

// Indices 0..n-1 ordered by the id the callback returns (bytewise), ties by index. id_of must
// return a reference so that sorting does not copy strings.
template <class IdOf>
std::vector<size_t> sorted_by_id(size_t n, IdOf id_of) {
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return id_of(a) < id_of(b); });
    return order;
}

Value tensor_ref(const Graph& g, TensorIndex t, const std::string& where) {
    if (t >= g.tensors.size())
        fail(FailureCode::InvalidIrShapes, where,
             "tensor index " + std::to_string(t) + " is out of range (" +
                 std::to_string(g.tensors.size()) + " tensors)");
    return Value::str(g.tensors[t].id);
}

// Per axis: null for a fixed axis, else its text ("batch", "batch*seq", "4*N"), so a graph whose
// axes each follow one dimension hashes as it did before products were allowed.
Value shape_dims(const Graph& g, const Tensor& t, const std::string& where) {
    Value axes = Value::array();
    for (const AxisDims& axis : t.shape_dims) {
        for (uint32_t d : axis.dims)
            if (d >= g.dims.size())
                fail(FailureCode::InvalidIrShapes, where + ".shape",
                     "dimension index " + std::to_string(d) + " is out of range");
        axes.items.push_back(axis.fixed() ? Value::null() : Value::str(axis_text(g, axis)));
    }
    return axes;
}

// {name: [min, max, value], ...} and the replan policy: the envelope and the binding.
Value shape_envelope(const Graph& g) {
    Value dims = Value::map();
    for (const DynamicDim& d : g.dims)
        dims.set(d.name,
                 tuple(Value::integer(d.min), Value::integer(d.max), Value::integer(d.value)));
    return dims;
}

Value canonical_tensor(const Graph& g, const Tensor& t) {
    const std::string where = "tensor '" + t.id + "'";
    Value shape = Value::array();
    for (int64_t dim : t.shape)
        shape.items.push_back(Value::integer(dim));
    Value view = Value::null();
    if (t.view) {
        view = Value::map();
        view.set("base", tensor_ref(g, t.view->base, where + ".view.base"));
        view.set("byte_offset", Value::uint64(t.view->byte_offset));
        view.set("byte_length", Value::uint64(t.view->byte_length));
        // Only a strided view names its strides: contiguous views hash as before.
        if (!t.view->strides.empty()) {
            Value strides = Value::array();
            for (uint64_t s : t.view->strides)
                strides.items.push_back(Value::uint64(s));
            view.set("stride_desc", std::move(strides));
        }
    }
    std::vector<std::string> forbidden;
    for (TensorIndex other : t.must_not_alias)
        forbidden.push_back(tensor_ref(g, other, where + ".must_not_alias").text);
    std::sort(forbidden.begin(), forbidden.end());
    forbidden.erase(std::unique(forbidden.begin(), forbidden.end()), forbidden.end());
    Value must_not_alias = Value::array();
    for (const std::string& id : forbidden)
        must_not_alias.items.push_back(Value::str(id));

    Value m = Value::map();
    m.set("id", Value::str(t.id));
    m.set("shape", std::move(shape));
    m.set("dtype", Value::str(dtype_name(t.dtype)));
    m.set("role", Value::str(role_name(t.role)));
    m.set("alias_group", Value::str(t.alias_group));
    m.set("view", std::move(view));
    m.set("in_place_of", t.in_place_of == kNone
                             ? Value::null()
                             : tensor_ref(g, t.in_place_of, where + ".in_place_of"));
    m.set("saved_for_backward", Value::boolean(t.saved_for_backward));
    m.set("must_not_alias", std::move(must_not_alias));
    m.set("alignment", Value::uint64(t.alignment));
    m.set("pinned_offset", t.pinned_offset ? Value::uint64(*t.pinned_offset) : Value::null());
    if (t.dynamic()) m.set("shape_dims", shape_dims(g, t, where));
    return m;
}

Value canonical_node(const Graph& g, const Node& n) {
    const std::string where = "node '" + n.id + "'";
    Value inputs = Value::array();
    for (TensorIndex t : n.inputs)
        inputs.items.push_back(tensor_ref(g, t, where + ".inputs"));
    Value outputs = Value::array();
    for (TensorIndex t : n.outputs)
        outputs.items.push_back(tensor_ref(g, t, where + ".outputs"));
    Value m = Value::map();
    m.set("id", Value::str(n.id));
    m.set("opcode", Value::str(n.opcode));
    m.set("inputs", std::move(inputs));
    m.set("outputs", std::move(outputs));
    m.set("phase", Value::str(phase_name(n.phase)));
    return m;
}

const std::string& arena_name_of(const Plan& plan, const PlannedTensor& t) {
    if (t.arena >= plan.arenas.size())
        fail(FailureCode::InvalidArgument, "tensor '" + t.id + "'.arena",
             "arena index " + std::to_string(t.arena) + " is out of range (" +
                 std::to_string(plan.arenas.size()) + " arenas)");
    return plan.arenas[t.arena].config.name;
}

Digest arena_config_hash(const Plan& plan) {
    Value configs = Value::array();
    for (const ArenaPlan& a : plan.arenas) {
        Value config = tuple(Value::str(a.config.name), Value::uint64(a.config.capacity),
                             Value::uint64(a.config.alignment));
        // Only a paged arena names its page size: plans of unpaged arenas hash as before.
        if (a.config.page_size != 0) config.items.push_back(Value::uint64(a.config.page_size));
        configs.items.push_back(std::move(config));
    }
    return hash_value(configs);
}

Digest execution_order_hash(const Plan& plan) {
    Value order = Value::array();
    for (const std::string& id : plan.execution_order)
        order.items.push_back(Value::str(id));
    return hash_value(order);
}

} // namespace

Value shard_spec_value(const ShardSpec& spec) {
    if (spec.roles.empty()) return Value::map();
    Value roles = Value::array();
    for (Role r : spec.roles)
        roles.items.push_back(Value::str(role_name(r)));
    Value v = Value::map();
    v.set("contract", Value::str("tmmu_flat_shard_v1"));
    v.set("roles", std::move(roles));
    return v;
}

Value canonical_ir(const Graph& g) {
    Value tensors = Value::array();
    for (size_t i : sorted_by_id(g.tensors.size(),
                                 [&](size_t k) -> const std::string& { return g.tensors[k].id; }))
        tensors.items.push_back(canonical_tensor(g, g.tensors[i]));
    Value nodes = Value::array();
    for (size_t i : sorted_by_id(g.nodes.size(),
                                 [&](size_t k) -> const std::string& { return g.nodes[k].id; }))
        nodes.items.push_back(canonical_node(g, g.nodes[i]));
    Value body = Value::map();
    body.set("tensors", std::move(tensors));
    body.set("nodes", std::move(nodes));
    if (!g.dims.empty()) {
        body.set("shape_envelope", shape_envelope(g));
        body.set("replan_policy", Value::str(replan_policy_name(g.replan_policy)));
    }
    return tuple(Value::str("tmmu_ir_v1"), std::move(body));
}

Digest ir_hash(const Graph& g) {
    return hash_value(canonical_ir(g));
}

void write_buffer_fields(cbor::Writer& w, const Buffer& b) {
    w.uint64(b.begin);
    w.uint64(b.end);
    w.uint64(b.size);
    w.uint64(b.alignment);
    if (b.pinned)
        w.uint64(*b.pinned);
    else
        w.null();
}

Digest problem_hash(const OffsetProblem& p, const std::vector<std::string>& ids) {
    if (ids.size() != p.buffers.size())
        fail(FailureCode::InvalidArgument, "problem_hash ids",
             "expected one id per buffer (" + std::to_string(p.buffers.size()) + "), got " +
                 std::to_string(ids.size()));
    // ["tmmu_problem_v1", [[id, begin, end, size, alignment, pinned | null], ...]], streamed:
    // problems reach millions of rows.
    cbor::Writer w;
    w.array(2);
    w.text("tmmu_problem_v1");
    w.array(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        w.array(6);
        w.text(ids[i]);
        write_buffer_fields(w, b);
    }
    return sha256(w.data());
}

std::vector<uint8_t> plan_hash_preimage(const Plan& plan) {
    std::vector<size_t> order = sorted_by_id(
        plan.tensors.size(), [&](size_t k) -> const std::string& { return plan.tensors[k].id; });
    const Digest arena_hash = arena_config_hash(plan);
    const Digest order_hash = execution_order_hash(plan);
    const Digest shard_hash = hash_value(shard_spec_value(plan.shard));
    cbor::Writer w;
    w.array(2);
    w.text("tmmu_plan_v1");
    w.array(9);
    w.bytes(plan.ir_hash.data(), plan.ir_hash.size());
    w.text(mode_name(plan.mode));
    w.bytes(arena_hash.data(), arena_hash.size());
    w.bytes(order_hash.data(), order_hash.size());
    w.uint64(plan.shard.rank);
    w.uint64(plan.shard.world_size);
    w.bytes(shard_hash.data(), shard_hash.size());
    w.array(2); // slot_assignment_table
    w.bytes(plan.replay_token.data(), plan.replay_token.size());
    w.array(order.size());
    for (size_t i : order) {
        const PlannedTensor& t = plan.tensors[i];
        w.array(3);
        w.text(t.id);
        w.text(arena_name_of(plan, t));
        w.uint64(t.slot);
    }
    w.array(order.size()); // logical_address_table
    for (size_t i : order) {
        const PlannedTensor& t = plan.tensors[i];
        w.array(4);
        w.text(t.id);
        w.text(arena_name_of(plan, t));
        w.uint64(t.offset);
        w.uint64(t.size);
    }
    return w.data();
}

Digest compute_plan_hash(const Plan& plan) {
    return sha256(plan_hash_preimage(plan));
}

Digest replan_key(const Graph& g, const Plan& plan) {
    Value envelope = Value::map();
    for (const DynamicDim& d : g.dims)
        envelope.set(d.name, tuple(Value::integer(d.min), Value::integer(d.max)));
    const Digest envelope_hash = hash_value(envelope), arenas = arena_config_hash(plan);
    return hash_value(tuple(Value::byte_string(envelope_hash.data(), envelope_hash.size()),
                            Value::str(mode_name(plan.mode)),
                            Value::byte_string(arenas.data(), arenas.size())));
}

} // namespace tmmu
