// The token/effect engine (seed 004) against its normative rules: laziness and minimal forcing,
// token algebra and the join rule, commits in PlanLinearOrder, pending-loc initialization, view
// mutation, markStep and the buffer pool, the execution lock and poisoning, lifetimes, autograd.
#include "lazy/engine.h"
#include "lazy/engine_state.h"
#include "lazy/lazy_error.h"
#include "lazy/trace_state.h"

#include <QtTest>

#include <set>
#include <thread>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

// The LazyFailure fn throws; fails the test when it throws none or another kind.
std::string expect_error(LazyError kind, const std::function<void()>& fn) {
    try {
        fn();
    } catch (const LazyFailure& f) {
        if (f.kind() != kind) qFatal("expected %s, got %s", lazy_error_name(kind).data(), f.what());
        return f.what();
    }
    qFatal("expected %s, nothing was thrown", lazy_error_name(kind).data());
}

std::vector<const TraceEvent*> events_of(const Engine& e, EventKind kind) {
    std::vector<const TraceEvent*> out;
    for (const TraceEvent& ev : e.trace().events)
        if (ev.kind == kind) out.push_back(&ev);
    return out;
}

// Events a given event is ordered after through token edges.
std::set<uint64_t> token_ancestors(const Trace& trace, const TraceEvent& ev) {
    std::set<uint64_t> seen;
    std::vector<int64_t> stack(ev.token_from.begin(), ev.token_from.end());
    while (!stack.empty()) {
        const int64_t i = stack.back();
        stack.pop_back();
        if (i < 0 || !seen.insert(uint64_t(i)).second) continue;
        const auto& from = trace.events[size_t(i)].token_from;
        stack.insert(stack.end(), from.begin(), from.end());
    }
    return seen;
}

std::vector<float> iota(int64_t n, float scale = 0.1f, float shift = 0.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = shift + scale * static_cast<float>(i);
    return v;
}

} // namespace

class TestLazyEngine : public QObject {
    Q_OBJECT

  private slots:
    void opsAreLazyUntilRead() {
        Engine e;
        Tensor a = e.constant({2, 2}, {1, 2, 3, 4});
        Tensor b = e.relu(e.add(a, 1.0f));
        QCOMPARE(e.trace().events.size(), size_t(0));
        QCOMPARE(e.read(b), (std::vector<float>{2, 3, 4, 5}));
        QVERIFY(!e.trace().events.empty());
        QCOMPARE(e.trace().plans.size(), size_t(1));
    }

    void readForcesOnlyItsClosure() {
        // 1.2: reading x forces x's dependencies, not an unrelated mutation on tokGlobal.
        Engine e;
        Tensor x = e.constant({2}, {1, 2});
        Tensor y = e.constant({2}, {5, 6});
        e.mul_(y, 2.0f);
        QCOMPARE(e.read(x), (std::vector<float>{1, 2}));
        QVERIFY(events_of(e, EventKind::BaseCommit).empty());
        e.mark_step();
        QCOMPARE(events_of(e, EventKind::BaseCommit).size(), size_t(1));
        QCOMPARE(e.read(y), (std::vector<float>{10, 12}));
    }

    void droppedEffectsRunAtMarkStep() {
        // 3.2: an effectful op advances tokGlobal even when nothing keeps its result.
        Engine e;
        Tensor kept = e.constant({1}, {3});
        e.tidy([&] {
            Tensor t = e.constant({1}, {1});
            e.add_(kept, t);
            return Tensor();
        });
        e.mark_step();
        QCOMPARE(events_of(e, EventKind::LocStore).size(), size_t(1));
        QCOMPARE(e.read(kept), (std::vector<float>{4}));
    }

    void afterAllIsAssociativeCommutativeIdempotent() {
        Engine owner;
        EngineState s(owner, {});
        const ValueId a = s.new_value({}, true), b = s.new_value({}, true),
                      c = s.new_value({}, true);
        QCOMPARE(s.after_all({a, b}), s.after_all({b, a}));
        QCOMPARE(s.after_all({a, a}), a);
        QCOMPARE(s.after_all({a, b, a}), s.after_all({a, b}));
        QCOMPARE(s.after_all({s.after_all({a, b}), c}), s.after_all({a, s.after_all({b, c})}));
        QVERIFY(s.after_all({a, b}) != s.after_all({a, c}));
    }

