// Compiled regions (seed 004, sections 1.6, 8 and 15; issue 18 items 1, 2, 5 and 8): a call
// stages lazily into one CompiledCall node whose effects keep their program order, variants are
// cached under the body's normalized key, elementwise chains fuse (multi-output too) with the
// unfused bits, random draws never fuse, nothing is rewritten outside compiled regions, and
// what staging refuses is named.
#include "core/failure.h"
#include "lazy/engine.h"
#include "lazy/lazy_error.h"
#include "lazy/program.h"
#include "lazy/trace_state.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <algorithm>
#include <random>
#include <set>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

std::vector<float> values(uint64_t seed, int64_t n, float scale) {
    return test::seeded_floats(seed, n, scale);
}

std::vector<const TraceEvent*> events_named(const Trace& t, std::string_view op) {
    std::vector<const TraceEvent*> out;
    for (const TraceEvent& e : t.events)
        if (e.op == op) out.push_back(&e);
    return out;
}

LazyProgram bundled(const char* name) {
    return load_lazy_program(std::string(TMMU_SOURCE_DIR "/resources/programs/") + name + ".json");
}

// What a run committed: each base's commit version and each loc's, at the end of the trace.
TraceSnapshot committed(const ProgramRun& run) {
    return snapshot_at(run.trace, run.trace.events.size());
}

// f(x, y) = relu(x * y + 1) * 2, compiled or not; its read and the engine's trace.
struct ChainRun {
    std::vector<float> out;
    Trace trace;
    EngineStats stats;
};
ChainRun chain(const Shape& shape, EngineOptions options) {
    Engine e(options);
    const int64_t n = element_count(shape);
    const lazy::Tensor x = e.constant(shape, values(1, n, 2.0f), "x");
    const lazy::Tensor y = e.constant(shape, values(2, n, 2.0f), "y");
    const CompiledFn f = e.compile(
        [&](std::span<const lazy::Tensor> a) {
            return std::vector{e.mul(e.relu(e.add(e.mul(a[0], a[1]), 1.0f)), 2.0f)};
        },
        "chain");
    const std::vector<lazy::Tensor> args{x, y};
    const lazy::Tensor out = e.call(f, args)[0];
    ChainRun r;
    r.out = e.read(out);
    r.trace = e.trace();
    r.stats = e.stats();
    return r;
}

std::optional<Failure> failure_of(const std::function<void()>& fn) {
    return test::capture_failure(fn);
}

bool names(const std::optional<Failure>& f, std::string_view text) {
    return f && std::string(f->what()).find(text) != std::string::npos;
}

// A random program for the property test: 1-4 compiled blocks of 1-6 ops on an [8, 16] value,
// some in-place updates of a state tensor, a dropout now and then; the loss's backward and an
// SGD step in the last block. Op codes: 0 tanh, 1 sigmoid, 2 relu, 3 matmul by a weight, 4 add a
// weight's rows, 5 multiply by a scalar, 6 dropout, 7 state += mean of the value, 8 sub, 9 exp.
std::vector<std::vector<int>> random_blocks(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<int>> blocks(1 + rng() % 4);
    for (auto& ops : blocks) {
        ops.resize(1 + rng() % 6);
        for (int& op : ops)
            op = int(rng() % 10);
    }
    blocks[0][0] = 3;
    return blocks;
}

struct PropertyRun {
    std::vector<std::vector<float>> reads;
    TraceSnapshot committed;
    EngineStats stats;
};

