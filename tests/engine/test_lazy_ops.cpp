// Seed 004 15.1's elementwise ops beyond the first set (gelu, silu, abs, rsqrt, sin, cos, floor,
// ceil, round; minimum, pow and the comparisons): values against double references, gradients
// against central differences, ties of maximum/minimum split evenly, zero gradients where the op is
// piecewise constant, and fused (compiled) chains giving the unfused bits.
#include "lazy/engine.h"
#include "lazy/program.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

using tmmu::FailureCode;
using namespace tmmu::lazy;
using Tensor = tmmu::lazy::Tensor;

namespace {

using Ref1 = std::function<double(double)>;
using Ref2 = std::function<double(double, double)>;

struct Unary {
    const char* name;
    Ref1 ref;
    bool smooth; // differentiable at the test points (else its gradient is 0)
};

double gelu(double x) {
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

const Unary kUnary[] = {
    {"abs", [](double x) { return std::fabs(x); }, true},
    {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, true},
    {"sin", [](double x) { return std::sin(x); }, true},
    {"cos", [](double x) { return std::cos(x); }, true},
    {"floor", [](double x) { return std::floor(x); }, false},
    {"ceil", [](double x) { return std::ceil(x); }, false},
    {"round", [](double x) { return std::nearbyint(x); }, false},
    {"gelu", gelu, true},
    {"silu", [](double x) { return x / (1.0 + std::exp(-x)); }, true},
};

struct Binary {
    const char* name;
    Ref2 ref;
    bool smooth;
};

const Binary kBinary[] = {
    {"minimum", [](double a, double b) { return a < b ? a : b; }, true},
    {"pow", [](double a, double b) { return std::pow(a, b); }, true},
    {"eq", [](double a, double b) { return a == b ? 1.0 : 0.0; }, false},
    {"ne", [](double a, double b) { return a != b ? 1.0 : 0.0; }, false},
    {"lt", [](double a, double b) { return a < b ? 1.0 : 0.0; }, false},
    {"le", [](double a, double b) { return a <= b ? 1.0 : 0.0; }, false},
    {"gt", [](double a, double b) { return a > b ? 1.0 : 0.0; }, false},
    {"ge", [](double a, double b) { return a >= b ? 1.0 : 0.0; }, false},
};

// Positive, away from integers and half-integers (floor, round) and from 0 (abs): every op is
// defined and smooth or flat around each point.
const std::vector<float> kX = {0.3f, 0.7f, 1.2f, 1.9f, 2.6f, 3.3f};
const std::vector<float> kY = {0.7f, 0.7f, 1.1f, 2.5f, 2.6f, 1.4f};

bool close(double got, double want, double tolerance) {
    return std::abs(got - want) <= tolerance * (1.0 + std::abs(want));
}

} // namespace

class TestLazyOps : public QObject {
    Q_OBJECT

  private slots:
    void valuesMatchDoubleReferences() {
        Engine e;
        const Tensor x = e.constant({6}, kX), y = e.constant({6}, kY);
        for (const Unary& u : kUnary) {
            const std::vector<float> got = e.read(e.unary(u.name, x));
            for (size_t i = 0; i < kX.size(); ++i)
                QVERIFY2(close(got[i], u.ref(kX[i]), 1e-6), u.name);
        }
        const Tensor negative = e.constant({3}, {-1.5f, -0.2f, 2.5f});
        QCOMPARE(e.read(e.unary("abs", negative)), (std::vector<float>{1.5f, 0.2f, 2.5f}));
        QCOMPARE(e.read(e.unary("round", negative)), (std::vector<float>{-2.0f, -0.0f, 2.0f}));
        for (const Binary& b : kBinary) {
            const std::vector<float> got = e.read(e.binary(b.name, x, y));
            for (size_t i = 0; i < kX.size(); ++i)
                QVERIFY2(close(got[i], b.ref(kX[i], kY[i]), 1e-6), b.name);
        }
        // Broadcasting a 0-d operand, as every binary op does.
        QCOMPARE(e.read(e.binary("ge", x, e.full({}, 1.2f))),
                 (std::vector<float>{0, 0, 1, 1, 1, 1}));
    }