    void joinRuleOrdersLocAccesses() {
        // 3.3: the second loc's store takes after_all(tokGlobal, tokLoc) and becomes both.
        Engine e;
        Tensor p = e.constant({1}, {1});
        Tensor q = e.constant({1}, {2});
        e.mul_(p, 2.0f);
        e.mul_(q, 3.0f);
        e.add_(p, q); // loads q (tokLoc[q] is the global token), stores p after it
        e.mark_step();
        const auto stores = events_of(e, EventKind::LocStore);
        const auto loads = events_of(e, EventKind::LocLoad);
        QCOMPARE(stores.size(), size_t(3));
        QVERIFY(!loads.empty());
        // Program order through tokens: every ordered access (any loc) is token-after the one
        // before it, which takes joining tokGlobal with tokLoc, not tokLoc alone.
        std::vector<const TraceEvent*> ordered;
        for (const TraceEvent& ev : e.trace().events)
            if (ev.kind == EventKind::LocStore || ev.kind == EventKind::LocLoad ||
                ev.kind == EventKind::BaseCommit)
                ordered.push_back(&ev);
        for (size_t i = 1; i < ordered.size(); ++i)
            QVERIFY2(token_ancestors(e.trace(), *ordered[i]).count(ordered[i - 1]->index),
                     ordered[i]->key.c_str());
        QCOMPARE(e.read(p), (std::vector<float>{8}));
    }

    void everyMutationCommitsOnceWithUniqueMutId() {
        Engine e;
        Tensor p = e.constant({3}, {1, 2, 3});
        Tensor v = e.slice(p, 0, 1, 3);
        e.mul_(p, 2.0f);
        e.add_(v, e.constant({2}, {1, 1}));
        e.fill_(v, 0.0f);
        e.mark_step();
        const auto commits = events_of(e, EventKind::BaseCommit);
        QCOMPARE(commits.size(), size_t(3));
        std::set<std::string> muts;
        for (size_t i = 0; i < commits.size(); ++i) {
            QCOMPARE(commits[i]->base_commit, uint64_t(i + 1)); // versions in linear order
            muts.insert(commits[i]->detail.substr(0, commits[i]->detail.find(':')));
        }
        QCOMPARE(muts.size(), size_t(3));
        QCOMPARE(e.read(p), (std::vector<float>{2, 0, 0}));
    }

    void commitVersionsAreAssignedAtForceInLinearOrder() {
        // Two steps: versions continue from the committed state, one per store.
        Engine e;
        Tensor p = e.constant({1}, {1});
        for (int i = 0; i < 3; ++i) {
            e.add_(p, e.constant({1}, {1}));
            e.mark_step();
        }
        const auto stores = events_of(e, EventKind::LocStore);
        QCOMPARE(stores.size(), size_t(3));
        for (size_t i = 0; i < stores.size(); ++i) {
            QCOMPARE(stores[i]->loc_version, uint64_t(i + 1));
            QCOMPARE(stores[i]->loc_logical_version, uint64_t(i + 1));
        }
        QCOMPARE(e.read(p), (std::vector<float>{4}));
    }

    void inPlaceStoreBumpsStorageVersionOnce() {
        // 5.3: a store that writes the loc's own buffer bumps its storageVersion exactly once.
        Engine e;
        Tensor p = e.constant({4}, {1, 2, 3, 4});
        e.mul_(p, 2.0f);
        e.mark_step();
        e.mul_(p, 2.0f);
        e.mark_step();
        const auto stores = events_of(e, EventKind::LocStore);
        QCOMPARE(stores.size(), size_t(2));
        QVERIFY2(stores[1]->detail.find("in place, storageVersion 1") != std::string::npos,
                 stores[1]->detail.c_str());
        QCOMPARE(stores[0]->detail.find("in place"), std::string::npos);
        QCOMPARE(e.read(p), (std::vector<float>{4, 8, 12, 16}));
    }

    void parameterInitializerPrecedesFirstLoad() {
        // 3.7: a pending loc is initialised by a materialize store whose token orders the load.
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        QCOMPARE(e.info(w).binding.rfind("pending_loc", 0), size_t(0));
        QCOMPARE(e.read(e.mul(w, 3.0f)), (std::vector<float>{3, 6}));
        const auto stores = events_of(e, EventKind::LocStore);
        const auto loads = events_of(e, EventKind::LocLoad);
        QCOMPARE(stores.size(), size_t(1));
        QVERIFY(stores[0]->detail.rfind("materialize", 0) == 0);
        QCOMPARE(loads[0]->token_from, (std::vector<int64_t>{int64_t(stores[0]->index)}));
        e.mark_step();
        QCOMPARE(e.info(w).binding.rfind("loc(", 0), size_t(0)); // finalized at step 2
        QCOMPARE(e.read(w), (std::vector<float>{1, 2}));
        QCOMPARE(events_of(e, EventKind::LocStore).size(), size_t(1)); // initialised once
    }

