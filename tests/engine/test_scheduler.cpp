// Requests over slots (issue 12, item 5; seed A9.6): every lifecycle event the scheduler runs
// leaves a request's tokens exactly what the same request gives alone on a fresh model: a slot
// recycled after a finished or aborted request, a forked request, an evicted one.
#include "backends/cpu/cpu_generate.h"
#include "backends/cpu/scheduler.h"
#include "models/transformer_config.h"
#include "runtime/generate.h"
#include "runtime/plan_compiler.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <map>

using namespace tmmu;
using namespace tmmu::runtime;
using namespace tmmu::cpu;

namespace {

constexpr uint32_t kMaxSeq = 32;

TransformerConfig tiny_llama() {
    return parse_transformer_config(R"({"model_type":"llama","hidden_size":32,
        "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,
        "intermediate_size":48,"vocab_size":61,"max_position_embeddings":64})",
                                    "tiny-llama");
}

struct Model {
    TransformerConfig config = tiny_llama();
    WeightStore weights =
        random_weights(compile_transformer(config, {PlanMode::Decode, 1, kMaxSeq}).plan, 11);
};

Request request(uint64_t id, uint32_t tokens) {
    return {id, seeded_prompt(4 + uint32_t(id % 3), 61, 100 + id), tokens};
}

// Runs the scheduler until idle; returns every finished request by id.
std::map<uint64_t, Finished> drain(Scheduler& s) {
    std::map<uint64_t, Finished> out;
    while (!s.idle())
        for (Finished& f : s.step())
            out[f.id] = std::move(f);
    return out;
}

// The request alone, in a one-slot scheduler that served nothing before.
std::vector<int32_t> alone(const Model& m, const Request& r) {
    Scheduler s(m.config, m.weights, 1, kMaxSeq);
    s.submit(r);
    return drain(s).at(r.id).generated;
}

} // namespace

class TestScheduler : public QObject {
    Q_OBJECT
    Model m_;

  private slots:
    // Five requests through two slots: later ones reuse slots that earlier ones finished in,
    // decoding side by side with requests at other positions.
    void recycledSlotsGiveWhatEachRequestGivesAlone() {
        Scheduler s(m_.config, m_.weights, 2, kMaxSeq);
        for (uint64_t id = 1; id <= 5; ++id)
            s.submit(request(id, 3 + uint32_t(id) * 2));
        const auto done = drain(s);
        QCOMPARE(done.size(), size_t(5));
        for (uint64_t id = 1; id <= 5; ++id) {
            QCOMPARE(done.at(id).generated.size(), size_t(3 + id * 2));
            QCOMPARE(done.at(id).generated, alone(m_, request(id, 3 + uint32_t(id) * 2)));
        }
    }

    void anAbortedRequestFreesItsSlotCleanly() {
        Scheduler s(m_.config, m_.weights, 1, kMaxSeq);
        s.submit(request(1, 12));
        s.submit(request(2, 6));
        (void)s.step();
        (void)s.step();
        const auto aborted = s.abort(1);
        QVERIFY(aborted && aborted->aborted);
        QCOMPARE(aborted->generated.size(), size_t(2));
        QVERIFY(!s.abort(1)); // gone
        const auto done = drain(s);
        QCOMPARE(done.at(2).generated, alone(m_, request(2, 6)));
        // Aborting a request that is still queued never runs it.
        Scheduler q(m_.config, m_.weights, 1, kMaxSeq);
        q.submit(request(1, 4));
        q.submit(request(2, 4));
        QVERIFY(q.abort(2) && q.abort(2) == std::nullopt);
        QCOMPARE(drain(q).count(2), size_t(0));
    }

    // clone_for_fork copies the parent's cache: the child continues exactly as the parent does.
    void aForkContinuesExactlyLikeItsParent() {
        Scheduler s(m_.config, m_.weights, 2, kMaxSeq);
        s.submit(request(1, 10));
        for (int i = 0; i < 4; ++i)
            (void)s.step();
        QVERIFY(s.fork(1, 7));
        QVERIFY(!s.fork(1, 8)); // no free slot left
        const auto done = drain(s);
        QCOMPARE(done.at(7).generated, done.at(1).generated);
        QCOMPARE(done.at(1).generated, alone(m_, request(1, 10)));
    }

    // evict releases the cache (its bytes poisoned: any use would show); the request queues,
    // prefills its prompt and tokens again, and ends exactly as if never interrupted.
    void anEvictedRequestResumesExactly() {
        Scheduler s(m_.config, m_.weights, 1, kMaxSeq);
        s.submit(request(1, 12));
        for (int i = 0; i < 5; ++i)
            (void)s.step();
        QVERIFY(s.evict(1));
        QVERIFY(!s.evict(1)); // queued now, not running
        // It resumes (5 tokens kept, 7 to go: 7 steps), not restarts (12), which greedy
        // decoding would make look the same.
        std::vector<Finished> last;
        int steps = 0;
        for (; !s.idle(); ++steps)
            last = s.step();
        QCOMPARE(steps, 7);
        QCOMPARE(last.at(0).generated, alone(m_, request(1, 12)));
    }

    void requestsThatCannotFitAreRefused() {
        Scheduler s(m_.config, m_.weights, 1, kMaxSeq);
        TMMU_EXPECT_FAILURE(s.submit({1, {}, 4}), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(s.submit({2, std::vector<int32_t>(30, 1), 3}),
                            FailureCode::InvalidArgument);
    }

    // The lifecycle matrix as the slots carry it out.
    void slotStatesFollowTheLifecycleMatrix() {
        const ExecutionPlan plan =
            compile_transformer(m_.config, {PlanMode::Decode, 2, kMaxSeq}).plan;
        SlotStates st(plan, 2);
        QCOMPARE(st.apply(StateEvent::Alloc, 0), StateAction::Allocate);
        QCOMPARE(st.apply(StateEvent::Reuse, 0), StateAction::Truncate);
        float* block = static_cast<float*>(st.base(0));
        block[3] = 42.0f;
        QCOMPARE(st.apply(StateEvent::CloneForFork, 1, 0), StateAction::CopyPrefix);
        QCOMPARE(static_cast<float*>(st.base(0))[st.stride(0) / sizeof(float) + 3], 42.0f);
        QCOMPARE(st.apply(StateEvent::Evict, 0), StateAction::Release);
        QVERIFY(!st.allocated(0) && st.allocated(1));
        QVERIFY(std::isnan(block[3]));
        QCOMPARE(st.apply(StateEvent::Deinit, 1), StateAction::Release);
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
