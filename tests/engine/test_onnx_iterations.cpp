// ONNX models run over iterations of their symbolic dimensions (issue 15): which axes follow
// which dimension, bindings where the model is built otherwise or does not hold, dimensions at
// the model's limit, and runs checked against the model loaded at each binding.
#include "onnx/onnx_loader.h"
#include "onnx_models.h"
#include "plan/plan_summary.h"
#include "plan/replan.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;
using test::first_dimension;
using test::OnnxModelBuilder;
using test::run_over;
using test::set_int;
using test::set_ints;
using test::tensor_named;
using test::write_shape_chain;
namespace lib = ::onnx;

class TestOnnxIterations : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

    // Loading `file` to run over `iteration` from `asked` is refused as INVALID_IR_SHAPES with
    // a message that says `text` (and not `absent`, when given).
    void expectRefused(const std::string& file, const ModelRequest& asked,
                       const DimBinding& iteration, const std::string& text,
                       const char* absent = nullptr) {
        const auto f = test::capture_failure(
            [&] { (void)load_model(file, request_over_iterations(asked, {iteration})); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find(text) != std::string::npos, f->what());
        if (absent) QVERIFY2(f->message().find(absent) == std::string::npos, f->what());
    }

    // run_over is refused as INVALID_IR_SHAPES with a message that says `text`.
    void expectRunRefused(const std::string& file, const ModelRequest& asked,
                          const std::vector<DimBinding>& iterations, const std::string& text) {
        const auto f = test::capture_failure([&] { (void)run_over(file, asked, iterations); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find(text) != std::string::npos, f->what());
    }

    // larger.onnx: y has max(N, S) rows (a constant of that shape), h = s[:N] min(N, S).
    void writeLarger() {
        OnnxModelBuilder b(13, "larger");
        b.input("x", {"N", "64"});
        b.input("s", {"S", "64"});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        first_dimension(b, "x", "xs", "n");
        first_dimension(b, "s", "ss", "sv");
        b.node("Slice", {"s", "zero", "n", "zero"}, {"head"}); // min(N, S) rows
        b.node("Relu", {"head"}, {"h"});
        first_dimension(b, "head", "hs", "least");
        b.node("Add", {"n", "sv"}, {"sum"});
        b.node("Sub", {"sum", "least"}, {"most"}); // max(N, S)
        b.node("ConstantOfShape", {"most"}, {"c"});
        b.node("Relu", {"c"}, {"y"});
        b.output("y", {"?"});
        b.output("h", {"?", "64"});
        b.save(path("larger.onnx"));
    }

  private slots:
    // Older Hugging Face exports view the positions by the sequence length
    // (position_ids.unsqueeze(0).view(-1, seq)), and read the shape of what they feed again.
    // At batch 1 inference closed that shape a round sooner than at batch 2, so Shape(h) was
    // folded at one binding and computed at the other, and the probes found other tensors. Folded
    // in one pass, the model is built alike at every binding and runs over them.
    void positionsViewedBySequenceLengthVaryOverIterations() {
        OnnxModelBuilder b(14, "position_view");
        b.input("input_ids", {"batch", "seq"}, lib::TensorProto_DataType_INT64);
        b.float_initializer("wpe", {128, 8});
        b.float_initializer("wte", {100, 8});
        for (const auto& [name, value] :
             {std::pair{"zero", 0}, {"one", 1}, {"two", 2}, {"last", -1}})
            b.int64_initializer(name, {}, {value});
        b.int64_initializer("axis0", {1}, {0});
        b.int64_initializer("rest", {1}, {-1});
        b.node("Shape", {"input_ids"}, {"ids_shape"});
        set_int(b.node("Gather", {"ids_shape", "last"}, {"length"}), "axis", 0);
        b.node("Range", {"zero", "length", "one"}, {"positions"});
        b.node("Unsqueeze", {"positions", "axis0"}, {"positions_row"});
        b.node("Unsqueeze", {"length", "axis0"}, {"length_1"});
        set_int(b.node("Concat", {"rest", "length_1"}, {"view"}), "axis", 0);
        b.node("Reshape", {"positions_row", "view"}, {"position_ids"});
        b.node("Gather", {"wpe", "position_ids"}, {"pe"});
        b.node("Gather", {"wte", "input_ids"}, {"te"});
        b.node("Add", {"te", "pe"}, {"h"});
        b.node("Shape", {"h"}, {"h_shape"});
        std::vector<std::string> parts;
        for (const auto& [from, index] :
             {std::pair{"ids_shape", "zero"}, {"ids_shape", "one"}, {"h_shape", "two"}}) {
            const std::string part = from + std::string("_") + index;
            set_int(b.node("Gather", {from, index}, {part + "_scalar"}), "axis", 0);
            b.node("Unsqueeze", {part + "_scalar", "axis0"}, {part});
            parts.push_back(part);
        }
        set_int(b.node("Concat", parts, {"out_shape"}), "axis", 0);
        b.node("Reshape", {"h", "out_shape"}, {"out"});
        b.output("out", {"batch", "seq", "8"});
        b.save(path("position_view.onnx"));
        ModelRequest asked;
        asked.dims = {{"batch", 1}, {"seq", 16}};
        const ShapeScheduleRun run = run_over(path("position_view.onnx"), asked,
                                              {{{"batch", 2}}, {{"batch", 4}, {"seq", 8}}});
        QCOMPARE(run.iterations.size(), size_t(2));
        QCOMPARE(run.plan.dims, (DimBinding{{"batch", 4}, {"seq", 16}}));
        ModelRequest top;
        top.dims = run.plan.dims;
        QCOMPARE(plan_totals(run.plan).peak_bytes,
                 plan_totals(plan_model(load_model(path("position_view.onnx"), top),
                                        Mode::Inference, {}, {}))
                     .peak_bytes);
    }

    // For a run over iterations the dimensions --dim binds by name become dynamic, up to the
    // largest asked for: bound anywhere, every tensor has the shape of the model loaded there,
    // and a run replans at the safepoint as an IR graph's does.
    void symbolicDimensionsVaryOverIterations() {
        write_shape_chain(path("chain.onnx"));
        ModelRequest asked;
        asked.mode = Mode::Inference;
        asked.dims["N"] = 2;
        const ModelRequest r = request_over_iterations(asked, {{{"N", 1}}, {{"N", 5}}});
        QCOMPARE(r.max_dims, (std::map<std::string, int64_t>{{"N", 5}}));
        const LoadedModel m = load_model(path("chain.onnx"), r);
        const Graph& g = *m.graph;
        QCOMPARE(g.dims.size(), size_t(1));
        QCOMPARE(g.dims[0].name, std::string("N"));
        QCOMPARE(g.dims[0].max, int64_t(5));
        QCOMPARE(g.replan_policy, ReplanPolicy::ReplanAtSafepoint);
        QVERIFY(g.tensors[g.find_tensor("z")].dynamic());
        QVERIFY(!g.tensors[g.find_tensor("target")].dynamic()); // a shape of 2 values, always
        for (int64_t n : {1, 3, 5}) {
            const Graph bound = bound_at(g, {{"N", n}}, "test");
            ModelRequest fixed;
            fixed.dims["N"] = n;
            const Graph loaded = *load_model(path("chain.onnx"), fixed).graph;
            for (size_t t = 0; t < g.tensors.size(); ++t)
                QVERIFY2(bound.tensors[t].shape == loaded.tensors[t].shape,
                         g.tensors[t].id.c_str());
        }
        const Plan first = plan_model(m, Mode::Inference, {}, {});
        const ShapeScheduleRun run = run_shape_schedule(*m.graph, first, Mode::Inference, {},
                                                        {{{"N", 1}}, {{"N", 5}}}, nullptr, {});
        QVERIFY(!run.iterations[0].replanned);
        QVERIFY(run.iterations[1].replanned);
        QCOMPARE(run.plan.dims, (DimBinding{{"N", 5}}));
        ModelRequest at5;
        at5.dims["N"] = 5;
        QCOMPARE(
            run.iterations[1].peak_bytes,
            plan_totals(plan_model(load_model(path("chain.onnx"), at5), Mode::Inference, {}, {}))
                .peak_bytes);
        // A model asked no larger keeps the binding as its envelope's top.
        QCOMPARE(load_model(path("chain.onnx"), request_over_iterations(asked, {{{"N", 1}}}))
                     .graph->dims[0]
                     .max,
                 int64_t(2));
    }

    // A Reshape that flattens makes axes that are products of dimensions (4*N*S, N*S): they
    // vary, named so, and a replan binds them to their sizes there. An axis that moves
    // otherwise (N+1 after a Pad) or is not a multiple of its dimensions' product (N*S/2) is
    // refused, naming the tensor.
    void axesThatAreProductsOfDimensionsVary() {
        OnnxModelBuilder b(13, "flatten");
        b.input("x", {"N", "S", "4"});
        b.int64_initializer("flat", {1}, {-1});
        b.int64_initializer("rows", {2}, {-1, 4});
        b.node("Reshape", {"x", "flat"}, {"y"});
        b.node("Relu", {"y"}, {"z"});
        b.node("Reshape", {"x", "rows"}, {"r"});
        b.node("Relu", {"r"}, {"q"});
        b.output("z", {"M"});
        b.output("q", {"?", "4"});
        b.save(path("flat.onnx"));
        ModelRequest asked;
        asked.dims = {{"N", 2}, {"S", 3}};
        const LoadedModel m =
            load_model(path("flat.onnx"), request_over_iterations(asked, {{{"N", 5}, {"S", 7}}}));
        const Graph& g = *m.graph;
        const auto names = [&](const char* id) {
            return m.annotations.dim_names[g.find_tensor(id)];
        };
        QCOMPARE(names("z"), std::vector<std::string>{"4*N*S"});
        QCOMPARE(names("q"), (std::vector<std::string>{"N*S", ""}));
        QCOMPARE(tensor_named(g, "q").shape, (std::vector<int64_t>{6, 4}));
        const Graph replanned = bound_at(g, {{"N", 5}, {"S", 7}}, "--dim");
        QCOMPARE(tensor_named(replanned, "z").shape, std::vector<int64_t>{140});
        QCOMPARE(tensor_named(replanned, "q").shape, (std::vector<int64_t>{35, 4}));
        QCOMPARE(tensor_named(replanned, "z").bytes, uint64_t(140 * 4));

        OnnxModelBuilder pad(13, "pad");
        pad.input("x", {"N", "4"});
        pad.int64_initializer("pads", {4}, {0, 0, 1, 0});
        pad.node("Pad", {"x", "pads"}, {"y"});
        pad.output("y", {"?", "4"});
        pad.save(path("pad.onnx"));
        asked.dims = {{"N", 2}};
        QVERIFY(load_model(path("pad.onnx"), asked).graph->dims.empty()); // fixed: loads
        expectRefused(path("pad.onnx"), asked, {{"N", 3}},
                      "axis 0 of tensor 'y' is 3 at N=2 and 4 at N=3: it follows N other than as "
                      "a factor");

        OnnxModelBuilder half(13, "half");
        half.input("x", {"N", "S", "4"});
        half.int64_initializer("pairs", {2}, {-1, 8});
        half.node("Reshape", {"x", "pairs"}, {"y"});
        half.node("Relu", {"y"}, {"z"});
        half.output("z", {"?", "8"});
        half.save(path("half.onnx"));
        asked.dims = {{"N", 2}, {"S", 2}};
        expectRefused(path("half.onnx"), asked, {{"N", 4}, {"S", 4}},
                      "axis 0 of tensor 'y' is 2 at N=2, S=2: it scales with each of N, S, but "
                      "is not a multiple of their product");

        // A torch export may name a dimension by an expression: it binds, but cannot vary.
        OnnxModelBuilder star(13, "star");
        star.input("x", {"s0*s1", "8"});
        star.node("Relu", {"x"}, {"y"});
        star.output("y", {"s0*s1", "8"});
        star.save(path("star.onnx"));
        asked.dims = {{"s0*s1", 4}};
        QCOMPARE(load_model(path("star.onnx"), asked).graph->tensors[0].shape,
                 (std::vector<int64_t>{4, 8}));
        const auto f = test::capture_failure([&] {
            (void)load_model(path("star.onnx"), request_over_iterations(asked, {{{"s0*s1", 8}}}));
        });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
        QCOMPARE(f->where(), std::string("--dim s0*s1"));
        QVERIFY2(f->message().find("'s0*s1' cannot vary over iterations: dimension name 's0*s1' "
                                   "holds '*'") != std::string::npos,
                 f->what());
    }

    // Aliasing that the loader decides by sizes may differ at other values (an in-place add
    // over a broadcast [1, 64] operand at N=1 only); a dimension a whole input shape fixes
    // moves nothing. Both are refused, saying so.
    void bindingsWhereTheModelIsBuiltOtherwiseAreRefused() {
        OnnxModelBuilder b(13, "broadcast_add");
        b.input("x", {"N", "64"});
        b.float_initializer("p", {1, 64});
        b.node("Relu", {"p"}, {"a"});
        b.node("Relu", {"x"}, {"c"});
        b.node("Add", {"a", "c"}, {"z"});
        b.output("z", {"N", "64"});
        b.save(path("bcast.onnx"));
        ModelRequest asked;
        asked.dims["N"] = 1;
        expectRefused(path("bcast.onnx"), asked, {{"N", 4}},
                      "differs at N=2 from N=1: it shares bytes with other tensors "
                      "otherwise");
        asked.dims["N"] = 2; // the same aliasing at every N from 2
        QCOMPARE(load_model(path("bcast.onnx"), request_over_iterations(asked, {{{"N", 4}}}))
                     .graph->dims.size(),
                 size_t(1));

        test::write_symbolic_relu(path("relu.onnx"));
        asked.input_shapes["x"] = {4, 64};
        expectRefused(path("relu.onnx"), asked, {{"N", 8}}, "no tensor's shape follows N");
    }

    // A dimension the model ties to another (x[N] + y[M] needs N = M) or to one value (a
    // Squeeze of N needs N = 1) cannot vary on its own: refused as such, not as a dimension
    // left unbound (which would open the dims dialog asking for what was given).
    void tiedDimensionsAreRefusedAsTied() {
        // K is bound at the same value but free, and P and Q are tied to each other only:
        // neither is named.
        OnnxModelBuilder nm(13, "tied");
        nm.input("x", {"N", "64"});
        nm.input("y", {"M", "64"});
        nm.input("k", {"K", "64"});
        nm.input("p", {"P", "64"});
        nm.input("q", {"Q", "64"});
        nm.node("Add", {"x", "y"}, {"z"});
        nm.node("Relu", {"k"}, {"r"});
        nm.node("Add", {"p", "q"}, {"s"});
        nm.output("z", {"N", "64"});
        nm.output("r", {"K", "64"});
        nm.output("s", {"P", "64"});
        nm.save(path("tied.onnx"));
        ModelRequest asked;
        asked.dims = {{"K", 2}, {"M", 2}, {"N", 2}, {"P", 2}, {"Q", 2}};
        QCOMPARE(load_model(path("tied.onnx"), asked).graph->tensors.size(), size_t(8));
        expectRefused(path("tied.onnx"), asked, {{"M", 4}},
                      "M must stay equal to N: the model holds with them moved "
                      "together, not with M moved alone (at K=2, M=3, N=2, P=2, Q=2: node "
                      "'Add_1' (Add) does not hold for inputs of shapes [2, 64], "
                      "[3, 64]");
        // Three that must stay equal: named as a tie among them.
        OnnxModelBuilder three(13, "three");
        three.input("x", {"N", "64"});
        three.input("y", {"M", "64"});
        three.input("w", {"W", "64"});
        three.input("k", {"K", "64"});
        three.node("Add", {"x", "y"}, {"a"});
        three.node("Add", {"a", "w"}, {"z"});
        three.node("Relu", {"k"}, {"r"});
        three.output("z", {"N", "64"});
        three.output("r", {"K", "64"});
        three.save(path("three.onnx"));
        asked.dims = {{"K", 2}, {"M", 2}, {"N", 2}, {"W", 2}};
        expectRefused(path("three.onnx"), asked, {{"M", 4}},
                      "M is tied to some of N, W: the model holds with them all moved "
                      "together",
                      "bind them");

        OnnxModelBuilder sq(13, "squeeze");
        sq.input("x", {"N", "64"});
        sq.int64_initializer("axes", {1}, {0});
        sq.node("Squeeze", {"x", "axes"}, {"y"});
        sq.node("Relu", {"y"}, {"z"});
        sq.output("z", {"64"});
        sq.save(path("squeeze.onnx"));
        asked.dims = {{"N", 1}};
        expectRefused(path("squeeze.onnx"), asked, {{"N", 1}},
                      "N cannot move on its own from N=1: at N=2: node 'Squeeze_1' (Squeeze) does "
                      "not hold for inputs of shapes [2, 64], [1]");
    }

    // A model that holds up to a limit (a GPT-2's 128 positions: its causal mask is sliced to
    // the sequence, and one longer does not add up) is probed below a value where it does not
    // hold above it, so a run may start at the limit. Past the limit it is refused there.
    void dimensionsAtTheModelsLimitAreProbedBelowIt() {
        const auto write_limited = [&](const char* file, int64_t rows) {
            OnnxModelBuilder b(13, "limited");
            b.input("x", {"batch", "seq", "8"});
            b.float_initializer("table", {rows, 8});
            b.int64_initializer("zero", {1}, {0});
            b.int64_initializer("one", {1}, {1});
            b.int64_initializer("two", {1}, {2});
            b.node("Shape", {"x"}, {"x_shape"});
            b.node("Slice", {"x_shape", "one", "two"}, {"length"});
            b.node("Slice", {"table", "zero", "length", "zero"}, {"rows"});
            b.node("Add", {"x", "rows"}, {"h"});
            b.output("h", {"batch", "seq", "8"});
            b.save(path(file));
        };
        write_limited("limited.onnx", 16);
        ModelRequest asked;
        const std::vector<DimBinding> iterations{{{"seq", 8}}, {{"batch", 3}, {"seq", 12}}};
        // At 16 one above does not hold; at 15 one above does, the other values' three above
        // does not.
        for (const int64_t start : {16, 15}) {
            // (At batch=1, h is written in place of rows, of equal bytes there only.)
            asked.dims = {{"batch", 2}, {"seq", start}};
            const ShapeScheduleRun run = run_over(path("limited.onnx"), asked, iterations);
            QCOMPARE(run.plan.dims, (DimBinding{{"batch", 3}, {"seq", start}}));
            QCOMPARE(tensor_named(run.graph, "h").shape, (std::vector<int64_t>{3, start, 8}));
        }
        expectRefused(path("limited.onnx"), asked, {{"seq", 17}},
                      "the iterations go past what the model holds: at batch=2, seq=17: node "
                      "'Add_4' (Add) does not hold for inputs of shapes [2, 17, 8], [16, 8]");
        // Where the load fails past the limit stays where it is (a tensor's dim): z =
        // ConstantOfShape(min(16 - N, 1)) is [-1] at N=17.
        OnnxModelBuilder neg(13, "negative_past_16");
        neg.input("x", {"N", "4"});
        for (const auto& [name, value] : {std::pair{"zero", 0}, {"one", 1}, {"sixteen", 16}})
            neg.int64_initializer(name, {1}, {value});
        first_dimension(neg, "x", "xs", "n");
        neg.node("Sub", {"sixteen", "n"}, {"left"});
        neg.node("Min", {"left", "one"}, {"sizes"});
        neg.node("ConstantOfShape", {"sizes"}, {"z"});
        neg.node("Relu", {"x"}, {"y"});
        neg.output("z", {"?"});
        neg.output("y", {"N", "4"});
        neg.save(path("negative_past_16.onnx"));
        const auto f = test::capture_failure([&] {
            (void)load_model(path("negative_past_16.onnx"),
                             request_over_iterations({.dims = {{"N", 2}}}, {{{"N", 17}}}));
        });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("'z' dim 0"));
        QVERIFY2(f->message().starts_with("the iterations go past what the model holds: at N=17: "
                                          "dimension -1 is negative"),
                 f->what());
        // At 3, seq's own step below (three) would pass the lowest value a probe takes (2).
        write_limited("limited3.onnx", 3);
        asked.dims = {{"batch", 2}, {"seq", 3}};
        QCOMPARE(run_over(path("limited3.onnx"), asked, {{{"seq", 2}}}).plan.dims,
                 (DimBinding{{"batch", 2}, {"seq", 3}}));
    }

    // y = x[:S] has min(N, S) rows: S at N=4, S=2, where the probes mark it as following S; at
    // the largest values asked for (N=4, S=8) it is 4 rows, not 8, and the model is refused
    // there rather than planned as if it followed S everywhere.
    void axesThatFollowOtherDimensionsAtTheLargestValuesAreRefused() {
        OnnxModelBuilder b(13, "prefix");
        b.input("x", {"N", "64"});
        b.input("s", {"S", "64"});
        b.node("Shape", {"s"}, {"shape"});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        b.node("Slice", {"shape", "zero", "one"}, {"rows"});
        b.node("Slice", {"x", "zero", "rows", "zero"}, {"y"});
        b.node("Relu", {"y"}, {"w"});
        b.output("w", {"?", "64"});
        b.save(path("prefix.onnx"));
        ModelRequest asked;
        asked.dims = {{"N", 4}, {"S", 2}};
        QCOMPARE(load_model(path("prefix.onnx"), request_over_iterations(asked, {{{"S", 3}}}))
                     .graph->dims.size(),
                 size_t(2)); // S up to 3 < N: y follows S throughout
        expectRefused(path("prefix.onnx"), asked, {{"S", 8}},
                      "tensor 'y' is [4, 64] at N=4, S=8, where its axes that follow "
                      "dimensions say [8, 64]");
    }

    // An axis of max(N, S), S the larger at every probe, is taken as following S: a replan to
    // N=8, S=4 would plan it at 4 where the model has 8. Each binding a run plans or runs at
    // is checked against the model loaded there, and that one is refused; the other order
    // never plans where N > S, and runs.
    void replansAreCheckedAgainstTheModelLoadedThere() {
        writeLarger();
        ModelRequest asked;
        asked.dims = {{"N", 2}, {"S", 4}};
        const std::vector<DimBinding> n_first{{{"N", 8}}, {{"S", 8}}};
        const LoadedModel m =
            load_model(path("larger.onnx"), request_over_iterations(asked, n_first));
        QVERIFY(m.build_at);
        QVERIFY(tensor_named(*m.graph, "y").shape_dims.front() == AxisDims{{1}}); // taken as S
        const Plan first = plan_model(m, Mode::Inference, {}, {});
        const auto f = test::capture_failure([&] {
            (void)run_shape_schedule(*m.graph, first, Mode::Inference, {}, n_first, nullptr, {},
                                     m.build_at);
        });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("--iteration 0"));
        QVERIFY2(f->message().find("checking the plan at N=8, S=4 against the model loaded there: "
                                   "tensor 'c' is [8] there, where its axes that follow "
                                   "dimensions say [4]") != std::string::npos,
                 f->what());
        const ShapeScheduleRun run =
            run_shape_schedule(*m.graph, first, Mode::Inference, {}, {{{"S", 8}}, {{"N", 8}}},
                               nullptr, {}, m.build_at);
        QCOMPARE(run.plan.dims, (DimBinding{{"N", 8}, {"S", 8}}));
        QCOMPARE(tensor_named(run.graph, "y").shape, std::vector<int64_t>{8});
    }

    // An iteration that runs on a plan made elsewhere is checked against the model loaded at
    // its own binding: it must fit the plan (same tensors and roles, the plan's byte sharing,
    // no tensor larger), not have the axes' shapes.
    void iterationsMustFitThePlanTheyRunOn() {
        // larger.onnx's head has 4 rows at N=8, S=4, where the plan at N=8, S=8 holds 8.
        writeLarger();
        ModelRequest asked;
        asked.dims = {{"N", 2}, {"S", 8}};
        QVERIFY(!run_over(path("larger.onnx"), asked, {{{"N", 8}}, {{"S", 4}}})
                     .iterations[1]
                     .replanned);

        // The model there may share more than the plan: at B=1 the loader writes h in place of
        // r (equal bytes there), which the plan made at B=4 does not, and holds all the same.
        OnnxModelBuilder ip(13, "in_place_at_one");
        ip.input("x", {"B", "S", "64"});
        ip.input("p", {"1", "S", "64"});
        ip.node("Relu", {"p"}, {"r"});
        ip.node("Add", {"x", "r"}, {"h"});
        ip.node("Relu", {"h"}, {"y"});
        ip.output("y", {"B", "S", "64"});
        ip.save(path("in_place_at_one.onnx"));
        asked.dims = {{"B", 4}, {"S", 8}};
        QVERIFY(!run_over(path("in_place_at_one.onnx"), asked, {{{"B", 2}}, {{"B", 1}}})
                     .iterations[1]
                     .replanned);

        // An empty value stays a node (graph inference's data propagation fails on an empty
        // initializer): table[:max(N, 2) - 2] is a parameter at N=300 and computed, empty, at
        // N=2. An iteration at N=2 on the plan made at N=300 would need it elsewhere.
        OnnxModelBuilder em(13, "empty_at_two");
        em.input("x", {"N", "64"});
        for (const auto& [name, value] : {std::pair{"zero", 0}, {"one", 1}, {"two", 2}})
            em.int64_initializer(name, {1}, {value});
        em.int64_initializer("table", {16}, std::vector<int64_t>(16, 0));
        first_dimension(em, "x", "xs", "n");
        em.node("Max", {"n", "two"}, {"at_least_two"}); // which graph inference does not follow
        em.node("Sub", {"at_least_two", "two"}, {"length"});
        em.node("Slice", {"table", "zero", "length", "zero"}, {"k"});
        set_int(em.node("Cast", {"k"}, {"kf"}), "to", lib::TensorProto_DataType_FLOAT);
        em.node("Relu", {"kf"}, {"y"});
        em.node("Relu", {"x"}, {"hx"});
        em.output("y", {"?"});
        em.output("hx", {"N", "64"});
        em.save(path("empty_at_two.onnx"));
        asked.dims = {{"N", 300}};
        expectRunRefused(path("empty_at_two.onnx"), asked, {{{"N", 2}}},
                         "tensor 'k' is built otherwise: role activation there, parameter in the "
                         "plan");

        // y has S + table[N] rows, table[1] = 5 and 0 elsewhere: taken as S from N=8, it needs
        // 9 rows at N=1, S=4, which fits the plan at N=8, S=4 by its binding only.
        OnnxModelBuilder nm(13, "nonmonotonic");
        nm.input("x", {"N", "64"});
        nm.input("s", {"S", "64"});
        nm.int64_initializer("zero", {1}, {0});
        nm.int64_initializer("one", {1}, {1});
        std::vector<int64_t> table(64, 0);
        table[1] = 5;
        nm.int64_initializer("table", {64}, table);
        first_dimension(nm, "x", "xs", "n");
        first_dimension(nm, "s", "ss", "sv");
        nm.node("Gather", {"table", "n"}, {"extra"});
        nm.node("Add", {"sv", "extra"}, {"rows"});
        nm.node("ConstantOfShape", {"rows"}, {"c"});
        nm.node("Relu", {"c"}, {"y"});
        nm.node("Relu", {"x"}, {"hx"});
        nm.output("y", {"?"});
        nm.output("hx", {"N", "64"});
        nm.save(path("nonmonotonic.onnx"));
        asked.dims = {{"N", 8}, {"S", 4}};
        expectRunRefused(path("nonmonotonic.onnx"), asked, {{{"N", 1}}},
                         "checking the iteration at N=1, S=4 against the model loaded there: "
                         "tensor 'c' is [9] (36 bytes) there, more than the plan made at N=8, "
                         "S=4 holds ([4], 16 bytes)");
    }

    // One read serves every binding (a run over iterations loads at several). Shape inference
    // reads small float constants again at each binding (a Resize's scales), so their values
    // are kept; large weights are counted from their shapes, their bytes not copied per load.
    void oneReadLoadsAtEveryBinding() {
        OnnxModelBuilder b(13, "resize");
        b.input("x", {"N", "3", "4", "4"});
        b.float_initializer("roi", {0});
        b.float_initializer("scales", {4}, {1, 1, 2, 2});
        b.float_initializer("w", {8, 8192});
        b.node("Resize", {"x", "roi", "scales"}, {"y"});
        b.node("Relu", {"y"}, {"z"});
        b.node("Relu", {"w"}, {"v"});
        b.output("z", {"N", "3", "8", "8"});
        b.output("v", {"8", "8192"});
        b.save(path("resize.onnx"));
        const tmmu::onnx::OnnxFile file(path("resize.onnx"));
        for (int64_t n : {2, 7, 2}) {
            const Graph g = file.load({{{"N", n}}, {}, true}).graph;
            QCOMPARE(tensor_named(g, "y").shape, (std::vector<int64_t>{n, 3, 8, 8}));
            QCOMPARE(tensor_named(g, "w").bytes, uint64_t(8 * 8192 * 4));
        }
        ModelRequest asked;
        asked.dims["N"] = 2;
        const LoadedModel m =
            load_model(path("resize.onnx"), request_over_iterations(asked, {{{"N", 5}}}));
        QVERIFY(tensor_named(*m.graph, "y").shape_dims.front() == AxisDims{{0}}); // follows N
    }
};

QTEST_GUILESS_MAIN(TestOnnxIterations)
#include "test_onnx_iterations.moc"
