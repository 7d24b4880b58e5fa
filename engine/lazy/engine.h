#pragma once
// The token/effect engine (seed 004): lazy tensors whose every effect is ordered by SSA tokens.
//
// Ops return at once and only record a lazy node; work runs when a value is read on the host
// (read, item: only the effects that value depends on) or at mark_step (everything threaded on
// tokGlobal). A tensor handle names a BaseId (its alias class) and, for a view, an offset,
// shape and strides into that base; a base is SSA-backed (its value is a lazy recipe) until
// something mutates it, when it becomes loc-backed and every access is an ordered loc_load /
// loc_store. Every semantic in-place mutation commits exactly once through base_commit; commit
// versions are assigned in PlanLinearOrder, a deterministic topological order of the forced
// events with ties broken by EventKey, so the same program gives the same trace every run.
//
// Single queue, not re-entrant: a public call made while another is running (from another
// thread, or from an observer callback) throws EngineBusyError; after a failed force the engine
// is poisoned and only cleanup (dispose, handle destruction) still works.
#include "lazy/event_trace.h"
#include "lazy/view_meta.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::lazy {

struct EngineState;
class Engine;
enum class Op : uint8_t;

using TensorId = uint64_t;

// A handle to a tensor, shared by copies (like a JavaScript reference). When the last copy goes
// away without dispose(), its id is queued for cleanup (the finalizer safety net of section
// 1.4) and the engine drains that queue only at safe points.
class Tensor {
  public:
    Tensor() = default;
    bool valid() const { return ref_ != nullptr; }
    TensorId id() const;

  private:
    friend class Engine;
    friend struct EngineState;
    struct Ref;
    explicit Tensor(std::shared_ptr<Ref> ref) : ref_(std::move(ref)) {}
    std::shared_ptr<Ref> ref_;
};

// A function compiled by Engine::compile; call it with Engine::call.
class CompiledFn {
  public:
    CompiledFn() = default;
    bool valid() const { return id_ != 0; }

  private:
    friend class Engine;
    explicit CompiledFn(uint64_t id) : id_(id) {}
    uint64_t id_ = 0;
};
using CompiledBody = std::function<std::vector<Tensor>(std::span<const Tensor> args)>;

enum class LocRole : uint8_t {
    TensorState,
    GradState,
    RngState,
    EngineState,
    SavedState,
    InternalScratch,
};
std::string_view loc_role_name(LocRole r);

// What a handle shows without reading device data (section 1.3's debug toString).
struct TensorInfo {
    TensorId id = 0;
    std::string name;
    Shape shape;
    uint64_t base = 0;
    bool is_view = false;
    bool requires_grad = false;
    bool is_leaf = false;
    bool disposed = false;
    std::string binding; // "ssa", "pending_loc(L3)", "loc(L3)"
    std::string describe() const;
};

// Counters a run reports (tmmu lazy run --json).
struct EngineStats {
    uint64_t events = 0;
    uint64_t plans = 0;
    uint64_t steps = 0;              // completed mark_step calls
    uint64_t pool_peak_bytes = 0;    // most bytes the pool ever held
    uint64_t planned_peak_bytes = 0; // largest arena our planner gives any forced plan
    uint64_t buffers_allocated = 0, buffers_reused = 0;
    uint64_t finalized = 0;                       // handles cleaned up from the finalize queue
    uint64_t checkpoints = 0, recomputed_ops = 0; // checkpointed bodies, ops their replays made
    uint64_t kernels = 0; // kernels run: pure ops, a fused group counting once
    uint64_t compiled_calls = 0, cache_hits = 0, cache_misses = 0;
    uint64_t fused_groups = 0, fused_ops = 0; // fused kernels run, ops they ran
    uint64_t compiled_planned_bytes = 0;      // largest region arena of any compiled variant
};

// What checkpoint() does with its body's saved-for-backward values.
enum class CheckpointPolicy : uint8_t {
    Recompute, // not kept: backward replays the body to make them again (section 10)
    Keep,      // kept, as if the body were not checkpointed (to compare the two)
};

struct EngineOptions {
    // Force after every op: the eager reference lazy results are compared with (same kernels,
    // so results are bit-identical when laziness is right).
    bool eager = false;
    CheckpointPolicy checkpoint = CheckpointPolicy::Recompute;
    // false: compiled functions run their body plainly (the reference compiled calls are
    // compared with; what is disposed at the call's end is the same).
    bool compile = true;
    // false: compiled calls run one kernel per op (to tell what fusion saves from what staging
    // does).
    bool fuse = true;
};

