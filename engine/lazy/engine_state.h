#pragma once
// The engine's tables (seed 004, section 2) and the routines the engine's files share. Internal
// to engine/lazy: callers use engine.h.
//
// Ids start at 1 (0 is "none") and grow monotonically, so every table iterates in creation
// order and the same program numbers everything the same way every run.
#include "lazy/buffer_pool.h"
#include "lazy/compiled.h"
#include "lazy/engine.h"
#include "lazy/lazy_error.h"
#include "lazy/lazy_graph.h"

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace tmmu::lazy {

enum class Binding : uint8_t { Ssa, PendingLoc, Loc };

struct BaseRec {
    Shape shape;
    std::string name;
    Binding binding = Binding::Ssa;
    ValueId value = 0;    // Ssa: the base's value (a held reference)
    LocId loc = 0;        // PendingLoc, Loc
    ValueId seed = 0;     // PendingLoc: the initial value (held) until initialised
    ValueId init_tok = 0; // PendingLoc: the initializer store's token once emitted (3.7)
    uint64_t binding_version = 0;
    uint64_t logical_version = 0; // SSA-backed semantic intent
    uint64_t commit_version = 0;  // committed in-place mutations (base_commit only)
    uint32_t pins = 0;            // live handles naming this base
    bool mutated_since_step = false;
};

enum class Tombstone : uint8_t { None, GradInvalidated, UserFreed, Internal };

struct LocRec {
    LocRole role = LocRole::TensorState;
    BaseId base = 0;
    uint64_t version = 0;         // committed stores, in PlanLinearOrder
    uint64_t logical_version = 0; // semantic stores scheduled (never rolled back)
    bool has_value = false;
    StorageId storage = 0; // strong reference once has_value
    Tombstone tombstone = Tombstone::None;
    uint64_t created_epoch = 0;
};

struct TensorRec {
    BaseId base = 0;
    std::optional<ViewMeta> view; // against the base
    std::string name;
    bool escapes = false, disposed = false;
    bool requires_grad = false, is_leaf = false, retain_grad = false;
    AutogradId grad_fn = 0;
    TensorId grad = 0;     // the .grad handle (a grad_state base), 0 when null
    uint64_t trace_fn = 0; // made while a call of this compiled function staged, not returned
};

// A value saved for backward, guarded by its base's commit version at the save's token point.
struct SavedSlot {
    ValueId value = 0; // held until the backward that reads it runs or the graph is freed
    // Saved inside a checkpointed body: the forward's value, not held; backward recomputes it
    // (checkpoint.cpp) and then holds the recomputed one in `value`.
    uint64_t region = 0;
    ValueId recorded = 0;
    BaseId base = 0;
    std::string tensor;   // name for the error
    std::string saved_by; // "matmul at program[4]"
    bool published = false;
    uint64_t version = 0; // base commit version at publish, once published
};

struct AutogradNode {
    Op op = Op::Copy;
    std::vector<Shape> input_shapes;
    std::vector<AutogradId> input_fns;  // 0: that input is a leaf or needs no grad
    std::vector<TensorId> input_leaves; // leaf tensors requiring grad (else 0)
    std::vector<SavedSlotId> saved;
    std::vector<int64_t> dims;
    bool keepdim = false;
    ViewMeta view;                 // View: against the input's value
    std::vector<TensorId> retains; // non-leaf tensors with retain_grad made by this node
    bool freed = false;
};

// A checkpointed body (section 10): what backward needs to replay it whole. Its nodes are
// copied when it ends (mark_step compacts the originals); the values its pure ops read but did
// not make (its inputs, parameters it loaded) are held from the moment they are read (an eager
// run frees values as soon as their last reader ran) until the replay, so the replay sees the
// very values the forward saw.
struct CheckpointRegion {
    std::string site; // where the body began
    struct Recorded {
        Node node;
        std::vector<Shape> outputs;
    };
    std::vector<Recorded> body;
    std::set<ValueId> external;     // held until replayed
    std::set<ValueId> made;         // while recorded: the values its pure ops made
    std::vector<SavedSlotId> slots; // the saved values it recomputes instead of keeping
    bool replayed = false;
};

// The ownerId/depth execution lock (6.8): held by one thread at a time; a second entry from
// the same thread is re-entrant, from another thread overlapping. Either is EngineBusyError.
struct ExecLock {
    std::atomic<bool> held{false};
    std::atomic<std::thread::id> owner{};
    std::atomic<const char*> running{""};
};

struct FinalizeQueue {
    std::mutex mutex;
    std::deque<TensorId> ids; // drained front first, one at a time
};

struct Tensor::Ref {
    std::weak_ptr<FinalizeQueue> queue;
    TensorId id = 0;
    ~Ref();
};

// Planned state of one force (3.4), filled in PlanLinearOrder before anything runs.
struct PlannedState {
    std::map<LocId, LocRec> locs;
    std::map<BaseId, uint64_t> commits;
    std::map<BaseId, const Node*> last_commit; // naming the mutation that broke a saved slot
    std::map<SavedSlotId, uint64_t> published;
};

struct EngineState {
    explicit EngineState(Engine& engine, EngineOptions options);

    Engine& engine;
    EngineOptions options;
    std::string site = "api";
    std::function<void(const TraceEvent&)> observer;

    std::map<ValueId, Value> values;
    std::map<NodeId, Node> nodes;
    std::map<BaseId, BaseRec> bases;
    std::map<LocId, LocRec> locs;
    std::map<TensorId, TensorRec> tensors;
    std::map<AutogradId, AutogradNode> autograd;
    std::map<SavedSlotId, SavedSlot> saved;
    uint64_t next_value = 1, next_node = 1, next_base = 1, next_loc = 1, next_tensor = 1;
    uint64_t next_autograd = 1, next_saved = 1, next_mut = 1;

    // Tokens (3.2): tokGlobal and the per-loc chains.
    ValueId tok_global = 0;
    std::map<LocId, ValueId> tok_loc;

    // Emission identity (3.4.2): one graph instance per public call, nodes numbered inside it.
    uint64_t graph_instance = 0;
    uint32_t ir_index = 0, synthetic_index = 0;

    BufferPool pool;
    Trace trace;
    uint64_t epoch = 0, steps = 0, finalized = 0;
    // The persistent RNG state (section 11): the basis (the seed) and the next draw nonce. It
    // advances as random ops are recorded, in program order (tokGlobal's), and no plan reads
    // it: a random value depends on its key alone, never on a generator's sequential head.
    uint64_t rng_seed = 0, rng_next_draw = 0;
    // Checkpointed bodies (checkpoint.cpp); open_checkpoint is the one being recorded (0: none).
    std::map<uint64_t, CheckpointRegion> checkpoints;
    uint64_t next_checkpoint = 1, open_checkpoint = 0;
    NodeId checkpoint_first_node = 0;
    uint64_t recomputed_ops = 0;
    // Compiled functions and their calls (compiled.h); staging is the function whose call is
    // being staged (0: none), staging_first_node the first node that call emitted and
    // staging_first_loc the first loc made while staging it (a loc at or after it was made by
    // the call: a base it externalized).
    std::map<uint64_t, CompiledFnRec> compiled_fns;
    std::map<uint64_t, CompiledCallRec> calls;
    uint64_t next_compiled_fn = 1, next_call = 1, staging = 0;
    NodeId staging_first_node = 0;
    LocId staging_first_loc = 0;
    std::string staging_binding;
    uint64_t cache_hits = 0, cache_misses = 0, kernels = 0, fused_groups = 0, fused_ops = 0;
    uint64_t compiled_planned_bytes = 0;
    // While a compiled call runs (run_call): its region arena, and the byte offset in it of each
    // temporary of the call (acquire_output places those there).
    StorageId running_arena = 0;
    std::map<ValueId, uint64_t> arena_places;
    bool poisoned = false;
    std::string poison_reason;
    bool grad_enabled = true;
    ExecLock lock;
    // Takes the lock for `what` (owner: this thread); false when anyone holds it.
    bool try_lock(const char* what);
    void unlock();
    // Why the lock is busy, for EngineBusyError: re-entrant or overlapping, and the holder.
    std::string busy_reason(const char* what) const;
    std::shared_ptr<FinalizeQueue> finalize = std::make_shared<FinalizeQueue>();
    // Tensors made in each open scope. Scopes, like NoGrad, belong to the one thread that drives
    // the engine; the lock keeps other threads out of its tables, not out of its scopes.
    std::vector<std::vector<TensorId>> tidy_scopes;

    // --- values and nodes (engine.cpp) ---
    ValueId new_value(const Shape& shape, bool token);
    void hold(ValueId v);
    void drop(ValueId v); // last reference gone: its storage goes back to the pool
    // A value just computed that nothing holds (a dead op of a compiled body): its storage
    // goes back at once, so no temporary outlives its call.
    void release_if_unread(ValueId v);
    void begin_emission();
    // A node whose outputs are made here; returns the node. Inputs are held until it runs.
    Node& emit(Op op, std::vector<ValueId> inputs, std::vector<Shape> data_outputs, bool token_out,
               const char* tag = nullptr);
    ValueId emit_data(Op op, std::vector<ValueId> inputs, const Shape& out);
    ValueId constant_value(const Shape& shape, std::vector<float> data);

    // --- tokens and locs (tokens.cpp) ---
    ValueId after_all(std::vector<ValueId> tokens);
    // The join rule (3.3): tokIn = after_all(tokGlobal, tokLoc[loc] or tokGlobal); the access's
    // fresh tokOut becomes both tokGlobal and tokLoc[loc].
    ValueId join_in(LocId loc);
    void advance(LocId loc, ValueId tok_out);
    std::map<ValueId, std::vector<ValueId>> join_parts; // an after_all token's parts
    std::map<std::vector<ValueId>, ValueId> join_cache; // parts -> that token
    // An effect on tokGlobal alone (backward job, publish-save, checks).
    Node& global_effect(Op op, std::vector<ValueId> data_inputs, const char* tag);
    LocId new_loc(LocRole role, BaseId base);
    ValueId loc_load(LocId loc, const Shape& shape);
    // Returns the store's tokOut. `what` says which mutation it carries (trace, errors).
    ValueId loc_store(LocId loc, ValueId value, bool materialize, const std::string& what);
    void base_commit(BaseId base, const std::string& what);

    // --- bases and handles (bases.cpp) ---
    BaseId new_base(const Shape& shape, ValueId value, std::string name);
    ValueId base_load(BaseId base); // 3.7, including ensure_initialized
    void base_store(BaseId base, ValueId value, const std::string& what);
    void externalize(BaseId base, LocRole role); // SSA -> pending_loc, scheduling only
    ValueId resolve(TensorId t);                 // the handle's current value (views gathered)
    ValueId resolve_with(const TensorRec& t, ValueId base_value);
    TensorRec& tensor(const Tensor& t); // DisposedTensorError, InvalidArgument
    // A handle record on a base; in the innermost tidy scope unless in_scope is false.
    TensorId new_tensor(BaseId base, std::optional<ViewMeta> view, bool in_scope = true);
    void open_scope();
    // Disposes what the innermost scope made, but the returned tensors and kept ones. With
    // trace_fn (a compiled call's end, lock held) they are disposed at once and marked as trace
    // tensors of that compiled function (1.6).
    void close_scope(std::span<const TensorId> returned, uint64_t trace_fn = 0);
    // Eager mode forces after each op, except while a compiled call stages (1.6: staging never
    // runs work; the call is forced whole once staged).
    bool eager_now() const { return options.eager && staging == 0; }

    // --- ops (engine.cpp, engine_views.cpp) ---
    Tensor pure_op(Op op, const std::vector<Tensor>& args, const Shape& out_shape,
                   const std::vector<int64_t>& dims, bool keepdim);
    Tensor view_op(const Tensor& a, const std::function<ViewMeta(const ViewMeta&)>& f,
                   const char* what);
    // update(current, shape) returns the target's new value; current() emits the read of the
    // old one.
    void in_place(const Tensor& t, const char* what,
                  const std::function<ValueId(const std::function<ValueId()>& current,
                                              const Shape& shape)>& update);
    void binary_in_place(const Tensor& t, const Tensor& x, Op op, const char* what);
    ValueId operand(const Tensor& x, const Shape& target, const char* what);
    const Shape& shape_of(TensorId t);
    void dispose_now(TensorId t);
    // Disposes now when the lock is ours to take, else queues it for the next safe point.
    void dispose_or_defer(TensorId t);
    void drain_finalize();
    // Valid, from this engine (not necessarily live): InvalidArgument otherwise.
    void check_handle(const Tensor& t) const;

    // --- forcing (force.cpp, execute.cpp) ---
    void force(std::vector<ValueId> roots, const std::string& reason);
    void run_plan(const std::vector<NodeId>& order, const std::string& reason);
    std::vector<NodeId> closure(const std::vector<ValueId>& roots) const;
    std::vector<NodeId> linearize(const std::vector<NodeId>& members) const;
    void plan_versions(const std::vector<NodeId>& order);
    void plan_node(Node& n, PlannedState& p);
    void check_loadable(const Node& n, const LocRec& l) const;
    void check_saved(const Node& n, uint64_t commit, const PlannedState& p) const;
    void execute(NodeId id);
    void execute_node(Node& n);
    void note_values(const Node& n, TraceEvent& e) const; // its inputs, outputs, producers
    StorageId run_pure(const Node& n);
    // A pool buffer, recorded (what, when given, says what it is for).
    StorageId acquire_buffer(uint64_t elements, std::string_view what);
    // A buffer for a kernel's output: a part of the running call's arena for its temporaries,
    // else a pool buffer.
    StorageId acquire_output(ValueId out);
    // Where a part of a region arena lies ("in region arena s7 at +512 B"); "" for a buffer.
    std::string arena_part_at(StorageId id) const;
    void run_effect(Node& n, TraceEvent& e);
    void store_into_loc(const Node& n, TraceEvent& e);
    void summarize_memory(PlanRecord& plan, const std::vector<StorageId>& live_before);
    std::vector<float> host_data(ValueId v);
    void retain_storage(StorageId id);
    void release_storage(StorageId id, const std::string& why); // last ref: pendingRelease
    int64_t current_plan = kNone;  // plan being executed, for pool events
    std::string current_key;       // event whose pool traffic is being recorded; "": cleanup
    uint64_t cleanup_releases = 0; // releases outside any event (disposal, finalizers)

    // --- autograd (autograd.cpp) ---
    void record_grad(TensorId out, Op op, const std::vector<TensorId>& inputs,
                     const std::vector<ValueId>& input_values, ValueId out_value,
                     const ViewMeta* view, const std::vector<int64_t>& dims, bool keepdim);
    SavedSlotId save_for_backward(TensorId t, ValueId v, Op op);
    ValueId use_saved(SavedSlotId id);
    ValueId vjp(const AutogradNode& node, size_t input, ValueId g);
    ValueId op1(Op op, ValueId a);
    ValueId op2(Op op, ValueId a, ValueId b);
    ValueId scalar(float x);
    ValueId sum_to(ValueId v, const Shape& shape);
    ValueId view_value(ValueId v, const ViewMeta& meta);
    ValueId transposed(ValueId v);
    void run_backward(TensorId loss);
    // BackwardGraphFreedError when backward would read a saved value an earlier backward freed.
    void check_graph_alive(TensorId loss) const;
    void free_graph_node(AutogradNode& node);
    void accumulate_grad(TensorId t, ValueId g);
    void zero_grad(TensorId param, bool set_to_null);

    // --- checkpointing (checkpoint.cpp) ---
    void begin_checkpoint();
    // Called by emit for each pure node while a body is recorded.
    void note_checkpoint_node(const Node& n);
    void end_checkpoint();
    // Replays region's body (once, at the first use of one of its saved values): every pure
    // node again, random ones with their recorded keys; CheckpointImpureRegionError when the
    // body wrote persistent state, which a replay would write again (10.5).
    void recompute(uint64_t region);
    // InvalidArgument naming `what` while a checkpointed body is being recorded.
    void refuse_in_checkpoint(const char* what) const;
    // Whether running n again would write persistent state (10.5): a semantic store to a
    // persistent role, a base commit, a grad set to null.
    bool writes_persistent_state(const Node& n) const;

    // --- compiled regions (compiled_call.cpp, functionalize.cpp, fusion.cpp) ---
    // binding: the call's argument binding (argument_binding), part of its variant key.
    void begin_staging(uint64_t fn, std::string binding);
    // The staged nodes become one CompiledCall node (compiled.h); tensors made while staging
    // and not returned are disposed, and later use of them is InvalidTraceTensorEscapeError.
    void end_staging(const std::vector<TensorId>& returned);
    // Inside a checkpointed body, a staged call that writes persistent state is rejected
    // (10.6's readonly-or-reject): its nodes stay plain lazy nodes (abandon_staging) and the
    // call is CheckpointCompiledNotPureError (CheckpointCompiledAutoExternalizeError when the
    // write externalizes a value).
    void refuse_writes_in_checkpoint();
    // After a failure inside the function: the nodes staged so far stay plain lazy nodes, as if
    // the function had run uncompiled up to the error.
    void abandon_staging();
    // While a compiled call stages: HostReadInCompileError or AsyncInCompileError naming
    // `what`, or InvalidArgument when no kind is given.
    void refuse_in_staging(const char* what, std::optional<LazyError> kind = std::nullopt) const;
    // Loads after the body's own store read the stored value; a loc's last store in the body
    // moves to the body's end, the only one that writes it (functionalize.cpp). Returns what
    // it did, in words ("" for nothing).
    std::string functionalize(std::vector<Node>& body);
    std::shared_ptr<const CompiledVariant> find_variant(CompiledCallRec& call,
                                                        const BodyFacts& facts);
    void run_call(Node& call, TraceEvent& e);
    void run_fused(CompiledCallRec& call, const FusedGroup& g, const EventKey& key);
    // The call's body nodes in the order they run, but fused members (pure: nothing in them
    // is planned), for plan_versions.
    std::vector<Node*> call_schedule(CompiledCallRec& call);

    // --- mark_step (mark_step.cpp) ---
    void mark_step();

    uint64_t record(TraceEvent event);
    void poison(const std::string& why); // failure policy (6.7): no more execution
};

} // namespace tmmu::lazy