    void semanticStoreSubsumesInitializer() {
        // A store before any load initialises the loc: no materialize store at all.
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        {
            Engine::NoGrad ng(e);
            e.fill_(w, 7.0f);
        }
        QCOMPARE(e.read(w), (std::vector<float>{7, 7}));
        for (const TraceEvent* s : events_of(e, EventKind::LocStore))
            QVERIFY2(s->detail.rfind("semantic", 0) == 0, s->detail.c_str());
    }

    void viewMutationLowersToStridedScatter() {
        Engine e;
        Tensor base = e.constant({2, 3}, {0, 1, 2, 3, 4, 5}, "base");
        Tensor col = e.slice(e.transpose(base, 0, 1), 0, 1, 3); // columns 1..2 as rows
        Tensor other = e.slice(base, 0, 1, 2);                  // the second row
        e.mul_(col, 10.0f);
        QCOMPARE(e.read(base), (std::vector<float>{0, 10, 20, 3, 40, 50}));
        QCOMPARE(e.read(other), (std::vector<float>{3, 40, 50}));
        QCOMPARE(e.read(col), (std::vector<float>{10, 40, 20, 50}));
        bool scatter = false;
        for (const TraceEvent& ev : e.trace().events)
            scatter |= ev.op == "strided_scatter";
        QVERIFY(scatter);
        QCOMPARE(e.info(col).base, e.info(base).base);
        QVERIFY(e.info(col).is_view);
    }

