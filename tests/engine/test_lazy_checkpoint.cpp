// Non-reentrant checkpointing with whole-body replay (seed 004, section 10; issue 18 item 3):
// gradients bit-identical to an uncheckpointed run with less memory held, random draws replayed
// with their own keys (no second advance of the RNG state), the purity fence, and the misuses
// it refuses.
#include "core/failure.h"
#include "lazy/engine.h"
#include "lazy/lazy_error.h"
#include "lazy/trace_state.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <functional>
#include <random>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

constexpr int kLayers = 6;
constexpr int64_t kRows = 32, kWidth = 64;

std::vector<float> values(uint64_t seed, int64_t n, float scale) {
    return test::seeded_floats(seed, n, scale);
}

struct Run {
    std::vector<float> loss;
    std::vector<std::vector<float>> grads;
    std::vector<float> next_draw; // a draw made after backward
    EngineStats stats;
};

// An MLP of kLayers blocks, each h = t * sigmoid(t) with t = tanh(h @ w) (and, with dropout,
// dropout(h, 0.1) first), its loss mean(h * h) and every weight's grad; each block inside
// checkpoint() when `checkpointed`.
Run train_step(bool checkpointed, bool dropout, EngineOptions options = {}) {
    Engine e(options);
    e.manual_seed(9);
    const lazy::Tensor x = e.constant({kRows, kWidth}, values(1, kRows * kWidth, 1.0f), "x");
    std::vector<lazy::Tensor> w;
    for (int k = 0; k < kLayers; ++k)
        w.push_back(e.parameter({kWidth, kWidth}, values(10 + k, kWidth * kWidth, 0.2f),
                                "w" + std::to_string(k)));
    lazy::Tensor h = x;
    for (int k = 0; k < kLayers; ++k) {
        const auto block = [&] {
            const lazy::Tensor in = dropout ? e.dropout(h, 0.1f) : h;
            const lazy::Tensor t = e.tanh(e.matmul(in, w[size_t(k)]));
            return e.mul(t, e.sigmoid(t));
        };
        h = checkpointed ? e.checkpoint(block) : block();
    }
    const lazy::Tensor loss = e.mean(e.mul(h, h));
    e.backward(loss);
    e.mark_step();
    Run r;
    r.loss = e.read(loss);
    for (const lazy::Tensor& p : w)
        r.grads.push_back(e.read(e.grad(p)));
    r.next_draw = e.read(e.rand({4}));
    r.stats = e.stats();
    return r;
}

// A random program's shape, drawn once and then run under each policy: 1 to 5 blocks of 1 to 5
// ops on an [8, 16] value, about two thirds of them checkpointed. Op codes: 0 tanh, 1 sigmoid, 2 relu,
// 3 matmul by a weight, 4 multiply by a weight's first rows, 5 add a weight's first rows,
// 6 dropout, 7 exp of a tenth.
struct RandomProgram {
    std::vector<std::vector<int>> blocks;
    std::vector<bool> checkpointed;
};

RandomProgram random_program(uint64_t seed) {
    std::mt19937_64 rng(seed);
    RandomProgram p;
    const size_t blocks = 1 + rng() % 5;
    for (size_t b = 0; b < blocks; ++b) {
        std::vector<int> ops(1 + rng() % 5);
        for (int& op : ops)
            op = int(rng() % 8);
        p.blocks.push_back(ops);
        p.checkpointed.push_back(rng() % 3 != 0);
    }
    p.blocks[0][0] = 3; // a weight reaches the loss: backward has something to do
    return p;
}

