// Keyed random numbers in the token/effect engine (seed 004, section 11; issue 18 item 4): the
// generator against its published answers, the draws' range and independence, the same numbers
// whatever the forcing order, draw nonces in program order across steps, no merged draws, and
// dropout's mask reused by backward.
#include "core/failure.h"
#include "lazy/engine.h"
#include "lazy/keyed_rng.h"
#include "lazy/program.h"
#include "lazy/trace_state.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

// The values of two draws of shape [3, 5] after manual_seed(7), read in the given order
// (first u, or first v), on an engine in the given mode.
std::pair<std::vector<float>, std::vector<float>> two_draws(bool read_u_first, bool eager) {
    Engine e(EngineOptions{.eager = eager});
    e.manual_seed(7);
    const lazy::Tensor u = e.rand({3, 5});
    const lazy::Tensor v = e.rand({3, 5});
    std::vector<float> first = e.read(read_u_first ? u : v);
    std::vector<float> second = e.read(read_u_first ? v : u);
    return read_u_first ? std::pair{first, second} : std::pair{second, first};
}

std::vector<float> uniform(const RngKey& key, size_t n) {
    std::vector<float> out(n);
    fill_uniform(key, out);
    return out;
}

} // namespace

class TestLazyRng : public QObject {
    Q_OBJECT
  private slots:
    // Random123's known-answer vectors for Philox4x32-10 (counter, key, output).
    void philoxMatchesItsPublishedAnswers() {
        using C = std::array<uint32_t, 4>;
        QCOMPARE(philox4x32_10({0, 0, 0, 0}, {0, 0}),
                 (C{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
        QCOMPARE(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                               {0xffffffff, 0xffffffff}),
                 (C{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
        QCOMPARE(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                               {0xa4093822, 0x299f31d0}),
                 (C{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
    }

    // Every draw is a multiple of 2^-24 in [0, 1), the tenths of [0, 1) get a tenth of 100,000
    // draws each (within 4 standard deviations), element i does not depend on how many are
    // drawn, and each part of the key changes the numbers.
    void uniformDrawsAreExactAndSpread() {
        const RngKey key{7, 3, 0};
        const std::vector<float> u = uniform(key, 100'000);
        std::array<int, 10> tenths{};
        for (float x : u) {
            QVERIFY(x >= 0.0f && x < 1.0f);
            QCOMPARE(std::ldexp(x, 24), std::floor(std::ldexp(x, 24)));
            ++tenths[size_t(x * 10)];
        }
        for (int count : tenths)
            QVERIFY2(std::abs(count - 10'000) < 4 * 95, qPrintable(QString::number(count)));
        const std::vector<float> prefix = uniform(key, 7);
        QVERIFY(std::equal(prefix.begin(), prefix.end(), u.begin()));
        for (const RngKey& other : {RngKey{8, 3, 0}, RngKey{7, 4, 0}, RngKey{7, 3, 1},
                                    RngKey{7, 3 + (uint64_t(1) << 32), 0}}) {
            const std::vector<float> w = uniform(other, 64);
            QVERIFY(!std::equal(w.begin(), w.end(), u.begin()));
        }
    }

    // The same program draws the same numbers whichever value is read first, lazy or eager (the
    // draw nonces are reserved when the ops are recorded), and two draws of one shape are two
    // draws, never merged.
    void sameNumbersWhateverTheForcingOrder() {
        const auto reference = two_draws(true, false);
        QCOMPARE(two_draws(false, false), reference);
        QCOMPARE(two_draws(true, true), reference);
        QCOMPARE(two_draws(false, true), reference);
        QVERIFY(reference.first != reference.second);
        QCOMPARE(reference.first, uniform({7, 0, 0}, 15));
        QCOMPARE(reference.second, uniform({7, 1, 0}, 15));
    }

    // Draw nonces go on across mark_step (the RNG state is persistent), manual_seed restarts
    // them, and the trace names each draw's key and why its place does not matter.
    void drawNoncesFollowTheProgramAcrossSteps() {
        Engine e;
        e.manual_seed(11);
        const std::vector<float> first = e.read(e.rand({8}));
        e.mark_step();
        const std::vector<float> after_step = e.read(e.rand({8}));
        QCOMPARE(after_step, uniform({11, 1, 0}, 8));
        e.manual_seed(11);
        QCOMPARE(e.read(e.rand({8})), first);
        int draws = 0;
        for (const TraceEvent& ev : e.trace().events)
            if (ev.op == "rand_uniform") {
                QCOMPARE(QString::fromStdString(ev.detail),
                         QString("philox4x32-10 seed 11 draw %1 op 0").arg(draws == 1 ? 1 : 0));
                QVERIFY(event_rule(ev).starts_with("keyed random draw"));
                ++draws;
            }
        QCOMPARE(draws, 3);
    }

    // Inverted dropout: kept elements scaled by 1 / (1 - p), about 1 - p of them kept, and
    // backward scales the gradient by the forward's own mask (no second draw: the draw nonces
    // after backward are where the forward left them).
    void dropoutReusesItsMaskInBackward() {
        Engine e;
        e.manual_seed(3);
        const float p = 0.25f;
        const lazy::Tensor x = e.parameter({64, 64}, std::vector<float>(64 * 64, 1.0f), "x");
        const lazy::Tensor d = e.dropout(x, p);
        e.backward(e.sum(d));
        const std::vector<float> out = e.read(d);
        const std::vector<float> grad = e.read(e.grad(x));
        QCOMPARE(grad, out); // x is all ones: d = mask / (1 - p) = d(sum)/dx
        const auto kept = std::count(out.begin(), out.end(), 1.0f / (1.0f - p));
        QCOMPARE(kept + std::count(out.begin(), out.end(), 0.0f), qsizetype(out.size()));
        QVERIFY2(std::abs(double(kept) / double(out.size()) - 0.75) < 0.03,
                 qPrintable(QString::number(kept)));
        QCOMPARE(e.read(e.rand({4})), uniform({3, 1, 0}, 4));
        for (float bad : {-0.1f, 1.0f, std::nanf("")}) {
            const auto f = test::capture_failure([&] { (void)e.dropout(x, bad); });
            QVERIFY(f && f->code() == FailureCode::InvalidArgument);
            QVERIFY2(f->message().find("dropout probability") != std::string::npos, f->what());
        }
    }

    // The program format drives the same ops: manual_seed, rand and dropout, and a run gives
    // the same reads and trace hash every time, eager reads equal to lazy ones.
    void programsDrawTheSameNumbers() {
        const LazyProgram p = parse_lazy_program(
            R"({"format": "tmmu-lazy-program", "version": 1, "program": [
                {"manual_seed": 7},
                {"let": "x", "tensor": {"shape": [2, 4], "arange": true}},
                {"let": "u", "op": "rand", "args": [], "shape": [2, 4]},
                {"let": "d", "op": "dropout", "args": ["x"], "p": 0.5},
                {"read": ["d", "u"]}]})",
            "rng.json");
        const ProgramRun lazy = run_lazy_program(p);
        QCOMPARE(lazy.reads.at(1).values, uniform({7, 0, 0}, 8));
        const std::vector<float> mask = uniform({7, 1, 0}, 8);
        for (size_t i = 0; i < 8; ++i)
            QCOMPARE(lazy.reads.at(0).values[i], mask[i] > 0.5f ? float(i) * 2.0f : 0.0f);
        QCOMPARE(run_lazy_program(p).trace_hash, lazy.trace_hash);
        const ProgramRun eager = run_lazy_program(p, EngineOptions{.eager = true});
        for (size_t r = 0; r < 2; ++r)
            QCOMPARE(eager.reads.at(r).values, lazy.reads.at(r).values);
    }
};

QTEST_GUILESS_MAIN(TestLazyRng)
#include "test_lazy_rng.moc"