    void reshapeOfTransposedViewCopies() {
        Engine e;
        Tensor a = e.constant({2, 3}, {0, 1, 2, 3, 4, 5});
        Tensor t = e.reshape(e.transpose(a, 0, 1), {6});
        QCOMPARE(e.read(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
        QVERIFY(e.info(t).base != e.info(a).base); // not an alias: a copy was reshaped
        Tensor r = e.reshape(a, {3, 2});
        QCOMPARE(e.info(r).base, e.info(a).base);
    }

    void markStepRunsPhasesInOrder() {
        Engine e;
        Tensor p = e.constant({1}, {1});
        e.add_(p, e.constant({1}, {1}));
        e.mark_step();
        std::vector<std::string> phases;
        for (const TraceEvent* ev : events_of(e, EventKind::MarkStep))
            phases.push_back(ev->op);
        QCOMPARE(phases, (std::vector<std::string>{"mark_step.0", "mark_step.1", "mark_step.2",
                                                   "mark_step.3", "mark_step.4", "mark_step.5"}));
        QCOMPARE(e.stats().steps, uint64_t(1));
    }

    void releasedBufferIsNotReusedBeforeMarkStep() {
        // 14.1: a buffer released mid-step waits in pendingRelease until the step ends.
        Engine e;
        Tensor x = e.constant({16}, iota(16));
        for (int i = 0; i < 4; ++i)
            x = e.add(x, 1.0f);
        e.read(x);
        const uint64_t first_step_allocs = e.stats().buffers_allocated;
        QVERIFY(!events_of(e, EventKind::PoolRelease).empty());
        QCOMPARE(e.stats().buffers_reused, uint64_t(0));
        for (int i = 0; i < 4; ++i)
            x = e.add(x, 1.0f);
        e.read(x);
        QCOMPARE(e.stats().buffers_reused, uint64_t(0)); // still the same step
        QVERIFY(e.stats().buffers_allocated > first_step_allocs);
        e.mark_step();
        for (int i = 0; i < 4; ++i)
            x = e.add(x, 1.0f);
        e.read(x);
        QVERIFY(e.stats().buffers_reused > 0);
        // Every reuse comes after a flush of that buffer, and no flush happens mid-step.
        std::map<int64_t, int> state; // 0 live, 1 pending, 2 acquirable
        for (const TraceEvent& ev : e.trace().events) {
            if (ev.kind == EventKind::PoolRelease) state[ev.storage] = 1;
            if (ev.kind == EventKind::PoolFlush) {
                QCOMPARE(state[ev.storage], 1);
                state[ev.storage] = 2;
            }
            if (ev.kind == EventKind::PoolAcquire && state.count(ev.storage)) {
                QCOMPARE(state[ev.storage], 2);
                state[ev.storage] = 0;
            }
        }
    }

    void reentrantCallIsEngineBusy() {
        Engine e;
        Tensor x = e.constant({1}, {1});
        std::string message;
        e.set_observer([&](const TraceEvent&) {
            if (message.empty()) message = expect_error(LazyError::EngineBusy, [&] { e.read(x); });
        });
        e.read(e.add(x, 1.0f));
        QVERIFY2(message.find("re-entrant") != std::string::npos, message.c_str());
        QVERIFY(!e.poisoned());
    }

    void overlappingThreadIsEngineBusy() {
        Engine e;
        Tensor x = e.constant({1}, {1});
        std::string message;
        bool asked = false;
        e.set_observer([&](const TraceEvent&) {
            if (asked) return;
            asked = true;
            std::thread other(
                [&] { message = expect_error(LazyError::EngineBusy, [&] { e.mark_step(); }); });
            other.join();
        });
        e.read(e.add(x, 1.0f));
        QVERIFY2(message.find("another thread") != std::string::npos, message.c_str());
    }

    void failedForcePoisonsEngine() {
        Engine e;
        Tensor x = e.constant({2}, {1, 2}, "x");
        Tensor w = e.parameter({2}, {3, 4}, "w");
        Tensor loss = e.sum(e.mul(x, w));
        e.mul_(x, 2.0f);
        e.backward(loss);
        const std::string why =
            expect_error(LazyError::SavedTensorModified, [&] { e.mark_step(); });
        QVERIFY(e.poisoned());
        expect_error(LazyError::PoisonedEngine, [&] { e.read(x); });
        expect_error(LazyError::PoisonedEngine, [&] { e.add(x, x); });
        e.dispose(x); // cleanup still works
        QVERIFY(e.info(x).disposed);
        QVERIFY(why.find("'x'") != std::string::npos);
    }

    void tidyDisposesWhatDoesNotEscape() {
        Engine e;
        Tensor inner, kept;
        Tensor out = e.tidy([&] {
            Tensor a = e.constant({1}, {2});
            inner = e.mul(a, 3.0f);
            kept = e.add(a, 1.0f);
            e.keep(kept);
            return e.add(inner, 1.0f);
        });
        QCOMPARE(e.read(out), (std::vector<float>{7}));
        QCOMPARE(e.read(kept), (std::vector<float>{3}));
        const std::string m = expect_error(LazyError::DisposedTensor, [&] { e.read(inner); });
        QVERIFY(m.find("tidy") != std::string::npos);
    }

    void tidyScopeObjectDisposesAtItsEnd() {
        Engine e;
        Tensor inner, kept;
        {
            Engine::TidyScope scope(e);
            inner = e.constant({1}, {1});
            kept = e.add(inner, 1.0f);
            e.keep(kept);
        }
        QVERIFY(e.info(inner).disposed);
        QVERIFY(!e.info(kept).disposed);
        QCOMPARE(e.read(kept), (std::vector<float>{2}));
    }

    void droppedHandlesAreFinalizedAtSafePoints() {
        Engine e;
        {
            Tensor t = e.constant({1}, {1});
            e.read(t);
        }
        QCOMPARE(e.stats().finalized, uint64_t(0)); // queued, not yet drained
        e.mark_step();
        QCOMPARE(e.stats().finalized, uint64_t(1));
    }

    void disposeIsDeferredWhileBusy() {
        Engine e;
        Tensor x = e.constant({1}, {1});
        Tensor y = e.constant({1}, {2});
        bool done = false;
        e.set_observer([&](const TraceEvent&) {
            if (done) return;
            done = true;
            e.dispose(y); // inside a force: queued, not applied mid-plan
            QVERIFY(!e.info(y).disposed);
        });
        e.read(e.add(x, 1.0f));
        QVERIFY(e.info(y).disposed); // drained at the end of the entry point
    }

    void gradientsMatchAHandWrittenBackward() {
        // loss = mean((relu(x w1 + b1) w2 - t)^2) against the same backward in double.
        const int64_t n = 4, i = 3, h = 5, o = 2;
        const auto x0 = iota(n * i, 0.3f, -1.0f), w10 = iota(i * h, 0.07f, -0.5f);
        const auto b10 = iota(h, 0.05f, -0.1f), w20 = iota(h * o, -0.09f, 0.4f);
        const auto t0 = iota(n * o, 0.25f, -0.5f);
        Engine e;
        Tensor x = e.constant({n, i}, x0), t = e.constant({n, o}, t0);
        Tensor w1 = e.parameter({i, h}, w10, "w1"), b1 = e.parameter({h}, b10, "b1");
        Tensor w2 = e.parameter({h, o}, w20, "w2");
        Tensor hid = e.relu(e.add(e.matmul(x, w1), b1));
        Tensor d = e.sub(e.matmul(hid, w2), t);
        Tensor loss = e.mean(e.mul(d, d));
        e.backward(loss);
        // Reference in double.
        std::vector<double> z(n * h), a(n * h), y(n * o), gy(n * o), ga(n * h), gw1(i * h, 0),
            gb1(h, 0), gw2(h * o, 0);
        double ref_loss = 0;
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < h; ++c) {
                double s = b10[c];
                for (int64_t k = 0; k < i; ++k)
                    s += double(x0[r * i + k]) * w10[k * h + c];
                z[r * h + c] = s;
                a[r * h + c] = s > 0 ? s : 0;
            }
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < o; ++c) {
                double s = 0;
                for (int64_t k = 0; k < h; ++k)
                    s += a[r * h + k] * w20[k * o + c];
                y[r * o + c] = s - t0[r * o + c];
                ref_loss += y[r * o + c] * y[r * o + c] / double(n * o);
                gy[r * o + c] = 2 * y[r * o + c] / double(n * o);
            }
        for (int64_t r = 0; r < n; ++r)
            for (int64_t k = 0; k < h; ++k) {
                double s = 0;
                for (int64_t c = 0; c < o; ++c) {
                    gw2[k * o + c] += a[r * h + k] * gy[r * o + c];
                    s += gy[r * o + c] * w20[k * o + c];
                }
                ga[r * h + k] = z[r * h + k] > 0 ? s : 0;
                gb1[k] += ga[r * h + k];
                for (int64_t q = 0; q < i; ++q)
                    gw1[q * h + k] += x0[r * i + q] * ga[r * h + k];
            }
        const auto close = [](const std::vector<float>& got, const std::vector<double>& want) {
            if (got.size() != want.size()) return false;
            for (size_t k = 0; k < got.size(); ++k)
                if (std::abs(got[k] - want[k]) > 1e-5 * (1 + std::abs(want[k]))) return false;
            return true;
        };
        QVERIFY(std::abs(e.item(loss) - ref_loss) < 1e-5);
        QVERIFY(close(e.read(e.grad(w1)), gw1));
        QVERIFY(close(e.read(e.grad(b1)), gb1));
        QVERIFY(close(e.read(e.grad(w2)), gw2));
    }