PropertyRun run_blocks(const std::vector<std::vector<int>>& blocks, uint64_t seed,
                       EngineOptions options) {
    constexpr int64_t rows = 8, width = 16;
    Engine e(options);
    e.manual_seed(seed);
    const lazy::Tensor x = e.constant({rows, width}, values(seed, rows * width, 1.0f), "x");
    const lazy::Tensor state = e.full({1, width}, 0.0f, "state");
    std::vector<lazy::Tensor> w;
    for (uint64_t k = 0; k < 2; ++k)
        w.push_back(e.parameter({width, width}, values(seed * 3 + k, width * width, 0.3f), "w"));
    Sgd sgd(w, 0.05f);
    lazy::Tensor h = x;
    std::vector<CompiledFn> fns;
    for (size_t b = 0; b < blocks.size(); ++b)
        fns.push_back(e.compile(
            [&, b](std::span<const lazy::Tensor> in) {
                lazy::Tensor v = in[0];
                for (size_t i = 0; i < blocks[b].size(); ++i) {
                    const lazy::Tensor& wi = w[(b + i) % w.size()];
                    switch (blocks[b][i]) {
                    case 0:
                        v = e.tanh(v);
                        break;
                    case 1:
                        v = e.sigmoid(v);
                        break;
                    case 2:
                        v = e.relu(v);
                        break;
                    case 3:
                        v = e.matmul(v, wi);
                        break;
                    case 4:
                        v = e.add(v, e.slice(wi, 0, 0, 1));
                        break;
                    case 5:
                        v = e.mul(v, 0.5f);
                        break;
                    case 6:
                        v = e.dropout(v, 0.25f);
                        break;
                    case 7:
                        e.add_(state, e.mean(v, {0}, true));
                        break;
                    case 8:
                        v = e.sub(v, e.mul(v, v));
                        break;
                    default:
                        v = e.exp(e.mul(v, 0.1f));
                        break;
                    }
                }
                if (b + 1 < blocks.size()) return std::vector{v};
                const lazy::Tensor loss = e.mean(e.mul(v, v));
                e.backward(loss);
                sgd.step(e);
                return std::vector{loss};
            },
            "block" + std::to_string(b)));
    PropertyRun r;
    for (int step = 0; step < 2; ++step) {
        h = x;
        for (const CompiledFn& f : fns) {
            const std::vector<lazy::Tensor> args{h};
            h = e.call(f, args)[0];
        }
        r.reads.push_back(e.read(h));
        e.zero_grad(w, true);
        e.mark_step();
    }
    for (const lazy::Tensor& t : w)
        r.reads.push_back(e.read(t));
    r.reads.push_back(e.read(state));
    r.reads.push_back(e.read(e.rand({4})));
    r.committed = snapshot_at(e.trace(), e.trace().events.size());
    r.stats = e.stats();
    return r;
}

} // namespace

class TestLazyCompile : public QObject {
    Q_OBJECT
  private slots:
    // Item 5 and 6: the bundled training step compiled (forward, backward, SGD and AdamW, one
    // region) reads the same bits as without compile, lazy and eager, commits the same base
    // versions, runs fewer kernels, and hits the cache once the first step has initialized the
    // parameters and AdamW's moments.
    void compiledTrainingStepMatchesUncompiled() {
        const LazyProgram p = bundled("compiled-mlp");
        const ProgramRun plain = run_lazy_program(p, {.compile = false});
        const ProgramRun compiled = run_lazy_program(p, {.compile = true});
        const ProgramRun eager = run_lazy_program(p, {.eager = true, .compile = true});
        QCOMPARE(to_hex(compiled.result_hash), to_hex(plain.result_hash));
        QCOMPARE(to_hex(eager.result_hash), to_hex(plain.result_hash));
        QCOMPARE(committed(compiled).base_commits, committed(plain).base_commits);
        // Functionalized (8.10, 8.11): the same semantic stores, each loc written once per call
        // (AdamW's mul_ then sub_ of a parameter, say, is one writeback), so fewer commits.
        const TraceSnapshot a = committed(plain), b = committed(compiled);
        QCOMPARE(b.locs.size(), a.locs.size());
        uint64_t plain_writes = 0, compiled_writes = 0;
        for (const auto& [loc, l] : a.locs) {
            const LocState& c = b.locs.at(loc);
            QCOMPARE(c.logical_version, l.logical_version);
            QVERIFY(c.version <= l.version);
            plain_writes += l.version;
            compiled_writes += c.version;
        }
        QVERIFY2(compiled_writes < plain_writes,
                 qPrintable(QString("%1 vs %2").arg(compiled_writes).arg(plain_writes)));
        QCOMPARE(compiled.stats.compiled_calls, uint64_t(3));
        QCOMPARE(compiled.stats.cache_misses, uint64_t(2));
        QCOMPARE(compiled.stats.cache_hits, uint64_t(1));
        QVERIFY(compiled.stats.fused_groups > 0);
        QVERIFY2(
            compiled.stats.kernels * 2 < plain.stats.kernels,
            qPrintable(QString("%1 vs %2").arg(compiled.stats.kernels).arg(plain.stats.kernels)));
        QCOMPARE(plain.stats.compiled_calls, uint64_t(0));
        QCOMPARE(plain.stats.fused_groups, uint64_t(0));
    }