// Every read of one run of p: the loss, each weight's grad, then a draw made after backward.
std::vector<std::vector<float>> run_random(const RandomProgram& p, uint64_t seed,
                                           EngineOptions options) {
    constexpr int64_t rows = 8, width = 16;
    Engine e(options);
    e.manual_seed(seed);
    const lazy::Tensor x = e.constant({rows, width}, values(seed, rows * width, 1.0f), "x");
    std::vector<lazy::Tensor> w;
    for (uint64_t k = 0; k < 3; ++k)
        w.push_back(e.parameter({width, width}, values(seed * 7 + k, width * width, 0.3f), "w"));
    const auto rows_of = [&](const lazy::Tensor& t) { return e.slice(t, 0, 0, rows); };
    lazy::Tensor h = x;
    for (size_t b = 0; b < p.blocks.size(); ++b) {
        const auto block = [&] {
            lazy::Tensor v = h;
            for (size_t i = 0; i < p.blocks[b].size(); ++i) {
                const lazy::Tensor& wi = w[(b + i) % w.size()];
                switch (p.blocks[b][i]) {
                case 0: v = e.tanh(v); break;
                case 1: v = e.sigmoid(v); break;
                case 2: v = e.relu(v); break;
                case 3: v = e.matmul(v, wi); break;
                case 4: v = e.mul(v, rows_of(wi)); break;
                case 5: v = e.add(v, rows_of(wi)); break;
                case 6: v = e.dropout(v, 0.25f); break;
                default: v = e.exp(e.mul(v, 0.1f)); break;
                }
            }
            return v;
        };
        h = p.checkpointed[b] ? e.checkpoint(block) : block();
    }
    const lazy::Tensor loss = e.mean(e.mul(h, h));
    e.backward(loss);
    std::vector<std::vector<float>> reads{e.read(loss)};
    for (const lazy::Tensor& t : w) {
        const lazy::Tensor g = e.grad(t);
        reads.push_back(g.valid() ? e.read(g) : std::vector<float>{});
    }
    e.mark_step();
    reads.push_back(e.read(e.rand({4})));
    return reads;
}

// The LazyFailure fn throws, or a test failure.
std::optional<Failure> failure_of(const std::function<void()>& fn) {
    return test::capture_failure(fn);
}

} // namespace

class TestLazyCheckpoint : public QObject {
    Q_OBJECT
  private slots:
    // The same loss and every gradient bit for bit, lazy and eager; each replay makes the ops
    // the saved values need (matmul, tanh and sigmoid: the block's last mul saves nothing of
    // its own), and the bytes live at once fall, the arena our planner gives the step with
    // them: the blocks' saved values are not kept from the forward to the backward. (The
    // pool's bytes rise: it reuses a released buffer only once the step ends, section 6, so
    // the replays' buffers add to it within the step.)
    void gradientsAreBitIdenticalWithLessMemory() {
        const Run plain = train_step(false, false);
        const Run checkpointed = train_step(true, false);
        QCOMPARE(checkpointed.loss, plain.loss);
        QCOMPARE(checkpointed.grads, plain.grads);
        QCOMPARE(train_step(true, false, EngineOptions{.eager = true}).grads, plain.grads);
        QCOMPARE(plain.stats.checkpoints, uint64_t(0));
        QCOMPARE(plain.stats.recomputed_ops, uint64_t(0));
        QCOMPARE(checkpointed.stats.checkpoints, uint64_t(kLayers));
        QCOMPARE(checkpointed.stats.recomputed_ops, uint64_t(3 * kLayers));
        qInfo("pool peak %llu -> %llu bytes, planned peak %llu -> %llu",
              (unsigned long long)plain.stats.pool_peak_bytes,
              (unsigned long long)checkpointed.stats.pool_peak_bytes,
              (unsigned long long)plain.stats.planned_peak_bytes,
              (unsigned long long)checkpointed.stats.planned_peak_bytes);
        QVERIFY(checkpointed.stats.planned_peak_bytes < plain.stats.planned_peak_bytes);
    }

    // The trace names each replayed op and says why it runs again.
    void replayedOpsSayWhy() {
        Engine e;
        const lazy::Tensor w = e.parameter({4, 4}, values(2, 16, 0.5f), "w");
        e.set_site("block");
        const lazy::Tensor h = e.checkpoint([&] { return e.tanh(e.matmul(w, w)); });
        e.backward(e.sum(h));
        e.mark_step();
        // tanh saved its output: the replay makes the matmul and the tanh again (the matmul's
        // own saves are w, a value the body read).
        QStringList replayed;
        for (const TraceEvent& ev : e.trace().events)
            if (ev.detail.rfind("recompute of the body begun at block", 0) == 0) {
                QVERIFY(event_rule(ev).starts_with("checkpoint replay (10)"));
                replayed << QString::fromStdString(ev.op);
            }
        QCOMPARE(replayed, (QStringList{"matmul", "tanh"}));
    }