    void gradientsMatchCentralDifferences() {
        const double h = 1e-4;
        for (const Unary& u : kUnary) {
            Engine e;
            const Tensor x = e.parameter({6}, kX, "x");
            e.backward(e.sum(e.unary(u.name, x)));
            const std::vector<float> g = e.read(e.grad(x));
            for (size_t i = 0; i < kX.size(); ++i) {
                const double want =
                    u.smooth ? (u.ref(kX[i] + h) - u.ref(kX[i] - h)) / (2 * h) : 0.0;
                QVERIFY2(close(g[i], want, 1e-3), qPrintable(QString("%1 at %2: %3, want %4")
                                                                 .arg(u.name)
                                                                 .arg(kX[i])
                                                                 .arg(g[i])
                                                                 .arg(want)));
            }
        }
        for (const Binary& b : kBinary) {
            if (!b.smooth) continue; // comparisons record no gradient (tested below)
            Engine e;
            const Tensor x = e.parameter({6}, kX, "x"), y = e.parameter({6}, kY, "y");
            e.backward(e.sum(e.binary(b.name, x, y)));
            const std::vector<float> gx = e.read(e.grad(x)), gy = e.read(e.grad(y));
            for (size_t i = 0; i < kX.size(); ++i) {
                const double a = kX[i], c = kY[i];
                // minimum at a tie (0.7, 0.7) gives each operand half the gradient (PyTorch).
                const bool tie = std::string_view(b.name) == "minimum" && a == c;
                const double wx = tie ? 0.5 : (b.ref(a + h, c) - b.ref(a - h, c)) / (2 * h);
                const double wy = tie ? 0.5 : (b.ref(a, c + h) - b.ref(a, c - h)) / (2 * h);
                QVERIFY2(close(gx[i], wx, 1e-3) && close(gy[i], wy, 1e-3),
                         qPrintable(QString("%1 at (%2, %3): %4 %5, want %6 %7")
                                        .arg(b.name)
                                        .arg(a)
                                        .arg(c)
                                        .arg(gx[i])
                                        .arg(gy[i])
                                        .arg(wx)
                                        .arg(wy)));
            }
        }
    }

    // Where the formulas meet 0 * inf, PyTorch's zeros: pow's base gradient for exponent 0, its
    // exponent gradient for base 0 (exponent >= 0); a negative base has no real log.
    void powGradientsAtZeroAreZero() {
        Engine e;
        const Tensor x = e.parameter({4}, {0.0f, 0.0f, 2.0f, -2.0f}, "x");
        const Tensor y = e.parameter({4}, {0.0f, 2.0f, 0.0f, 2.0f}, "y");
        e.backward(e.sum(e.binary("pow", x, y)));
        QCOMPARE(e.read(e.grad(x)), (std::vector<float>{0.0f, 0.0f, 0.0f, -4.0f}));
        const std::vector<float> gy = e.read(e.grad(y));
        QCOMPARE(gy[0], 0.0f);
        QCOMPARE(gy[1], 0.0f);
        QVERIFY(close(gy[2], std::log(2.0), 1e-6));
        QVERIFY(std::isnan(gy[3]));
    }

    // maximum and minimum split a tie's gradient evenly, as PyTorch does, also when one operand
    // broadcasts (its gradient sums the halves it won).
    void maximumAndMinimumSplitTies() {
        for (const char* op : {"maximum", "minimum"}) {
            Engine e;
            const Tensor x = e.parameter({4}, {1.0f, 2.0f, 3.0f, 2.0f}, "x");
            const Tensor y = e.parameter({}, {2.0f}, "y");
            e.backward(e.sum(e.binary(op, x, y)));
            const bool max = std::string_view(op) == "maximum";
            QCOMPARE(e.read(e.grad(x)), max ? (std::vector<float>{0.0f, 0.5f, 1.0f, 0.5f})
                                            : (std::vector<float>{1.0f, 0.5f, 0.0f, 0.5f}));
            QCOMPARE(e.read(e.grad(y)), (std::vector<float>{2.0f}));
        }
        // A NaN operand: the kernels choose b, and b's gradient is all of it.
        Engine e;
        const Tensor x = e.parameter({2}, {std::nanf(""), 1.0f}, "x");
        const Tensor y = e.parameter({2}, {2.0f, std::nanf("")}, "y");
        e.backward(e.sum(e.binary("maximum", x, y)));
        QCOMPARE(e.read(e.grad(x)), (std::vector<float>{0.0f, 0.0f}));
        QCOMPARE(e.read(e.grad(y)), (std::vector<float>{1.0f, 1.0f}));
    }