    // Section 7: outside compiled regions nothing is rewritten. The bundled programs without
    // compile statements run one kernel per op, whatever EngineOptions::compile says, and their
    // traces are the same either way.
    void nothingIsRewrittenOutsideCompiledRegions() {
        for (const char* name : {"mlp-training", "transformer-block", "mlp-dropout"}) {
            const LazyProgram p = bundled(name);
            const ProgramRun on = run_lazy_program(p, {.compile = true});
            const ProgramRun off = run_lazy_program(p, {.compile = false});
            QCOMPARE(to_hex(on.trace_hash), to_hex(off.trace_hash));
            QVERIFY(events_named(on.trace, "fused").empty());
            QVERIFY(events_named(on.trace, "compiled_call").empty());
            const auto kernels =
                std::count_if(on.trace.events.begin(), on.trace.events.end(),
                              [](const TraceEvent& e) { return e.kind == EventKind::Op; });
            QCOMPARE(on.stats.kernels, uint64_t(kernels));
        }
    }

    // 1.6: a call runs nothing while it stages or returns; its results force it whole.
    void callsAreLazy() {
        Engine e;
        const lazy::Tensor x = e.constant({4}, {1, 2, 3, 4}, "x");
        const CompiledFn f = e.compile(
            [&](std::span<const lazy::Tensor> a) { return std::vector{e.exp(e.neg(a[0]))}; });
        const size_t before = e.trace().events.size();
        const std::vector<lazy::Tensor> args{x};
        const lazy::Tensor y = e.call(f, args)[0];
        QCOMPARE(e.trace().events.size(), before);
        const std::vector<float> got = e.read(y);
        QCOMPARE(events_named(e.trace(), "compiled_call").size(), size_t(1));
        QCOMPARE(got[2], std::exp(-3.0f));
    }

    // 15.1: relu(x * y + 1) * 2 is one kernel (its scalars as literals) with the unfused bits;
    // 15.3: the vector width follows the innermost dimension.
    void elementwiseChainsFuseWithTheSameBits() {
        for (const auto& [shape, width] : std::vector<std::pair<Shape, std::string>>{
                 {{3, 8}, "vec4"}, {{4, 6}, "vec2"}, {{5, 3}, "scalar"}}) {
            const ChainRun fused = chain(shape, {});
            const ChainRun plain = chain(shape, {.compile = false});
            QCOMPARE(fused.out, plain.out);
            const auto groups = events_named(fused.trace, "fused");
            QCOMPARE(groups.size(), size_t(1));
            QVERIFY2(groups[0]->detail.find("6 ops") != std::string::npos,
                     groups[0]->detail.c_str());
            QVERIFY2(groups[0]->detail.find(width) != std::string::npos, groups[0]->detail.c_str());
            QCOMPARE(groups[0]->values_out.size(), size_t(1));
            QCOMPARE(fused.stats.kernels, uint64_t(3)); // x, y and the fused kernel
            QCOMPARE(plain.stats.kernels, uint64_t(8)); // x, y, four ops and two scalars
        }
    }

    // 15.2: c = a + b read by relu(c) and c * a, both returned: one kernel, two outputs, c
    // computed once and never written.
    void sharedSubexpressionsFuseIntoOneMultiOutputKernel() {
        for (const bool compile : {true, false}) {
            Engine e({.compile = compile});
            const lazy::Tensor a = e.constant({2, 4}, values(3, 8, 1.0f), "a");
            const lazy::Tensor b = e.constant({2, 4}, values(4, 8, 1.0f), "b");
            const CompiledFn f = e.compile([&](std::span<const lazy::Tensor>) {
                const lazy::Tensor c = e.add(a, b);
                return std::vector{e.relu(c), e.mul(c, a)};
            });
            const std::vector<lazy::Tensor> out = e.call(f);
            const std::vector<float> r0 = e.read(out[0]), r1 = e.read(out[1]);
            const std::vector<float> av = values(3, 8, 1.0f), bv = values(4, 8, 1.0f);
            for (size_t i = 0; i < 8; ++i) {
                const float c = av[i] + bv[i];
                QCOMPARE(r0[i], c > 0 ? c : 0.0f);
                QCOMPARE(r1[i], c * av[i]);
            }
            const auto groups = events_named(e.trace(), "fused");
            QCOMPARE(groups.size(), size_t(compile ? 1 : 0));
            if (compile) QCOMPARE(groups[0]->values_out.size(), size_t(2));
        }
    }