    // Dropout inside the blocks: the replay draws with the forward's keys, so the gradients
    // match, and it reserves no draw nonce, so the next draw after backward is the one an
    // uncheckpointed run makes (11.7's net effect).
    void drawsReplayWithTheirOwnKeys() {
        const Run plain = train_step(false, true);
        const Run checkpointed = train_step(true, true);
        QCOMPARE(checkpointed.grads, plain.grads);
        QCOMPARE(checkpointed.next_draw, plain.next_draw);
        QVERIFY(train_step(false, false).grads != plain.grads); // the dropout did something
    }

    // The Keep policy runs bodies plainly: same results, nothing checkpointed.
    void keepPolicyRunsBodiesPlainly() {
        const Run kept =
            train_step(true, false, EngineOptions{.checkpoint = CheckpointPolicy::Keep});
        QCOMPARE(kept.grads, train_step(false, false).grads);
        QCOMPARE(kept.stats.checkpoints, uint64_t(0));
    }

    // The purity fence (10.5): a body that mutates persistent state fails when backward would
    // replay it, naming the rule, the mutation and where the body began.
    void impureBodyFailsAtReplay() {
        Engine e;
        const lazy::Tensor w = e.parameter({4, 4}, values(1, 16, 0.5f), "w");
        const lazy::Tensor count = e.full({}, 0.0f, "count");
        e.set_site("body");
        const lazy::Tensor h = e.checkpoint([&] {
            e.add_(count, e.full({}, 1.0f));
            return e.tanh(e.matmul(w, w));
        });
        e.set_site("backward");
        const auto f = failure_of([&] { e.backward(e.sum(h)); });
        QVERIFY(f);
        QVERIFY2(std::string(f->what()).find("CheckpointImpureRegionError") != std::string::npos,
                 f->what());
        QVERIFY2(std::string(f->what()).find("begun at body") != std::string::npos, f->what());
    }

    // Property: 200 random programs (random op chains, some blocks checkpointed, some with
    // dropout) read the same loss, grads and next draw bit for bit whether the blocks keep their
    // saved values or are replayed, lazy or eager.
    void randomProgramsReadTheSameUnderEveryPolicy() {
        for (uint64_t seed = 1; seed <= 200; ++seed) {
            const RandomProgram p = random_program(seed);
            const auto kept = run_random(p, seed, {.checkpoint = CheckpointPolicy::Keep});
            const auto replayed = run_random(p, seed, {});
            const auto eager = run_random(p, seed, {.eager = true});
            if (replayed != kept || eager != kept)
                QFAIL(qPrintable(QString("seed %1: the reads differ").arg(seed)));
        }
    }

    // Misuse: a checkpoint inside a body, and mark_step or backward inside one.
    void misuseIsNamed() {
        Engine e;
        const lazy::Tensor w = e.parameter({2, 2}, {1, 2, 3, 4}, "w");
        const auto nested = failure_of(
            [&] { (void)e.checkpoint([&] { return e.checkpoint([&] { return e.tanh(w); }); }); });
        QVERIFY(nested &&
                std::string(nested->what()).find("CheckpointReentrancyError") != std::string::npos);
        for (const char* what : {"mark_step", "backward"}) {
            const auto f = failure_of([&] {
                (void)e.checkpoint([&] {
                    const lazy::Tensor t = e.sum(e.tanh(w));
                    if (std::string(what) == "mark_step")
                        e.mark_step();
                    else
                        e.backward(t);
                    return t;
                });
            });
            QVERIFY(f && f->code() == FailureCode::InvalidArgument);
            QVERIFY2(f->message().find(std::string(what) + " inside the checkpointed body") !=
                         std::string::npos,
                     f->what());
        }
        // The engine goes on: a plain backward after the refused bodies works.
        e.backward(e.sum(e.tanh(w)));
        QCOMPARE(e.read(e.grad(w)).size(), size_t(4));
    }
};

QTEST_GUILESS_MAIN(TestLazyCheckpoint)
#include "test_lazy_checkpoint.moc"