    void savedTensorMutationIsNamed() {
        Engine e;
        Tensor x = e.constant({2}, {1, 2}, "activations");
        Tensor w = e.parameter({2}, {3, 4}, "w");
        Tensor loss = e.sum(e.mul(x, w));
        e.set_site("program[4]");
        e.mul_(x, 2.0f);
        e.backward(loss);
        const std::string m =
            expect_error(LazyError::SavedTensorModified, [&] { e.read(e.grad(w)); });
        QVERIFY2(m.find("'activations'") != std::string::npos, m.c_str());
        QVERIFY2(m.find("mul_ at program[4]") != std::string::npos, m.c_str());
        QVERIFY2(m.find("SavedTensorModifiedError") != std::string::npos, m.c_str());
    }

    void mutationAfterBackwardIsAllowed() {
        Engine e;
        Tensor x = e.constant({2}, {1, 2}, "x");
        Tensor w = e.parameter({2}, {3, 4}, "w");
        e.backward(e.sum(e.mul(x, w)));
        e.mul_(x, 2.0f); // after backward read it: no error
        e.mark_step();
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{1, 2}));
    }

    void zeroGradSetToNullTombstones() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        e.backward(e.sum(e.mul(w, 3.0f)));
        Tensor old = e.grad(w);
        QCOMPARE(e.read(old), (std::vector<float>{3, 3}));
        const Tensor params[] = {w};
        e.zero_grad(params, true);
        QVERIFY(!e.grad(w).valid());
        const std::string m = expect_error(LazyError::InvalidatedGrad, [&] { e.read(old); });
        QVERIFY(m.find("w.grad") != std::string::npos);
    }

    void zeroGradToZerosKeepsTheGrad() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        e.backward(e.sum(e.mul(w, 3.0f)));
        const Tensor params[] = {w};
        e.zero_grad(params, false);
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{0, 0}));
        e.backward(e.sum(e.mul(w, 2.0f)));
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{2, 2}));
    }

    void gradAccumulatesAcrossBackwards() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        e.backward(e.sum(e.mul(w, 3.0f)));
        e.backward(e.sum(e.mul(w, w)));
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{5, 7}));
    }

    void retainGradKeepsNonLeafGrad() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        Tensor h = e.mul(w, 3.0f);
        Tensor plain = e.mul(h, 1.0f);
        e.retain_grad(h);
        e.backward(e.sum(e.mul(plain, plain)));
        QCOMPARE(e.read(e.grad(h)), (std::vector<float>{6, 12}));
        QVERIFY(!e.grad(plain).valid());
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{18, 36}));
    }

    void secondBackwardIsGraphFreed() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        Tensor loss = e.sum(e.mul(w, w));
        e.set_name(loss, "loss");
        e.backward(loss);
        const std::string m =
            expect_error(LazyError::BackwardGraphFreed, [&] { e.backward(loss); });
        QVERIFY(m.find("'loss'") != std::string::npos);
    }

    void backwardThroughAFreedSubgraphIsNamed() {
        // Two losses share h = w * w: the first backward frees mul's saved values.
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        Tensor h = e.mul(w, w);
        Tensor l1 = e.sum(h), l2 = e.sum(e.mul(h, 2.0f));
        e.set_name(l2, "l2");
        e.backward(l1);
        const std::string m = expect_error(LazyError::BackwardGraphFreed, [&] { e.backward(l2); });
        QVERIFY2(m.find("'l2'") != std::string::npos && m.find("mul") != std::string::npos,
                 m.c_str());
        QVERIFY(!e.poisoned()); // refused before anything was emitted
        e.mark_step();
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{2, 4}));
    }

    void handlesFromAnotherEngineAreRefused() {
        Engine a, b;
        Tensor t = a.constant({1}, {1});
        QVERIFY(capture([&] { b.read(t); }).has_value());
        QCOMPARE(capture([&] { b.read(t); })->code(), FailureCode::InvalidArgument);
        QCOMPARE(capture([&] { b.info(t); })->code(), FailureCode::InvalidArgument);
    }

    void oversizedShapesAreNamedFailures() {
        Engine e;
        QCOMPARE(capture([&] {
                     e.full({int64_t(1) << 40, 4}, 0.0f);
                 })->code(),
                 FailureCode::AllocationOverflow);
        Tensor col = e.constant({1 << 20, 1}, std::vector<float>(1 << 20, 1.0f));
        Tensor row = e.constant({1, 1 << 20}, std::vector<float>(1 << 20, 1.0f));
        QCOMPARE(capture([&] { e.matmul(col, row); })->code(), FailureCode::AllocationOverflow);
        QCOMPARE(capture([&] { e.full({2, 0}, 0.0f); })->code(), FailureCode::InvalidArgument);
        QCOMPARE(capture([&] { e.item(e.full({2}, 1.0f)); })->code(), FailureCode::InvalidArgument);
        QVERIFY(!e.poisoned());
        QCOMPARE(e.item(e.sum(col)), float(1 << 20));
    }

    void nestedTidyHandsItsResultToTheOuterScope() {
        Engine e;
        Tensor inner_result;
        Tensor out = e.tidy([&] {
            inner_result = e.tidy([&] { return e.constant({1}, {2}); });
            return e.mul(inner_result, 3.0f);
        });
        QCOMPARE(e.read(out), (std::vector<float>{6}));
        QVERIFY(e.info(inner_result).disposed); // returned by the inner scope, not the outer
        QVERIFY(!e.info(out).disposed);
    }

    void adamWStateSurvivesTidyScopes() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        AdamW adam({w}, {});
        for (int step = 0; step < 2; ++step)
            e.tidy([&] {
                e.backward(e.sum(e.mul(w, w)));
                adam.step(e);
                const Tensor params[] = {w};
                e.zero_grad(params, true);
                return Tensor();
            });
        e.mark_step();
        const auto got = e.read(w);
        QVERIFY(got[0] < 1 && got[1] < 2);
    }

    void aThrowingObserverLeavesTheEngineUsable() {
        Engine e;
        Tensor x = e.constant({1}, {1});
        {
            Tensor dropped = e.add(x, 1.0f);
            e.read(dropped);
        } // queued for cleanup; its release event reaches the observer at the next entry
        bool thrown = false;
        e.set_observer([&](const TraceEvent& ev) {
            if (ev.kind == EventKind::PoolRelease && !thrown) {
                thrown = true;
                throw std::runtime_error("observer failed");
            }
        });
        QVERIFY(capture_any([&] { e.read(x); }));
        QVERIFY(thrown);
        e.set_observer({});
        QCOMPARE(e.read(x), (std::vector<float>{1})); // the lock was released
    }

    void gradFlowsThroughViewsToTheSharedBase() {
        Engine e;
        Tensor w = e.parameter({4}, {1, 2, 3, 4}, "w");
        Tensor lo = e.slice(w, 0, 0, 2), hi = e.slice(w, 0, 2, 4);
        e.backward(e.sum(e.mul(lo, hi)));
        QCOMPARE(e.read(e.grad(w)), (std::vector<float>{3, 4, 1, 2}));
    }

    void inPlaceOnTensorRequiringGradNeedsNoGrad() {
        Engine e;
        Tensor w = e.parameter({2}, {1, 2}, "w");
        const auto f = [&] { e.mul_(w, 2.0f); };
        QVERIFY(capture(f).has_value());
        Engine::NoGrad ng(e);
        f();
        QCOMPARE(e.read(w), (std::vector<float>{2, 4}));
    }

    void sgdAndAdamWMatchTheirFormulas() {
        Engine e;
        Tensor a = e.parameter({2}, {1, -2}, "a"), b = e.parameter({2}, {0.5f, 3}, "b");
        Sgd sgd({a}, 0.1f);
        AdamWOptions o;
        o.lr = 0.01f;
        AdamW adam({b}, o);
        for (int step = 0; step < 3; ++step) {
            e.backward(e.sum(e.add(e.mul(a, a), e.mul(b, b))));
            sgd.step(e);
            adam.step(e);
            const Tensor params[] = {a, b};
            e.zero_grad(params, true);
            e.mark_step();
        }
        // SGD on a^2: a <- a (1 - 2 lr) each step.
        const double f = 0.8 * 0.8 * 0.8;
        const auto got_a = e.read(a);
        QVERIFY(std::abs(got_a[0] - f) < 1e-6 && std::abs(got_a[1] + 2 * f) < 1e-6);
        // AdamW on b^2 in double.
        std::vector<double> p = {0.5, 3}, m(2, 0), v(2, 0);
        for (int t = 1; t <= 3; ++t)
            for (size_t k = 0; k < 2; ++k) {
                const double g = 2 * p[k];
                p[k] *= 1 - 0.01 * 0.01;
                m[k] = 0.9 * m[k] + 0.1 * g;
                v[k] = 0.999 * v[k] + 0.001 * g * g;
                const double mh = m[k] / (1 - std::pow(0.9, t)),
                             vh = v[k] / (1 - std::pow(0.999, t));
                p[k] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
            }
        const auto got = e.read(b);
        for (size_t k = 0; k < 2; ++k)
            QVERIFY(std::abs(got[k] - p[k]) < 1e-5);
    }

    void everyPlanHasAPlannedArena() {
        Engine e;
        Tensor x = e.constant({8, 8}, iota(64));
        Tensor y = x;
        for (int i = 0; i < 6; ++i)
            y = e.relu(e.add(e.matmul(y, x), 1.0f));
        e.read(y);
        const PlanRecord& p = e.trace().plans.back();
        QVERIFY(p.buffers > 0);
        QVERIFY(p.live_peak_bytes > 0);
        QVERIFY(p.planned_bytes >= p.live_peak_bytes); // no plan below the lower bound
        QVERIFY(p.planned_bytes <= p.pool_bytes);      // the pool never reuses mid-step
        QCOMPARE(e.stats().planned_peak_bytes, p.planned_bytes);
    }

    void traceStateAgreesWithThePool() {
        Engine e;
        Tensor w = e.parameter({4, 4}, iota(16), "w");
        Tensor x = e.constant({2, 4}, iota(8, 0.3f));
        for (int step = 0; step < 3; ++step) {
            e.backward(e.mean(e.matmul(x, w)));
            Sgd({w}, 0.1f).step(e);
            const Tensor params[] = {w};
            e.zero_grad(params, true);
            e.mark_step();
        }
        const Trace& t = e.trace();
        const MemorySeries m = memory_series(t);
        QCOMPARE(m.live.size(), t.events.size());
        // The pool never frees: what it holds at the end is its peak.
        QCOMPARE(m.live.back() + m.pending.back() + m.acquirable.back(), e.stats().pool_peak_bytes);
        QCOMPARE(m.pending.back(), uint64_t(0)); // mark_step flushed everything pending
        const TraceBuffers b = trace_buffers(t);
        QCOMPARE(b.ids.size(), events_of(e, EventKind::PoolAcquire).size());
        QVERIFY(lower_bound_bytes(b.problem) <= e.stats().pool_peak_bytes);
        const TraceSnapshot mid = snapshot_at(t, t.events.size() / 2);
        QCOMPARE(mid.live_bytes, m.live[t.events.size() / 2]);
    }

    void sameProgramSameTraceHash() {
        const auto run = [] {
            Engine e;
            Tensor w = e.parameter({3, 2}, iota(6), "w");
            Tensor x = e.constant({2, 3}, iota(6, 0.5f));
            for (int step = 0; step < 2; ++step) {
                e.backward(e.mean(e.matmul(x, w)));
                Sgd({w}, 0.1f).step(e);
                const Tensor params[] = {w};
                e.zero_grad(params, true);
                e.mark_step();
            }
            return to_hex(trace_hash(e.trace()));
        };
        QCOMPARE(run(), run());
    }

    void lazyMatchesEagerOnRandomPrograms() {
        for (uint64_t seed = 1; seed <= 40; ++seed) {
            const auto lazy = random_program(seed, false);
            const auto eager = random_program(seed, true);
            QVERIFY2(lazy.first == eager.first, qPrintable(QString("seed %1").arg(seed)));
            QCOMPARE(lazy.second, random_program(seed, false).second); // trace hash, twice
        }
    }

  private:
    static bool capture_any(const std::function<void()>& f) {
        try {
            f();
        } catch (...) {
            return true;
        }
        return false;
    }

    static std::optional<Failure> capture(const std::function<void()>& f) {
        try {
            f();
        } catch (const Failure& x) {
            return x;
        }
        return std::nullopt;
    }

    // A seeded random program of ops, views, in-place updates, reads and steps; returns every
    // value it read and the trace hash.
    static std::pair<std::vector<float>, std::string> random_program(uint64_t seed, bool eager) {
        uint64_t state = seed * 0x9E3779B97F4A7C15ull;
        const auto next = [&](uint64_t n) {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            return (state * 0x2545F4914F6CDD1Dull >> 33) % n;
        };
        EngineOptions options;
        options.eager = eager;
        Engine e(options);
        std::vector<Tensor> pool;
        for (int k = 0; k < 3; ++k)
            pool.push_back(e.constant({3, 4}, iota(12, 0.1f * float(k + 1), -0.5f)));
        // A parameter trained on the side: backward through values the pool mutates later.
        Tensor w = e.parameter({3, 4}, iota(12, 0.05f, 0.1f), "w");
        Sgd sgd({w}, 0.1f);
        std::vector<float> reads;
        for (int op = 0; op < 30; ++op) {
            const Tensor& a = pool[next(pool.size())];
            const Tensor& b = pool[next(pool.size())];
            switch (next(11)) {
            case 9:
                e.backward(e.sum(e.mul(e.tanh(w), a)));
                break;
            case 10: {
                sgd.step(e);
                const Tensor params[] = {w};
                e.zero_grad(params, true);
                const auto r = e.read(w);
                reads.insert(reads.end(), r.begin(), r.end());
                break;
            }
            case 0:
                pool.push_back(e.add(a, b));
                break;
            case 1:
                pool.push_back(e.mul(a, e.tanh(b)));
                break;
            case 2:
                pool.push_back(e.sub(a, e.mean(b, {0}, true)));
                break;
            case 3:
                pool.push_back(e.sigmoid(e.matmul(e.transpose(a, 0, 1), b)));
                break;
            case 4:
                e.add_(e.slice(a, 1, 1, 3), e.slice(b, 1, 0, 2));
                break;
            case 5:
                e.mul_(a, 0.5f);
                break;
            case 6: {
                const auto r = e.read(e.sum(a, {1}));
                reads.insert(reads.end(), r.begin(), r.end());
                break;
            }
            case 7:
                e.mark_step();
                break;
            default:
                pool.push_back(e.relu(e.add(a, -0.2f)));
                break;
            }
            // Keep only [3, 4] tensors in the pool (matmul makes [4, 4]).
            if (e.info(pool.back()).shape != Shape{3, 4}) pool.pop_back();
        }
        for (const Tensor& t : pool) {
            const auto r = e.read(t);
            reads.insert(reads.end(), r.begin(), r.end());
        }
        return {reads, to_hex(trace_hash(e.trace()))};
    }
};

QTEST_GUILESS_MAIN(TestLazyEngine)
#include "test_lazy_engine.moc"