    // 15.4: a draw is never fused; the values around it are, and read the uncompiled bits.
    void randomDrawsAreFusionBarriers() {
        std::vector<std::vector<float>> reads;
        for (const bool compile : {true, false}) {
            Engine e({.compile = compile});
            e.manual_seed(5);
            const lazy::Tensor x = e.constant({4, 4}, values(6, 16, 1.0f), "x");
            const CompiledFn f = e.compile([&](std::span<const lazy::Tensor>) {
                return std::vector{e.tanh(e.dropout(e.exp(x), 0.5f))};
            });
            reads.push_back(e.read(e.call(f)[0]));
            const auto draws = events_named(e.trace(), "rand_uniform");
            QCOMPARE(draws.size(), size_t(1));
            for (const TraceEvent* g : events_named(e.trace(), "fused"))
                QVERIFY2(g->detail.find("rand") == std::string::npos, g->detail.c_str());
        }
        QCOMPARE(reads[0], reads[1]);
    }

    // 8.2: same structure and shapes hit; another shape misses; a one-element constant is a
    // dynamic scalar (a new value hits); a larger constant is specialized by its bit pattern,
    // so -0.0 and 0.0 are different variants (8.2.1).
    void variantsAreKeyedByNormalizedStructure() {
        Engine e;
        float scale = 2.0f, fill = 0.0f;
        const CompiledFn f = e.compile([&](std::span<const lazy::Tensor> a) {
            return std::vector{e.add(e.mul(a[0], scale), e.full({2}, fill))};
        });
        const auto call = [&](const Shape& shape) {
            const std::vector<lazy::Tensor> args{e.full(shape, 1.0f)};
            return e.read(e.call(f, args)[0]);
        };
        call({2});
        call({2});
        QCOMPARE(e.stats().cache_hits, uint64_t(1));
        call({3, 2});
        QCOMPARE(e.stats().cache_misses, uint64_t(2));
        scale = 3.0f;
        QCOMPARE(call({2}), (std::vector<float>{3, 3}));
        QCOMPARE(e.stats().cache_hits, uint64_t(2));
        fill = -0.0f;
        call({2});
        QCOMPARE(e.stats().cache_misses, uint64_t(3));
        fill = 0.0f;
        call({2});
        QCOMPARE(e.stats().cache_hits, uint64_t(3));
    }

    // 8.8 and 8.5: an absent argument (an empty handle) reaches the function as it is and
    // binds its position to a sentinel of its own, so a key never takes absent state for an
    // alias of another argument: f(x, absent) hits its own variant, and f(x, x), f(x, y) and
    // f(x, a view of x) are variants of their own even though f never touches its second
    // argument (the binding's alias and view pattern is part of the key).
    void absentStateIsASentinelNotAnAlias() {
        Engine e;
        const lazy::Tensor x = e.constant({4}, {1, 2, 3, 4}, "x");
        const lazy::Tensor y = e.constant({4}, {5, 6, 7, 8}, "y");
        std::vector<bool> absent_seen;
        const CompiledFn f = e.compile(
            [&](std::span<const lazy::Tensor> a) {
                absent_seen.push_back(!a[1].valid());
                return std::vector{e.neg(a[0])};
            },
            "f");
        const auto call = [&](const lazy::Tensor& second) {
            const std::vector<lazy::Tensor> args{x, second};
            return e.read(e.call(f, args)[0]);
        };
        QCOMPARE(call(lazy::Tensor()), (std::vector<float>{-1, -2, -3, -4}));
        call(lazy::Tensor());
        QCOMPARE(absent_seen, (std::vector<bool>{true, true}));
        QCOMPARE(e.stats().cache_misses, uint64_t(1));
        QCOMPARE(e.stats().cache_hits, uint64_t(1));
        call(x);
        call(y);
        call(e.slice(x, 0, 0, 2));
        QCOMPARE(e.stats().cache_misses, uint64_t(4));
        call(x);
        call(lazy::Tensor());
        QCOMPARE(e.stats().cache_hits, uint64_t(3));
        QCOMPARE(e.stats().cache_misses, uint64_t(4));
        // Plainly (compile off) an absent argument reaches the function the same way.
        Engine plain({.compile = false});
        bool plain_absent = false;
        const CompiledFn g = plain.compile([&](std::span<const lazy::Tensor> a) {
            plain_absent = !a[0].valid();
            return std::vector<lazy::Tensor>{};
        });
        const std::vector<lazy::Tensor> none{lazy::Tensor()};
        plain.call(g, none);
        QVERIFY(plain_absent);
    }