    // floor, ceil and round pass zeros even when the gradient reaching them is infinite;
    // comparisons record no gradient at all.
    void piecewiseConstantOpsPassNoGradient() {
        Engine e;
        const Tensor x = e.parameter({2}, {0.5f, 1.5f}, "x");
        e.backward(e.sum(e.unary("rsqrt", e.unary("floor", x)))); // rsqrt(0)' is -inf
        QCOMPARE(e.read(e.grad(x)), (std::vector<float>{0.0f, 0.0f}));
        Engine f;
        const Tensor w = f.parameter({3}, {1.0f, -2.0f, 3.0f}, "w");
        const Tensor above = f.binary("gt", w, f.full({}, 0.0f));
        const auto refused = tmmu::test::capture_failure([&] { f.backward(f.sum(above)); });
        QVERIFY2(refused && std::string(refused->what()).find("does not require grad") !=
                                std::string::npos,
                 refused ? refused->what() : "backward ran");
        f.backward(f.sum(f.mul(above, w)));
        QCOMPARE(f.read(f.grad(w)), (std::vector<float>{1.0f, 0.0f, 1.0f}));
    }

    // A fused chain of the new ops (15.1) reads the unfused bits.
    void fusedChainsGiveTheUnfusedBits() {
        auto run = [](bool compiled) {
            Engine e;
            const Tensor x = e.constant({6}, kX), y = e.constant({6}, kY);
            auto body = [&e](std::span<const Tensor> a) {
                const Tensor t = e.unary("gelu", e.binary("minimum", a[0], a[1]));
                return std::vector{e.binary("pow", e.unary("silu", t), e.unary("cos", a[1]))};
            };
            if (!compiled) return e.read(body(std::vector{x, y})[0]);
            const CompiledFn f = e.compile(body, "chain");
            const std::vector<Tensor> args{x, y};
            const std::vector<float> out = e.read(e.call(f, args)[0]);
            const auto& events = e.trace().events;
            if (std::none_of(events.begin(), events.end(),
                             [](const TraceEvent& ev) { return ev.op == "fused"; }))
                return std::vector<float>{}; // not fused: the comparison below fails
            return out;
        };
        const std::vector<float> plain = run(false), fused = run(true);
        QCOMPARE(fused.size(), plain.size());
        QVERIFY(std::memcmp(fused.data(), plain.data(), plain.size() * sizeof(float)) == 0);
    }

    // Programs name the ops as the engine does; a number stands for a 0-d operand.
    void programsRunTheNewOps() {
        const LazyProgram p = parse_lazy_program(R"json({
          "format": "tmmu-lazy-program", "version": 1, "name": "ops",
          "program": [
            {"let": "x", "tensor": {"shape": [3], "values": [0.5, 2.0, 4.0]}},
            {"let": "p", "op": "pow", "args": ["x", 2]},
            {"let": "big", "op": "ge", "args": ["p", 4]},
            {"let": "r", "op": "rsqrt", "args": ["x"]},
            {"read": ["p", "big", "r"]}
          ]})json",
                                                 "ops.json");
        const ProgramRun run = run_lazy_program(p);
        QCOMPARE(run.reads.size(), size_t(3));
        QCOMPARE(run.reads[0].values, (std::vector<float>{0.25f, 4.0f, 16.0f}));
        QCOMPARE(run.reads[1].values, (std::vector<float>{0.0f, 1.0f, 1.0f}));
        QCOMPARE(run.reads[2].values,
                 (std::vector<float>{1.0f / std::sqrt(0.5f), 1.0f / std::sqrt(2.0f), 0.5f}));
    }

    void unknownNamesAndArityAreRefused() {
        Engine e;
        const Tensor x = e.constant({2}, {1.0f, 2.0f});
        TMMU_EXPECT_FAILURE(e.unary("pow", x), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(e.unary("step", x), FailureCode::InvalidArgument); // autograd's
        TMMU_EXPECT_FAILURE(e.binary("gelu", x, x), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(e.unary("erf", x), FailureCode::InvalidArgument);
    }
};

QTEST_GUILESS_MAIN(TestLazyOps)
#include "test_lazy_ops.moc"