class Engine {
  public:
    explicit Engine(EngineOptions options = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Where the caller is (a program statement); recorded on every event emitted from now on
    // and named by errors.
    void set_site(std::string site);
    // Called for each trace event as it is recorded (the studio's progress, tests). Calling
    // back into the engine from here is re-entrant: EngineBusyError.
    void set_observer(std::function<void(const TraceEvent&)> observer);

    // Creation. A parameter is a leaf that requires grad and is external state from the start:
    // bound to a pending loc whose initializer runs before its first read (initTok, 3.7).
    Tensor constant(const Shape& shape, std::vector<float> values, std::string name = {});
    Tensor full(const Shape& shape, float value, std::string name = {});
    Tensor parameter(const Shape& shape, std::vector<float> values, std::string name);
    void set_name(const Tensor& t, std::string name);

    // Pure ops (lazy). Binary ops broadcast numpy-style.
    Tensor add(const Tensor& a, const Tensor& b);
    Tensor sub(const Tensor& a, const Tensor& b);
    Tensor mul(const Tensor& a, const Tensor& b);
    Tensor div(const Tensor& a, const Tensor& b);
    Tensor maximum(const Tensor& a, const Tensor& b);
    Tensor add(const Tensor& a, float s);
    Tensor mul(const Tensor& a, float s);
    Tensor neg(const Tensor& a);
    Tensor exp(const Tensor& a);
    Tensor log(const Tensor& a);
    Tensor relu(const Tensor& a);
    Tensor sigmoid(const Tensor& a);
    Tensor tanh(const Tensor& a);
    Tensor sqrt(const Tensor& a);
    // Any op of seed 004 15.1's elementwise list by name, as programs spell it: the ones above,
    // and gelu, silu, abs, rsqrt, sin, cos, floor, ceil, round; minimum, pow, and the
    // comparisons eq ne lt le gt ge (1 or 0). Throws InvalidArgument for another name or the
    // wrong count of inputs.
    Tensor unary(std::string_view op, const Tensor& a);
    Tensor binary(std::string_view op, const Tensor& a, const Tensor& b);
    Tensor matmul(const Tensor& a, const Tensor& b); // [m,k] x [k,n]
    Tensor sum(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
    Tensor mean(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
    Tensor copy(const Tensor& a); // a fresh base holding a's current value

    // Random ops (section 11, keyed_rng.h). manual_seed sets the persistent RNG basis (the seed;
    // 0 until set) and restarts its draw nonces; each random op reserves the next draw nonce
    // when it is recorded, so a program draws the same numbers whatever order its values are
    // forced in, eager or lazy. Random ops are never merged: two draws of one shape differ.
    void manual_seed(uint64_t seed);
    Tensor rand(const Shape& shape, std::string name = {}); // uniform in [0, 1)
    // Inverted dropout: each element of a kept where its draw u > p, scaled by 1 / (1 - p), else
    // 0 (p in [0, 1), else InvalidArgument). The mask is a value of its own, so backward scales
    // by the forward's draw and never draws again.
    Tensor dropout(const Tensor& a, float p);

    // Views share the base (section 4).
    Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
    Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
    Tensor reshape(const Tensor& a, const Shape& shape); // a view when a is contiguous

    // In-place ops: one base_store + one base_commit each; through a view they lower to a
    // strided scatter into a copy of the base (4.4).
    void add_(const Tensor& t, const Tensor& x);
    void sub_(const Tensor& t, const Tensor& x);
    void mul_(const Tensor& t, const Tensor& x);
    void mul_(const Tensor& t, float s);
    void copy_(const Tensor& t, const Tensor& src);
    void fill_(const Tensor& t, float value);

    // Host readback: forces the value's dependency closure only (1.2's minimal forcing rule).
    std::vector<float> read(const Tensor& t);
    float item(const Tensor& t); // one element
    // Forces everything on tokGlobal, then compaction, binding finalization, retention, cleanup
    // and pool flush, token reset, epoch + 1 (section 6).
    void mark_step();

    // Lifetime (1.4): tensors made inside tidy(fn) are disposed at its end unless returned or
    // kept (fn returns Tensor() when nothing escapes). dispose is cleanup-only: it never runs
    // work and works on a busy or poisoned engine.
    Tensor tidy(const std::function<Tensor()>& fn);
    // The same scope as an object: tensors made while it lives are disposed when it ends, unless
    // kept (keep) before that.
    class TidyScope {
      public:
        explicit TidyScope(Engine& e);
        ~TidyScope();
        TidyScope(const TidyScope&) = delete;
        TidyScope& operator=(const TidyScope&) = delete;

      private:
        Engine& e_;
    };
    void keep(const Tensor& t);
    void dispose(const Tensor& t);
    void drain_finalize_queue(); // drainFinalizeQueueCleanupOnly

    // Non-reentrant checkpointing (section 10, whole-body replay): the values that ops made
    // inside body save for backward are not kept; backward replays the body's recorded ops
    // (random ones with their own keys: no draw is reserved again) from the values the body
    // read, which are held instead, so gradients are bit-identical to an uncheckpointed run
    // and the persistent RNG state ends where it would. Returns body's result. A body that
    // mutates persistent state fails at the replay (CheckpointImpureRegionError); a checkpoint
    // inside a body is CheckpointReentrancyError; mark_step and backward inside one are
    // InvalidArgument. EngineOptions::checkpoint = Keep runs the body plainly.
    Tensor checkpoint(const std::function<Tensor()>& body);

    // Compiled regions (sections 1.6, 8, 15). call() stages fn on this engine: its ops record
    // lazy nodes as usual but nothing runs (a host read is HostReadInCompileError, mark_step
    // AsyncInCompileError), and when fn returns they become one CompiledCall node, run whole
    // when forced: its effects expand in program order at plan time (commit versions as
    // without compile), its elementwise chains run fused. The body's normalized form keys the
    // function's variant cache (EngineStats: cache hits and misses). Tensors fn made and did
    // not return are disposed when the call returns; using one later is
    // InvalidTraceTensorEscapeError. A call inside a call stages into the outer one. Inside a
    // checkpointed body a call that only reads persistent state runs (backward's replay of the
    // body replays its ops), one that writes is CheckpointCompiledNotPureError, or
    // CheckpointCompiledAutoExternalizeError when the write would give a value its first loc
    // (10.6's readonly-or-reject). EngineOptions::compile = false runs fn plainly. An argument may
    // be absent (a default Tensor: optional state not made yet, say): fn gets it as it is, and the
    // variant key binds that position to a sentinel of its own (8.8), so absent state never
    // looks like an alias of another argument; the arguments' alias and view pattern (which
    // share a base, through which views) is part of the key too.
    CompiledFn compile(CompiledBody fn, std::string name = {});
    std::vector<Tensor> call(const CompiledFn& f, std::span<const Tensor> args = {});

    // Autograd (section 9). backward is lazy: it records the job on tokGlobal.
    void backward(const Tensor& loss);
    Tensor grad(const Tensor& t); // invalid handle when t has no grad (never computed, or null)
    void retain_grad(const Tensor& t);
    void zero_grad(std::span<const Tensor> params, bool set_to_null);
    // Ops made while a NoGrad lives record no autograd graph (optimizer updates).
    class NoGrad {
      public:
        explicit NoGrad(Engine& e);
        ~NoGrad();
        NoGrad(const NoGrad&) = delete;
        NoGrad& operator=(const NoGrad&) = delete;

      private:
        Engine& e_;
        bool was_;
    };

    TensorInfo info(const Tensor& t) const;
    const Trace& trace() const;
    EngineStats stats() const;
    bool poisoned() const;

  private:
    friend struct EngineState;
    Tensor wrap(TensorId id);
    Tensor unary_op(Op op, const Tensor& a);
    Tensor binary_op(Op op, const Tensor& a, const Tensor& b);
    std::unique_ptr<EngineState> s_;
};

// SGD and AdamW as in-place updates under NoGrad (decoupled weight decay for AdamW).
class Sgd {
  public:
    Sgd(std::vector<Tensor> params, float lr) : params_(std::move(params)), lr_(lr) {}
    void step(Engine& e);
    const std::vector<Tensor>& params() const { return params_; }

  private:
    std::vector<Tensor> params_;
    float lr_;
};

struct AdamWOptions {
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 1e-2f;
};

class AdamW {
  public:
    AdamW(std::vector<Tensor> params, AdamWOptions options)
        : params_(std::move(params)), o_(options) {}
    void step(Engine& e);
    const std::vector<Tensor>& params() const { return params_; }

  private:
    std::vector<Tensor> params_;
    AdamWOptions o_;
    std::vector<Tensor> m_, v_; // moments, made at the first step
    int64_t t_ = 0;
};

} // namespace tmmu::lazy