    // 8.5: a function keeps at most 16 variants, least recently used dropped first.
    void variantCacheIsBounded() {
        Engine e;
        const CompiledFn f =
            e.compile([&](std::span<const lazy::Tensor> a) { return std::vector{e.neg(a[0])}; });
        const auto call = [&](int64_t n) {
            const std::vector<lazy::Tensor> args{e.full({n}, 1.0f)};
            (void)e.read(e.call(f, args)[0]);
        };
        for (int64_t n = 1; n <= 17; ++n)
            call(n);
        QCOMPARE(e.stats().cache_misses, uint64_t(17));
        call(17);
        QCOMPARE(e.stats().cache_hits, uint64_t(1));
        call(1); // evicted by the seventeenth
        QCOMPARE(e.stats().cache_misses, uint64_t(18));
    }

    // 8.6.0: effects inside a call keep their program order, so a saved value modified inside
    // a compiled call is still caught by backward (SavedTensorModifiedError naming the op), and
    // in-place updates commit the versions they commit without compile.
    void effectsInsideCallsKeepTheirCommitOrder() {
        Engine e;
        const lazy::Tensor w = e.parameter({2, 2}, {1, 2, 3, 4}, "w");
        const lazy::Tensor s = e.full({2, 2}, 1.0f, "s");
        const lazy::Tensor loss = e.sum(e.mul(w, s));
        const CompiledFn bump = e.compile([&](std::span<const lazy::Tensor>) {
            e.mul_(s, 2.0f);
            return std::vector<lazy::Tensor>{};
        });
        (void)e.call(bump);
        e.backward(loss);
        const auto f = failure_of([&] { e.mark_step(); });
        QVERIFY2(names(f, "SavedTensorModifiedError") && names(f, "mul_"), f ? f->what() : "");
    }

    // 8.10, 8.11: inside a call, mutation is functionalized: a load after the body's own store
    // reads the stored value and a loc is written once, by the body's last store to it, while
    // each in-place op keeps its base_commit. A load whose value something outside holds (a
    // saved slot here) keeps that loc's stores as they are.
    void mutationInsideACallIsFunctionalized() {
        for (const bool saved : {false, true}) {
            std::vector<std::vector<float>> reads;
            std::vector<Trace> traces;
            for (const bool compile : {true, false}) {
                Engine e({.compile = compile});
                const lazy::Tensor s = e.full({2, 2}, 1.0f, "s");
                const lazy::Tensor w = e.parameter({2, 2}, {1, 2, 3, 4}, "w");
                const CompiledFn f = e.compile([&](std::span<const lazy::Tensor>) {
                    e.add_(s, e.full({2, 2}, 1.0f));
                    e.mul_(e.slice(s, 0, 1, 2), 3.0f); // through a view: a scatter into s
                    const lazy::Tensor out = saved ? e.mul(s, w) : e.neg(s);
                    if (!saved) e.add_(s, e.full({2, 2}, 1.0f)); // (a saved s must stay)
                    return std::vector{e.sum(out)};
                });
                const lazy::Tensor loss = e.call(f)[0];
                if (saved) e.backward(loss);
                e.mark_step();
                reads.push_back(e.read(s));
                reads.push_back(e.read(loss));
                traces.push_back(e.trace());
            }
            QCOMPARE(reads[0], reads[2]);
            QCOMPARE(reads[1], reads[3]);
            const std::vector<float> want =
                saved ? std::vector<float>{2, 2, 6, 6} : std::vector<float>{3, 3, 7, 7};
            QCOMPARE(reads[0], want);
            // Semantic stores of s: every in-place op's own without compile (or when a saved slot
            // holds a load of s), else one writeback; base commits: one per op either way.
            const auto stores = [](const Trace& t) {
                std::map<int64_t, int> n;
                for (const TraceEvent& ev : t.events)
                    if (ev.kind == EventKind::LocStore && ev.detail.find("semantic") == 0 &&
                        ev.detail.find("grad") == std::string::npos) // not w's grad
                        ++n[ev.loc];
                return n;
            };
            const auto commits = [](const Trace& t) {
                return std::count_if(t.events.begin(), t.events.end(), [](const TraceEvent& ev) {
                    return ev.kind == EventKind::BaseCommit;
                });
            };
            QCOMPARE(commits(traces[0]), commits(traces[1]));
            const auto compiled = stores(traces[0]), plain = stores(traces[1]);
            QCOMPARE(compiled.size(), size_t(1)); // s's loc only
            QCOMPARE(plain.begin()->second, saved ? 2 : 3);
            QCOMPARE(compiled.begin()->second, saved ? 2 : 1);
            // 8.11: a writeback is the call's last effect, after every commit of the body.
            if (saved) continue;
            const Trace& t = traces[0];
            const auto call = std::find_if(t.events.begin(), t.events.end(), [](const auto& ev) {
                return ev.kind == EventKind::CompiledCall;
            });
            const std::string body = call->key.substr(0, call->key.find(':')) + ":s";
            const TraceEvent* last_effect = nullptr;
            for (auto ev = call + 1; ev != t.events.end(); ++ev)
                if (ev->key.starts_with(body) && ev->kind != EventKind::Op &&
                    ev->kind != EventKind::PoolAcquire && ev->kind != EventKind::PoolRelease)
                    last_effect = &*ev;
            QVERIFY(last_effect && last_effect->kind == EventKind::LocStore);
            QCOMPARE(last_effect->loc, compiled.begin()->first);
        }
    }

