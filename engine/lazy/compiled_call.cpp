// Compiled functions and their calls (seed 004, 1.6 and 8; compiled.h says how a call works).
#include "lazy/compiled.h"
#include "lazy/engine_state.h"
#include "lazy/entry.h"
#include "lazy/lazy_error.h"

#include "core/assert.h"
#include "encoding/sha256.h"
#include "plan/strategy.h"
#include "plan/validator.h"

#include <fmt/format.h>

#include <algorithm>

namespace tmmu::lazy {

CompiledFn Engine::compile(CompiledBody fn, std::string name) {
    Entry entry(*s_, "compile");
    if (!fn) fail(FailureCode::InvalidArgument, s_->site, "compile of an empty function");
    const uint64_t id = s_->next_compiled_fn++;
    if (name.empty()) name = fmt::format("compiled#{}", id);
    s_->compiled_fns[id] = {name, std::move(fn), {}};
    return CompiledFn(id);
}

std::vector<Tensor> Engine::call(const CompiledFn& f, std::span<const Tensor> args) {
    CompiledBody body;
    bool staged = false;
    {
        Entry entry(*s_, "compiled call");
        const auto it = s_->compiled_fns.find(f.id_);
        if (it == s_->compiled_fns.end())
            fail(FailureCode::InvalidArgument, s_->site,
                 "a call of a function this engine did not compile");
        for (const Tensor& a : args)
            if (a.valid()) s_->tensor(a); // an absent argument is absent state (8.8)
        body = it->second.body;           // a copy: the function may compile others while it runs
        // Nested calls stage inline, into the outer call's body.
        staged = s_->options.compile && s_->staging == 0;
        if (staged)
            s_->begin_staging(f.id_, argument_binding(*s_, args));
        else
            s_->open_scope();
    }
    std::vector<Tensor> out;
    try {
        out = body(args);
    } catch (...) {
        if (staged) s_->abandon_staging();
        if (!staged) s_->close_scope({});
        throw;
    }
    std::vector<TensorId> returned;
    for (const Tensor& t : out) {
        s_->check_handle(t);
        returned.push_back(t.id());
    }
    if (!staged) {
        s_->close_scope(returned); // the plain run disposes what the compiled one would
        return out;
    }
    Entry entry(*s_, "compiled call");
    s_->end_staging(returned);
    return out;
}

void EngineState::begin_staging(uint64_t fn, std::string binding) {
    staging = fn;
    staging_binding = std::move(binding);
    staging_first_node = next_node;
    staging_first_loc = next_loc;
    open_scope();
}

void EngineState::abandon_staging() {
    staging = 0;
    close_scope({});
}

void EngineState::refuse_in_staging(const char* what, std::optional<LazyError> kind) const {
    if (staging == 0) return;
    const std::string name = compiled_fns.at(staging).name;
    if (kind == LazyError::HostReadInCompile)
        raise(*kind, site,
              fmt::format("{} while compiled '{}' stages: a compiled call runs no work while it "
                          "is staged; read its results after the call returns",
                          what, name));
    if (kind == LazyError::AsyncInCompile)
        raise(*kind, site,
              fmt::format("{} while compiled '{}' stages: a step barrier waits for work, which "
                          "staging never does",
                          what, name));
    fail(FailureCode::InvalidArgument, site,
         fmt::format("{} inside compiled '{}' is not supported", what, name));
}

namespace {

// The token an outside table names is the call's token once its producer is in the body: the
// call's exit publishes one token for tokGlobal and every loc it touched (8.6).
void publish_exit_token(EngineState& s, const BodyFacts& facts, ValueId tok) {
    const auto inside = [&](ValueId v) { return facts.position.count(v) > 0; };
    if (inside(s.tok_global)) s.tok_global = tok;
    for (auto& [loc, t] : s.tok_loc)
        if (inside(t)) t = tok;
    // Joins cached while staging name body tokens, but every later join starts from tokGlobal
    // (the call's token now), so none of them is ever looked up again.
}

// Plans the region arena (CompiledVariant::planned_bytes and arena_offset): each temporary, a
// kernel's output made and last read inside the call, is live from the position its kernel runs
// at to the last position that reads it; our planner (auto) places them.
void plan_region_arena(const std::vector<Node>& body, const std::map<ValueId, Value>& values,
                       const BodyFacts& facts, CompiledVariant& v) {
    const auto runs_at = [&](uint32_t k) -> uint64_t {
        const int32_t g = v.group_of[k];
        return g < 0 ? k : v.groups[static_cast<size_t>(g)].position;
    };
    const auto written = [&](uint32_t k) { // by a kernel of its own or as a group's output
        const int32_t g = v.group_of[k];
        if (g < 0) return !is_effect(body[k].op);
        const std::vector<uint32_t>& outputs = v.groups[static_cast<size_t>(g)].outputs;
        return std::find(outputs.begin(), outputs.end(), k) != outputs.end();
    };
    OffsetProblem problem;
    std::vector<uint32_t> node_of;
    for (uint32_t k = 0; k < body.size(); ++k) {
        const ValueId out = body[k].outputs.empty() ? 0 : body[k].outputs[0];
        if (!written(k) || facts.escaping.count(out)) continue;
        uint64_t last = runs_at(k) + 1;
        bool kept_by_loc = false;
        if (const auto r = facts.readers.find(out); r != facts.readers.end())
            for (uint32_t reader : r->second) {
                last = std::max(last, runs_at(reader) + 1);
                kept_by_loc |= body[reader].op == Op::LocStore;
            }
        if (kept_by_loc) continue; // the loc holds the buffer after the call
        const auto bytes = static_cast<uint64_t>(element_count(values.at(out).shape)) * 4;
        problem.buffers.push_back({runs_at(k), last, bytes, sizeof(float)});
        node_of.push_back(k);
    }
    v.arena_offset.assign(body.size(), -1);
    if (problem.buffers.empty()) return;
    const OffsetSolution plan = find_strategy("auto")->solve(problem, Progress{});
    // Kernels write these offsets: a plan that let two live temporaries share bytes would
    // corrupt values silently, so the independent validator checks it first.
    validate_solution(problem, plan.offsets, "region arena",
                      [&](size_t i) { return fmt::format("body node {}", node_of[i]); });
    v.planned_bytes = plan.height;
    for (size_t i = 0; i < node_of.size(); ++i)
        v.arena_offset[node_of[i]] = static_cast<int64_t>(plan.offsets[i]);
}

} // namespace

// 10.6, readonly-or-reject and no auto-externalize: backward replays a checkpointed body, so a
// compiled call there must leave persistent state as it found it. A write to a loc the call
// made itself (the first in-place write to a value that had no loc) would also externalize that
// value during the replay: the spec names that apart.
void EngineState::refuse_writes_in_checkpoint() {
    if (open_checkpoint == 0) return;
    for (auto it = nodes.lower_bound(staging_first_node); it != nodes.end(); ++it) {
        const Node& n = it->second;
        if (!writes_persistent_state(n)) continue;
        const bool externalizes = n.op != Op::BaseCommit && n.loc >= staging_first_loc;
        const std::string at = n.site;
        const std::string why = fmt::format(
            "compiled '{}' {} ({}: {}) inside the checkpointed body begun at {}: a compiled call "
            "there must only read persistent state (10.6), since backward replays the body",
            compiled_fns.at(staging).name,
            externalizes ? "externalizes a value by writing it in place"
                         : "writes persistent state",
            op_name(n.op), n.detail, checkpoints.at(open_checkpoint).site);
        abandon_staging();
        raise(externalizes ? LazyError::CheckpointCompiledAutoExternalize
                           : LazyError::CheckpointCompiledNotPure,
              at, why);
    }
}

void EngineState::end_staging(const std::vector<TensorId>& returned) {
    refuse_writes_in_checkpoint();
    const uint64_t fn = staging;
    const uint64_t number = next_call++;
    close_scope(returned, fn); // before the escape analysis: temporaries hold nothing now
    staging = 0;
    const auto first = nodes.lower_bound(staging_first_node);
    if (first == nodes.end()) return; // the function made nothing: no call to run
    CompiledCallRec& c = calls[number];
    c.fn = fn;
    for (auto it = first; it != nodes.end(); ++it)
        c.body.push_back(std::move(it->second));
    nodes.erase(first, nodes.end());
    const std::string functionalized = functionalize(c.body);
    const BodyFacts facts = body_facts(c.body, values);

    begin_emission();
    const NodeId id = next_node++;
    Node& n = nodes[id];
    n.op = Op::CompiledCall;
    n.call = number;
    n.site = site;
    n.key = {graph_instance, false, ir_index++, {}, 0};
    // Inputs are the values and tokens the body reads from outside, in first-use order; the
    // body's nodes hold them, so the call node does not hold them again.
    std::set<ValueId> seen;
    for (const Node& b : c.body)
        for (ValueId v : b.inputs)
            if (!facts.position.count(v) && seen.insert(v).second) n.inputs.push_back(v);
    for (ValueId v : facts.escaping) {
        n.outputs.push_back(v);
        values.at(v).producer = id;
    }
    const ValueId tok = new_value({}, true);
    values.at(tok).producer = id;
    n.outputs.push_back(tok);
    for (uint32_t k = 0; k < c.body.size(); ++k)
        c.body[k].key = {graph_instance, true, k, std::string(op_name(c.body[k].op)), 0};
    publish_exit_token(*this, facts, tok);

    c.variant = find_variant(c, facts);
    n.detail = fmt::format("{}: call {}, variant {} (cache {}), {} nodes, {} fused kernels{}",
                           compiled_fns.at(fn).name, number, to_hex(c.variant->key).substr(0, 12),
                           c.hit ? "hit" : "miss", c.body.size(), c.variant->groups.size(),
                           functionalized.empty() ? "" : ", " + functionalized);
    if (options.eager) force(n.outputs, "eager");
}

std::shared_ptr<const CompiledVariant> EngineState::find_variant(CompiledCallRec& call,
                                                                 const BodyFacts& facts) {
    const std::string text = normalized_body(*this, call.body, facts) + staging_binding;
    Sha256 h;
    h.update(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    const Digest key = h.finish();
    auto& variants = compiled_fns.at(call.fn).variants;
    for (auto it = variants.begin(); it != variants.end(); ++it) {
        if ((*it)->key != key) continue;
        variants.splice(variants.end(), variants, it); // most recently used last
        ++cache_hits;
        call.hit = true;
        return variants.back();
    }
    ++cache_misses;
    auto v = std::make_shared<CompiledVariant>();
    v->key = key;
    if (options.fuse) v->groups = fusion_groups(call.body, values, facts);
    v->group_of.assign(call.body.size(), -1);
    for (size_t g = 0; g < v->groups.size(); ++g)
        for (uint32_t k : v->groups[g].members)
            v->group_of[k] = static_cast<int32_t>(g);
    plan_region_arena(call.body, values, facts, *v);
    compiled_planned_bytes = std::max(compiled_planned_bytes, v->planned_bytes);
    variants.push_back(v);
    if (variants.size() > kMaxVariantsPerFunction) variants.pop_front();
    return v;
}

std::vector<Node*> EngineState::call_schedule(CompiledCallRec& call) {
    std::vector<Node*> out;
    for (uint32_t k = 0; k < call.body.size(); ++k)
        if (call.variant->group_of[k] < 0) out.push_back(&call.body[k]);
    return out; // fused members are pure: nothing in them is planned
}

void EngineState::run_call(Node& n, TraceEvent& e) {
    CompiledCallRec& c = calls.at(n.call);
    const CompiledVariant& v = *c.variant;
    note_values(n, e);
    e.detail += fmt::format(", region arena {} B", v.planned_bytes);
    const uint64_t index = record(std::move(e));
    // The call's temporaries live in one pool buffer at the offsets the variant planned. (A
    // failure on the way poisons the engine, 6.7: nothing runs after it to find the arena set.)
    const std::string call_key = current_key;
    TMMU_ASSERT(running_arena == 0, "compiled calls run one at a time (nested ones are inlined)");
    if (v.planned_bytes > 0) {
        for (uint32_t k = 0; k < c.body.size(); ++k)
            if (v.arena_offset[k] >= 0)
                arena_places[c.body[k].outputs[0]] = static_cast<uint64_t>(v.arena_offset[k]);
        running_arena = acquire_buffer(v.planned_bytes / sizeof(float),
                                       fmt::format("the region arena of call {} ({} temporaries)",
                                                   n.call, arena_places.size()));
    }
    for (uint32_t k = 0; k < c.body.size(); ++k) {
        const int32_t g = v.group_of[k];
        if (g < 0)
            execute_node(c.body[k]);
        else if (v.groups[static_cast<size_t>(g)].position == k)
            run_fused(c, v.groups[static_cast<size_t>(g)], {n.key.instance, true, k, "fused", 0});
    }
    if (running_arena != 0) {
        for (const auto& [value, offset] : arena_places)
            TMMU_ASSERT(values.at(value).storage == 0, "no temporary outlives its compiled call");
        current_key = call_key;
        release_storage(running_arena, fmt::format("the region arena of call {} ends", n.call));
        running_arena = 0;
        arena_places.clear();
    }
    n.done = true;
    Value& tok = values.at(n.outputs.back());
    tok.ready = true;
    tok.event = static_cast<int64_t>(index);
}

} // namespace tmmu::lazy