    // 15: a call's temporaries (made and last read inside it) are parts of one pool buffer, its
    // region arena, at the offsets our planner gave them: each call acquires exactly its
    // variant's planned bytes once and releases them at its end, the next step's call reuses that
    // buffer, and the pool holds a fraction of what the plain run's one buffer per op needs,
    // for the same bits.
    void callTemporariesLiveInTheirRegionArena() {
        const LazyProgram p = bundled("compiled-transformer-block");
        const ProgramRun plain = run_lazy_program(p, {.compile = false});
        const ProgramRun compiled = run_lazy_program(p, {.compile = true});
        QCOMPARE(to_hex(compiled.result_hash), to_hex(plain.result_hash));
        const auto calls = events_named(compiled.trace, "compiled_call");
        std::vector<const TraceEvent*> acquired, released;
        for (const TraceEvent& e : compiled.trace.events) {
            if (e.detail.find("region arena of call") == std::string::npos) continue;
            (e.kind == EventKind::PoolAcquire ? acquired : released).push_back(&e);
        }
        QCOMPARE(calls.size(), size_t(3));
        QCOMPARE(acquired.size(), calls.size());
        QCOMPARE(released.size(), calls.size());
        for (size_t i = 0; i < calls.size(); ++i) {
            const std::string planned = "region arena " + std::to_string(acquired[i]->bytes) + " B";
            QVERIFY2(calls[i]->detail.find(planned) != std::string::npos, calls[i]->detail.c_str());
            QCOMPARE(acquired[i]->key, calls[i]->key + "+acquire");
            QCOMPARE(released[i]->storage, acquired[i]->storage);
            QCOMPARE(released[i]->kind, EventKind::PoolRelease);
        }
        QVERIFY(acquired[2]->detail.starts_with("reused from the acquirable pool"));
        const auto acquires = [](const ProgramRun& r) {
            return std::count_if(
                r.trace.events.begin(), r.trace.events.end(),
                [](const TraceEvent& e) { return e.kind == EventKind::PoolAcquire; });
        };
        QVERIFY2(acquires(compiled) * 2 < acquires(plain),
                 qPrintable(QString("%1 vs %2").arg(acquires(compiled)).arg(acquires(plain))));
        QVERIFY2(compiled.stats.pool_peak_bytes * 3 < plain.stats.pool_peak_bytes,
                 qPrintable(QString("%1 vs %2")
                                .arg(compiled.stats.pool_peak_bytes)
                                .arg(plain.stats.pool_peak_bytes)));
    }

    // A body op whose value nothing reads (dead code in a compiled function) gives its part of
    // the region arena back as soon as it is computed, fused or not. Fused, its storage outlived
    // the call: the call's invariant (no temporary outlives it) aborted the dev and asan builds,
    // and a release build kept a part of a released arena.
    void deadOpsInABodyReleaseTheirTemporary() {
        const LazyProgram p = parse_lazy_program(
            R"({"format": "tmmu-lazy-program", "version": 1, "program": [
                {"let": "x", "tensor": {"shape": [4], "arange": true}},
                {"compile": "f", "body": [{"let": "dead", "op": "add", "args": ["x", 1]},
                                         {"let": "s", "op": "sum", "args": ["x"]}],
                 "returns": ["s"]},
                {"read": "s"}]})",
            "dead.json");
        for (const bool fuse : {true, false}) {
            const ProgramRun run = run_lazy_program(p, {.compile = true, .fuse = fuse});
            QCOMPARE(run.reads.size(), size_t(1));
            QCOMPARE(run.reads[0].values, std::vector<float>{6});
            QCOMPARE(run.stats.compiled_calls, uint64_t(1));
        }
    }

    // 10.6, readonly-or-reject: a compiled call inside a checkpointed body that only reads
    // persistent state runs there (fused, its saved values not kept past the call), and
    // backward's replay of the body replays the call's ops with plain kernels: the loss and
    // every gradient have the plain run's bits. A call that writes persistent state there is
    // refused at the call, naming the function and the write; its ops stay plain lazy ops (as if
    // uncompiled) and the engine goes on.
    void readonlyCallsRunInsideCheckpointedBodies() {
        struct Step {
            std::vector<std::vector<float>> reads;
            EngineStats stats;
        };
        const auto step = [](bool checkpointed, EngineOptions options) {
            Engine e(options);
            const lazy::Tensor x = e.constant({8, 16}, values(1, 8 * 16, 1.0f), "x");
            const std::vector<lazy::Tensor> w{e.parameter({16, 16}, values(2, 256, 0.3f), "w1"),
                                              e.parameter({16, 16}, values(3, 256, 0.3f), "w2")};
            const CompiledFn block = e.compile(
                [&](std::span<const lazy::Tensor> a) {
                    const lazy::Tensor t = e.tanh(e.matmul(a[0], a[1]));
                    return std::vector{e.mul(t, e.sigmoid(t))};
                },
                "block");
            lazy::Tensor h = x;
            for (const lazy::Tensor& wk : w) {
                const std::vector<lazy::Tensor> args{h, wk};
                const auto run = [&] { return e.call(block, args)[0]; };
                h = checkpointed ? e.checkpoint(run) : run();
            }
            const lazy::Tensor loss = e.mean(e.mul(h, h));
            e.backward(loss);
            e.mark_step();
            return Step{{e.read(loss), e.read(e.grad(w[0])), e.read(e.grad(w[1]))}, e.stats()};
        };
        const Step plain = step(false, {.compile = false});
        const Step compiled = step(true, {});
        QCOMPARE(compiled.reads, plain.reads);
        QCOMPARE(step(true, {.compile = false}).reads, plain.reads);
        QCOMPARE(compiled.stats.compiled_calls, uint64_t(2));
        QCOMPARE(compiled.stats.checkpoints, uint64_t(2));
        QVERIFY(compiled.stats.fused_groups > 0);
        QVERIFY(compiled.stats.recomputed_ops > 0);

        // Writing a value that has a loc already (a parameter, or a tensor written before) is
        // CheckpointCompiledNotPureError; the first in-place write to a value without one would
        // also externalize it, CheckpointCompiledAutoExternalizeError. The spec's 16.4 names
        // both apart from CheckpointImpureRegionError, which is for plain ops in the body.
        for (const bool written_before : {true, false}) {
            Engine e;
            const lazy::Tensor s = e.constant({2}, {1, 2}, "s");
            if (written_before) e.mul_(s, 1.0f);
            const CompiledFn writes = e.compile(
                [&](std::span<const lazy::Tensor>) {
                    e.mul_(s, 3.0f);
                    return std::vector{e.neg(s)};
                },
                "writes");
            const auto f =
                failure_of([&] { (void)e.checkpoint([&] { return e.call(writes)[0]; }); });
            const char* name = written_before ? "CheckpointCompiledNotPureError"
                                              : "CheckpointCompiledAutoExternalizeError";
            QVERIFY2(names(f, name) && names(f, "compiled 'writes'") && names(f, "10.6"),
                     f ? f->what() : "no failure");
            QVERIFY(!e.poisoned());
            QCOMPARE(e.read(s), (std::vector<float>{3, 6}));
            QCOMPARE(e.stats().compiled_calls, uint64_t(0));
        }
    }

    // 8.6: the call's exit publishes one token for tokGlobal and every loc it touched, so the
    // accesses after it are ordered after the call's event, never after a token made inside it.
    void exitPublishesOneToken() {
        Engine e;
        const lazy::Tensor s = e.full({2}, 0.0f, "s");
        const lazy::Tensor t = e.full({2}, 0.0f, "t");
        const CompiledFn bump = e.compile([&](std::span<const lazy::Tensor>) {
            e.add_(s, e.full({2}, 1.0f));
            e.add_(t, e.full({2}, 1.0f));
            e.add_(s, e.full({2}, 1.0f));
            return std::vector<lazy::Tensor>{};
        });
        (void)e.call(bump);
        e.add_(s, e.full({2}, 1.0f));
        e.mark_step();
        QCOMPARE(e.read(s), (std::vector<float>{3, 3}));
        const Trace& trace = e.trace();
        const auto call = events_named(trace, "compiled_call");
        QCOMPARE(call.size(), size_t(1));
        const std::string inside = call[0]->key.substr(0, call[0]->key.find(':')) + ":s";
        std::set<int64_t> subevents;
        for (const TraceEvent& ev : trace.events)
            if (ev.key.rfind(inside, 0) == 0) subevents.insert(int64_t(ev.index));
        QVERIFY(subevents.size() >= 9); // three loads, stores and commits at least
        for (const TraceEvent& ev : trace.events) {
            if (ev.index <= call[0]->index || subevents.count(int64_t(ev.index))) continue;
            for (int64_t from : ev.token_from)
                QVERIFY2(!subevents.count(from), ev.key.c_str());
        }
    }

    // 1.6 and 16.1: staging refuses host reads and step barriers, and tensors made while
    // staging and not returned are invalid afterwards.
    void stagingRefusesWhatItCannotDo() {
        Engine e;
        const lazy::Tensor x = e.full({2}, 1.0f, "x");
        const CompiledFn reads = e.compile([&](std::span<const lazy::Tensor>) {
            (void)e.read(e.neg(x));
            return std::vector<lazy::Tensor>{};
        });
        QVERIFY(names(failure_of([&] { (void)e.call(reads); }), "HostReadInCompileError"));
        const CompiledFn steps = e.compile([&](std::span<const lazy::Tensor>) {
            e.mark_step();
            return std::vector<lazy::Tensor>{};
        });
        QVERIFY(names(failure_of([&] { (void)e.call(steps); }), "AsyncInCompileError"));
        lazy::Tensor leaked;
        const CompiledFn leaks = e.compile([&](std::span<const lazy::Tensor>) {
            leaked = e.exp(x);
            return std::vector{e.neg(leaked)};
        });
        const lazy::Tensor kept = e.call(leaks)[0];
        QCOMPARE(e.read(kept)[0], -std::exp(1.0f));
        QVERIFY(names(failure_of([&] { (void)e.read(leaked); }), "InvalidTraceTensorEscapeError"));
        const CompiledFn checkpoints = e.compile([&](std::span<const lazy::Tensor>) {
            return std::vector{e.checkpoint([&] { return e.neg(x); })};
        });
        const auto f = failure_of([&] { (void)e.call(checkpoints); });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
        QVERIFY(!e.poisoned()); // refusals are not failures of the engine
        QCOMPARE(e.read(e.neg(x))[0], -1.0f);
    }

    // Item 8: compiled and uncompiled runs of 150 random programs (op chains, in-place state
    // updates, dropout, backward and an SGD step inside the last block) read the same values,
    // commit the same versions and draw the same next numbers, lazy and eager.
    void randomProgramsAgreeCompiledAndNot() {
        for (uint64_t seed = 1; seed <= 150; ++seed) {
            const auto blocks = random_blocks(seed);
            const PropertyRun plain = run_blocks(blocks, seed, {.compile = false});
            const PropertyRun compiled = run_blocks(blocks, seed, {});
            const PropertyRun eager = run_blocks(blocks, seed, {.eager = true});
            if (compiled.reads != plain.reads || eager.reads != plain.reads)
                QFAIL(qPrintable(QString("seed %1: the reads differ").arg(seed)));
            if (compiled.committed.base_commits != plain.committed.base_commits)
                QFAIL(qPrintable(QString("seed %1: the commit versions differ").arg(seed)));
            QVERIFY(compiled.stats.kernels <= plain.stats.kernels);
        }
    }
};

QTEST_GUILESS_MAIN(TestLazyCompile)
#include "test_lazy_compile.moc"
