// ONNX models the test writes itself (issue 15): shape chains of an opset-11 export folded once
// dims are bound, views and in-place writes as runtimes alias them (and the switch that turns
// that off), If bodies planned as the node's workspace with captured values kept alive,
// annotations (dim names, attributes, declared inputs), and external data next to the model.
#include "onnx/onnx_loader.h"
#include "onnx/tensor_types.h"
#include "onnx_models.h"
#include "plan/plan_summary.h"
#include "plan/replan.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace tmmu;
using test::OnnxModelBuilder;
using test::set_graph;
using test::set_int;
using test::set_int64_tensor;
using test::set_ints;
namespace fs = std::filesystem;
namespace lib = ::onnx;

namespace {

const Tensor& tensor(const Graph& g, const char* id) {
    const TensorIndex t = g.find_tensor(id);
    if (t == kNone) throw std::runtime_error(std::string("no tensor ") + id);
    return g.tensors[t];
}

const PlannedTensor& planned(const Plan& p, const char* id) {
    auto it = std::find_if(p.tensors.begin(), p.tensors.end(),
                           [&](const PlannedTensor& t) { return t.id == id; });
    if (it == p.tensors.end()) throw std::runtime_error(std::string("not planned: ") + id);
    return *it;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

// An opset-11 export: y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])), the batch
// dim symbolic. The library's data propagation does not follow these op versions.
void write_shape_chain(const std::string& path) {
    OnnxModelBuilder b(11, "shape_chain");
    b.input("x", {"N", "3", "4", "4"});
    b.int64_initializer("zero", {}, {0});
    b.int64_initializer("minus_one", {1}, {-1});
    b.node("Shape", {"x"}, {"s"});
    set_int(b.node("Gather", {"s", "zero"}, {"batch"}), "axis", 0);
    set_ints(b.node("Unsqueeze", {"batch"}, {"batch1"}), "axes", {0});
    set_int(b.node("Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
    b.node("Reshape", {"x", "target"}, {"y"});
    b.node("Relu", {"y"}, {"z"});
    b.output("z", {"N", "48"});
    b.save(path);
}

// a = Relu(x); b = Reshape(a) (a view); c = Sigmoid(b); d = Add(c, c2) where c has one reader
// and c2 = Exp(x) is read twice, so only c can be overwritten.
void write_alias_chain(const std::string& path) {
    OnnxModelBuilder b(13, "alias_chain");
    b.input("x", {"8", "32"});
    b.int64_initializer("flat", {1}, {256});
    b.node("Relu", {"x"}, {"a"});
    b.node("Reshape", {"a", "flat"}, {"b"});
    b.node("Sigmoid", {"b"}, {"c"});
    b.node("Exp", {"flat_x"}, {"c2"});
    b.node("Add", {"c", "c2"}, {"d"});
    b.node("Neg", {"c2"}, {"e"});
    b.node("Reshape", {"x", "flat"}, {"flat_x"});
    // Nodes must be in order: move the last (flat_x's producer) before its reader.
    auto* nodes = b.graph().mutable_node();
    for (int i = nodes->size() - 1; i > 3; --i)
        nodes->SwapElements(i, i - 1);
    b.output("d", {"256"});
    b.output("e", {"256"});
    b.save(path);
}

lib::NodeProto& add_node(lib::GraphProto& g, const char* op, std::vector<std::string> in,
                         const char* out) {
    lib::NodeProto* n = g.add_node();
    n->set_op_type(op);
    for (const auto& i : in)
        n->add_input(i);
    n->add_output(out);
    return *n;
}

// then: t0 = Sigmoid(x); t1 = Mul(t0, x); then_out = Add(t0, t1): t0 and t1 are live together
// (t0 has two readers, so nothing writes over it). else: else_out = Neg(x). x is captured.
lib::GraphProto then_branch() {
    lib::GraphProto g;
    g.set_name("then");
    add_node(g, "Sigmoid", {"x"}, "t0");
    add_node(g, "Mul", {"t0", "x"}, "t1");
    add_node(g, "Add", {"t0", "t1"}, "then_out");
    test::add_value(*g.mutable_output(), "then_out", {"64"});
    return g;
}

lib::GraphProto else_branch() {
    lib::GraphProto g;
    g.set_name("else");
    add_node(g, "Neg", {"x"}, "else_out");
    test::add_value(*g.mutable_output(), "else_out", {"64"});
    return g;
}

// If(cond) with x captured by both branches: then runs three ops, else one.
void write_if(const std::string& path) {
    OnnxModelBuilder b(13, "if_model");
    b.input("cond", {}, lib::TensorProto_DataType_BOOL);
    b.input("x", {"64"});
    b.node("Relu", {"x"}, {"before"});
    lib::NodeProto& n = b.node("If", {"cond"}, {"y"});
    set_graph(n, "then_branch", then_branch());
    set_graph(n, "else_branch", else_branch());
    b.node("Add", {"y", "before"}, {"z"});
    b.output("z", {"64"});
    b.save(path);
}

} // namespace

class TestOnnxModels : public QObject {
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

    // Loads `file` to run over `iterations` from `asked`, plans it there and runs them, each
    // binding checked against the model loaded there (LoadedModel::build_at).
    ShapeScheduleRun runOver(const std::string& file, const ModelRequest& asked,
                             const std::vector<DimBinding>& iterations) {
        const LoadedModel m = load_model(file, request_over_iterations(asked, iterations));
        return run_shape_schedule(*m.graph, plan_model(m, Mode::Inference, {}, {}), Mode::Inference,
                                  {}, iterations, nullptr, {}, m.build_at);
    }

    // runOver is refused as INVALID_IR_SHAPES with a message that says `text`.
    void expectRunRefused(const std::string& file, const ModelRequest& asked,
                          const std::vector<DimBinding>& iterations, const std::string& text) {
        const auto f = test::capture_failure([&] { (void)runOver(file, asked, iterations); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find(text) != std::string::npos, f->what());
    }

    // `out` = [first dimension of `input`], through `shape` = Shape(input); needs the int64
    // initializers "zero" and "one".
    static void firstDimension(OnnxModelBuilder& b, const std::string& input,
                               const std::string& shape, const std::string& out) {
        b.node("Shape", {input}, {shape});
        b.node("Slice", {shape, "zero", "one"}, {out});
    }

    // larger.onnx: y has max(N, S) rows (a constant of that shape), h = s[:N] min(N, S).
    void writeLarger() {
        OnnxModelBuilder b(13, "larger");
        b.input("x", {"N", "64"});
        b.input("s", {"S", "64"});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        firstDimension(b, "x", "xs", "n");
        firstDimension(b, "s", "ss", "sv");
        b.node("Slice", {"s", "zero", "n", "zero"}, {"head"}); // min(N, S) rows
        b.node("Relu", {"head"}, {"h"});
        firstDimension(b, "head", "hs", "least");
        b.node("Add", {"n", "sv"}, {"sum"});
        b.node("Sub", {"sum", "least"}, {"most"}); // max(N, S)
        b.node("ConstantOfShape", {"most"}, {"c"});
        b.node("Relu", {"c"}, {"y"});
        b.output("y", {"?"});
        b.output("h", {"?", "64"});
        b.save(path("larger.onnx"));
    }

  private slots:
    void shapeChainsOfOldOpsetsFoldOnceDimsAreBound() {
        write_shape_chain(path("chain.onnx"));
        TMMU_EXPECT_FAILURE(load_model(path("chain.onnx"), {}), FailureCode::UnboundDimension);
        ModelRequest r;
        r.dims["N"] = 2;
        const LoadedModel m = load_model(path("chain.onnx"), r);
        const Graph& g = *m.graph;
        QCOMPARE(tensor(g, "z").shape, (std::vector<int64_t>{2, 48}));
        QCOMPARE(tensor(g, "y").bytes, uint64_t(2 * 48 * 4));
        // The chain became constants: only Reshape and Relu run; the target is a parameter.
        QCOMPARE(g.nodes.size(), size_t(2));
        QCOMPARE(tensor(g, "target").role, Role::Parameter);
        QVERIFY(has_note(m.annotations.notes, "4 shape-computing nodes"));
        ModelRequest typo;
        typo.dims["n"] = 2;
        const auto f = test::capture_failure([&] { load_model(path("chain.onnx"), typo); });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
        QVERIFY2(f->message().find("its symbolic dimensions: N") != std::string::npos, f->what());
        // The names dims were bound from, for the tensor table.
        QCOMPARE(m.annotations.dim_names[g.find_tensor("x")],
                 (std::vector<std::string>{"N", "", "", ""}));
        // Names inference made up for shapes it could not follow are not where a size came from.
        for (const auto& names : m.annotations.dim_names)
            for (const std::string& name : names)
                QVERIFY2(name.empty() || name == "N", name.c_str());
    }

    // Each layer slices a table by the rows of the layer before it (Slice's ends from its
    // Shape): graph inference sees a layer's shape only once the chain before it is folded, so
    // a round of inference per layer closed the shapes of 16 layers at most. Each node's own
    // inference, run as the chain folds, closes all twenty in one pass.
    void chainsThroughEveryLayerFoldInOnePass() {
        test::write_layered_shape_chain(path("layers.onnx"), 20);
        ModelRequest r;
        r.dims["N"] = 5;
        const LoadedModel m = load_model(path("layers.onnx"), r);
        const Graph& g = *m.graph;
        QCOMPARE(tensor(g, "mask19").shape, (std::vector<int64_t>{5, 64}));
        QCOMPARE(tensor(g, "h19").shape, (std::vector<int64_t>{5, 64}));
        QCOMPARE(tensor(g, "rows19").role, Role::Parameter);
        QCOMPARE(g.nodes.size(), size_t(40)); // a Slice of the table and an Add per layer
        QVERIFY(has_note(m.annotations.notes, "40 shape-computing nodes"));
    }

    // Rows past what the table holds (a sequence longer than a causal mask was built for): the
    // Add cannot broadcast [5000, 64] with [4096, 64]. Graph inference drops such a node's
    // outputs silently, and libonnx 1.12 crashed in the Shape of them; the load is refused,
    // naming the node and its inputs.
    void dimensionsWhereTheModelDoesNotHoldAreRefused() {
        test::write_layered_shape_chain(path("layers.onnx"), 2);
        ModelRequest r;
        r.dims["N"] = 5000;
        const auto f = test::capture_failure([&] { (void)load_model(path("layers.onnx"), r); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find("node 'Add_4' (Add) does not hold for inputs of shapes "
                                   "[5000, 64], [4096, 64]") != std::string::npos,
                 f->what());

        // A fill of [N + 1, -1]: the dim is named where it is, with the node that made it.
        OnnxModelBuilder b(13, "negative_fill");
        b.input("x", {"N", "4"});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        b.int64_initializer("minus_one", {1}, {-1});
        firstDimension(b, "x", "xs", "n");
        b.node("Add", {"n", "one"}, {"rows"});
        set_int(b.node("Concat", {"rows", "minus_one"}, {"sizes"}), "axis", 0);
        b.node("ConstantOfShape", {"sizes"}, {"z"});
        b.output("z", {"?", "?"});
        b.save(path("negative_fill.onnx"));
        r.dims["N"] = 2;
        const auto g =
            test::capture_failure([&] { (void)load_model(path("negative_fill.onnx"), r); });
        QVERIFY(g && g->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(g->where(), std::string("'z' dim 1"));
        QVERIFY2(g->message().find("dimension -1 is negative; node 'ConstantOfShape_5' "
                                   "(ConstantOfShape) makes it") != std::string::npos,
                 g->what());
    }

    // A shape that is also a graph output stays a node, so graph inference cannot see its value
    // (opset 13's data propagation does not follow the Slice of a shape); the Reshape by it is
    // closed by its own inference in the pass, and so is everything read from it. Made-up names
    // of what stays open come after the names a user can bind.
    void shapesKeptAsOutputsStillCloseReshapes() {
        OnnxModelBuilder b(13, "shape_output");
        b.input("x", {"N", "4", "2"});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        b.int64_initializer("rest", {1}, {-1});
        firstDimension(b, "x", "xs", "n");
        set_int(b.node("Concat", {"n", "rest"}, {"rows"}), "axis", 0);
        b.node("Reshape", {"x", "rows"}, {"r"});
        firstDimension(b, "r", "rs", "m");
        set_int(b.node("Concat", {"m", "rest"}, {"rows_again"}), "axis", 0);
        b.node("Reshape", {"r", "rows_again"}, {"y"});
        b.output("y", {"?", "?"});
        b.output("rows", {"2"}, lib::TensorProto_DataType_INT64);
        b.save(path("shape_output.onnx"));
        ModelRequest r;
        r.dims["N"] = 3;
        const Graph g = *load_model(path("shape_output.onnx"), r).graph;
        QCOMPARE(tensor(g, "r").shape, (std::vector<int64_t>{3, 8}));
        QCOMPARE(tensor(g, "y").shape, (std::vector<int64_t>{3, 8}));
        QCOMPARE(tensor(g, "rows").role, Role::Output);

        tmmu::onnx::UnboundDims unbound;
        for (int i = 0; i < 20; ++i)
            unbound.add("'unk__" + std::to_string(i) + "'", "'v' dim 0");
        unbound.add("'wlen'", "'x' dim 1");
        const std::string text = unbound.text();
        QVERIFY2(text.starts_with("'wlen' (used by 'x' dim 1); 'unk__0'"), text.c_str());
        QVERIFY2(text.ends_with("; and 12 more names inference made up"), text.c_str());
    }

    // torch.ones((batch, seq), dtype=bool), as HF Llama builds its mask without an
    // attention_mask, is computed at every binding: folded while small, it was a parameter at
    // S=16 and an activation at S=2000, and the run was refused. A declared output keeps its
    // fixed dims where the pass closes it (helper-49's models, tests/data/onnx/README.md).
    void boolMasksAndDeclaredOutputsStayAsTheModelSays() {
        ModelRequest asked;
        asked.dims = {{"B", 1}, {"S", 16}};
        const ShapeScheduleRun run = runOver(TMMU_SOURCE_DIR "/tests/data/onnx/bool-mask.onnx",
                                             asked, {{{"S", 8}}, {{"S", 2000}}});
        QCOMPARE(run.plan.dims, (DimBinding{{"B", 1}, {"S", 2000}}));
        const auto f = test::capture_failure(
            [&] { (void)load_model(TMMU_SOURCE_DIR "/tests/data/onnx/declared-output.onnx", {}); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find("'y' is declared with dim 0 = 5, and inference finds [3, 8]") !=
                     std::string::npos,
                 f->what());
    }

    // A ConstantOfShape sized by the data (BERT's token_type_ids = zeros(batch, seq)) is data:
    // computed at every binding, so a run goes past the 1024 elements a folded value may have
    // (it was a parameter while small, and a run from S=16 over S=2000 was refused). One of a
    // size no binding changes (ones of the rank) still folds, and so does what reads it.
    void fillsSizedByTheDataAreComputedAtEveryBinding() {
        OnnxModelBuilder b(13, "token_types");
        b.input("ids", {"B", "S"}, lib::TensorProto_DataType_INT64);
        b.float_initializer("types", {2, 8});
        b.int64_initializer("eight", {1}, {8});
        b.node("Shape", {"ids"}, {"shape"});
        set_int64_tensor(b.node("ConstantOfShape", {"shape"}, {"token_types"}), "value", {1}, {0});
        b.node("Gather", {"types", "token_types"}, {"embedded"});
        b.node("Shape", {"shape"}, {"rank"});
        set_int64_tensor(b.node("ConstantOfShape", {"rank"}, {"ones"}), "value", {1}, {1});
        b.node("Max", {"shape", "ones"}, {"sizes"}); // which graph inference does not follow
        set_int(b.node("Concat", {"sizes", "eight"}, {"out_shape"}), "axis", 0);
        b.node("Reshape", {"embedded", "out_shape"}, {"out"});
        b.output("out", {"B", "S", "8"});
        b.save(path("token_types.onnx"));
        ModelRequest asked;
        asked.dims = {{"B", 1}, {"S", 16}};
        const LoadedModel m = load_model(path("token_types.onnx"), asked);
        QCOMPARE(tensor(*m.graph, "token_types").role, Role::Activation);
        QCOMPARE(tensor(*m.graph, "ones").role, Role::Parameter);
        QCOMPARE(tensor(*m.graph, "out_shape").role, Role::Parameter);
        const ShapeScheduleRun run =
            runOver(path("token_types.onnx"), asked, {{{"S", 8}}, {{"S", 2000}}});
        QCOMPARE(run.plan.dims, (DimBinding{{"B", 1}, {"S", 2000}}));
        QCOMPARE(tensor(run.graph, "out").shape, (std::vector<int64_t>{1, 2000, 8}));

        // Ones of the rank of a value inference gave no shape before binding (x[:, :S], a
        // Slice with a computed end), in torch's expand guard: they fold, and so does the
        // guard.
        OnnxModelBuilder g(13, "guard_after_slice");
        g.input("x", {"B", "S"});
        g.float_initializer("u", {1, 1});
        g.int64_initializer("zero", {1}, {0});
        g.int64_initializer("one", {1}, {1});
        g.int64_initializer("two", {1}, {2});
        g.int64_initializer("minus_one", {}, {-1});
        g.node("Shape", {"x"}, {"x_shape"});
        g.node("Slice", {"x_shape", "one", "two"}, {"length"});
        g.node("Slice", {"x", "zero", "length", "one"}, {"head"});
        g.node("Shape", {"head"}, {"sizes"});
        g.node("Shape", {"sizes"}, {"rank"});
        set_int64_tensor(g.node("ConstantOfShape", {"rank"}, {"ones"}), "value", {1}, {1});
        g.node("Mul", {"ones", "minus_one"}, {"unknown"});
        g.node("Equal", {"sizes", "unknown"}, {"is_unknown"});
        g.node("Where", {"is_unknown", "ones", "sizes"}, {"target"});
        g.node("Expand", {"u", "target"}, {"spread"});
        g.node("Add", {"spread", "head"}, {"y"});
        g.output("y", {"B", "S"});
        g.save(path("guard_after_slice.onnx"));
        asked.dims = {{"B", 2}, {"S", 8}};
        const LoadedModel guarded = load_model(path("guard_after_slice.onnx"), asked);
        QCOMPARE(tensor(*guarded.graph, "ones").role, Role::Parameter);
        QCOMPARE(tensor(*guarded.graph, "spread").shape, (std::vector<int64_t>{2, 8}));

        // A fill of x's shape through arithmetic: y = x + ConstantOfShape(Shape(x) / 1).
        asked.dims = {{"N", 2}};
        QCOMPARE(runOver(TMMU_SOURCE_DIR "/tests/data/onnx/folded-while-small.onnx", asked,
                         {{{"N", 300}}})
                     .plan.dims,
                 (DimBinding{{"N", 300}}));
    }

    // torch writes x.expand(n, 4) with a traced n as Concat -> Reshape([-1]) ->
    // Where(Equal(s, -1), 1, s) -> Expand, and clamps lengths with Max/Min or comparisons: all
    // of it folds, as a runtime's constant folding would, and the Expand's shape follows N.
    void torchExpandsAndClampsFold() {
        OnnxModelBuilder b(13, "torch_expand");
        b.input("x", {"N", "4"});
        b.float_initializer("row", {1, 4});
        b.float_initializer("table", {16, 4});
        b.int64_initializer("zero", {1}, {0});
        b.int64_initializer("one", {1}, {1});
        b.int64_initializer("four", {1}, {4});
        b.int64_initializer("flat", {1}, {-1});
        b.int64_initializer("minus_ones", {2}, {-1, -1});
        b.int64_initializer("ones", {2}, {1, 1});
        b.int64_initializer("two", {1}, {2});
        b.int64_initializer("three", {1}, {3});
        b.int64_initializer("six", {1}, {6});
        firstDimension(b, "x", "xs", "n");
        set_int(b.node("Concat", {"n", "four"}, {"sizes"}), "axis", 0);
        b.node("Reshape", {"sizes", "flat"}, {"stacked"});
        b.node("Equal", {"stacked", "minus_ones"}, {"unknown"});
        b.node("Where", {"unknown", "ones", "stacked"}, {"target"});
        b.node("Expand", {"row", "target"}, {"y"});
        b.node("Add", {"x", "y"}, {"z"});
        b.node("Max", {"n", "two"}, {"at_least_two"});
        b.node("Min", {"at_least_two", "six"}, {"clamped"}); // min(max(N, 2), 6)
        b.node("Slice", {"table", "zero", "clamped", "zero"}, {"rows"});
        b.node("Less", {"n", "three"}, {"short"});
        b.node("Not", {"short"}, {"long"});
        b.node("Where", {"long", "n", "three"}, {"at_least_three"}); // max(N, 3)
        b.node("Slice", {"table", "zero", "at_least_three", "zero"}, {"head"});
        b.output("z", {"N", "4"});
        b.output("rows", {"?", "4"});
        b.output("head", {"?", "4"});
        b.save(path("torch_expand.onnx"));
        for (const auto& [n, clamped, three] :
             {std::tuple{5, 5, 5}, std::tuple{1, 2, 3}, std::tuple{9, 6, 9}}) {
            ModelRequest r;
            r.dims["N"] = n;
            const LoadedModel m = load_model(path("torch_expand.onnx"), r);
            const Graph& g = *m.graph;
            QCOMPARE(tensor(g, "y").shape, (std::vector<int64_t>{n, 4}));
            QCOMPARE(tensor(g, "target").role, Role::Parameter);
            QCOMPARE(tensor(g, "rows").shape, (std::vector<int64_t>{clamped, 4}));
            QCOMPARE(tensor(g, "head").shape, (std::vector<int64_t>{three, 4}));
            // Expand, Add and the two Slices of the table run; the rest folded.
            QCOMPARE(g.nodes.size(), size_t(4));
        }
    }

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
        const ShapeScheduleRun run = runOver(path("position_view.onnx"), asked,
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
        QCOMPARE(tensor(g, "q").shape, (std::vector<int64_t>{6, 4}));
        const Graph replanned = bound_at(g, {{"N", 5}, {"S", 7}}, "--dim");
        QCOMPARE(tensor(replanned, "z").shape, std::vector<int64_t>{140});
        QCOMPARE(tensor(replanned, "q").shape, (std::vector<int64_t>{35, 4}));
        QCOMPARE(tensor(replanned, "z").bytes, uint64_t(140 * 4));

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
            const ShapeScheduleRun run = runOver(path("limited.onnx"), asked, iterations);
            QCOMPARE(run.plan.dims, (DimBinding{{"batch", 3}, {"seq", start}}));
            QCOMPARE(tensor(run.graph, "h").shape, (std::vector<int64_t>{3, start, 8}));
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
        firstDimension(neg, "x", "xs", "n");
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
        QCOMPARE(runOver(path("limited3.onnx"), asked, {{{"seq", 2}}}).plan.dims,
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
        QVERIFY(tensor(*m.graph, "y").shape_dims.front() == AxisDims{{1}}); // taken as S
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
        QCOMPARE(tensor(run.graph, "y").shape, std::vector<int64_t>{8});
    }

    // An iteration that runs on a plan made elsewhere is checked against the model loaded at
    // its own binding: it must fit the plan (same tensors and roles, the plan's byte sharing,
    // no tensor larger), not have the axes' shapes.
    void iterationsMustFitThePlanTheyRunOn() {
        // larger.onnx's head has 4 rows at N=8, S=4, where the plan at N=8, S=8 holds 8.
        writeLarger();
        ModelRequest asked;
        asked.dims = {{"N", 2}, {"S", 8}};
        QVERIFY(
            !runOver(path("larger.onnx"), asked, {{{"N", 8}}, {{"S", 4}}}).iterations[1].replanned);

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
        QVERIFY(!runOver(path("in_place_at_one.onnx"), asked, {{{"B", 2}}, {{"B", 1}}})
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
        firstDimension(em, "x", "xs", "n");
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
        firstDimension(nm, "x", "xs", "n");
        firstDimension(nm, "s", "ss", "sv");
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
            QCOMPARE(tensor(g, "y").shape, (std::vector<int64_t>{n, 3, 8, 8}));
            QCOMPARE(tensor(g, "w").bytes, uint64_t(8 * 8192 * 4));
        }
        ModelRequest asked;
        asked.dims["N"] = 2;
        const LoadedModel m =
            load_model(path("resize.onnx"), request_over_iterations(asked, {{{"N", 5}}}));
        QVERIFY(tensor(*m.graph, "y").shape_dims.front() == AxisDims{{0}}); // follows N
    }

    // Shape inference propagates integer tables of any size through Slice and Gather at each
    // binding: their values are kept, however large (8192 positions here).
    void integerTablesStayReadable() {
        OnnxModelBuilder b(13, "positions");
        b.input("x", {"N", "16", "4"});
        b.int64_initializer("pos", {8192}, std::vector<int64_t>(8192, 1));
        b.int64_initializer("start", {1}, {0});
        b.int64_initializer("end", {1}, {16});
        b.float_initializer("table", {32, 4});
        b.node("Slice", {"pos", "start", "end"}, {"ids"});
        b.node("Gather", {"table", "ids"}, {"emb"});
        b.node("Add", {"emb", "x"}, {"y"});
        b.output("y", {"N", "16", "4"});
        b.save(path("positions.onnx"));
        ModelRequest asked;
        asked.dims["N"] = 2;
        QCOMPARE(tensor(*load_model(path("positions.onnx"), asked).graph, "y").shape,
                 (std::vector<int64_t>{2, 16, 4}));
        QCOMPARE(load_model(path("positions.onnx"), request_over_iterations(asked, {{{"N", 3}}}))
                     .graph->dims.size(),
                 size_t(1));
    }

    void declaredInputsListWhatADialogAsksFor() {
        write_shape_chain(path("chain.onnx"));
        const ModelAnnotations a = declared_inputs(path("chain.onnx"));
        QCOMPARE(a.inputs.size(), size_t(1)); // initializers are not inputs to bind
        QCOMPARE(a.inputs[0].name, std::string("x"));
        QCOMPARE(a.inputs[0].dims, (std::vector<std::string>{"N", "3", "4", "4"}));
        QVERIFY(std::find(a.symbolic_dims.begin(), a.symbolic_dims.end(), "N") !=
                a.symbolic_dims.end());
    }

    void viewsAndInPlaceWritesAliasLikeRuntimes() {
        write_alias_chain(path("alias.onnx"));
        const LoadedModel m = load_model(path("alias.onnx"), {});
        const Graph& g = *m.graph;
        QVERIFY(tensor(g, "b").view.has_value());
        QCOMPARE(tensor(g, "b").view->base, g.find_tensor("a"));
        QCOMPARE(tensor(g, "d").in_place_of, g.find_tensor("c"));
        QCOMPARE(tensor(g, "e").in_place_of, kNone); // c2 has two readers
        QVERIFY(!tensor(g, "c").view);               // Sigmoid changes values
        const Plan p = plan_model(m, Mode::Inference, PlanOptions{}, Progress{});
        QCOMPARE(planned(p, "b").offset, planned(p, "a").offset);
        QCOMPARE(planned(p, "d").offset, planned(p, "c").offset);
        QVERIFY(has_note(p.notes, "'b' is a view of 'a'"));
        QVERIFY(has_note(p.notes, "'d' may be written in place of 'c'"));

        ModelRequest off;
        off.aliasing = false;
        const LoadedModel plain = load_model(path("alias.onnx"), off);
        QVERIFY(!tensor(*plain.graph, "b").view);
        QCOMPARE(tensor(*plain.graph, "d").in_place_of, kNone);
        const Plan q = plan_model(plain, Mode::Inference, PlanOptions{}, Progress{});
        QVERIFY(has_note(q.notes, "aliasing is off"));
        QVERIFY(!has_note(q.notes, "is a view of"));
        QVERIFY(planned(q, "b").offset != planned(q, "a").offset);
    }

    void ifBranchesBecomeTheNodesWorkspace() {
        write_if(path("if.onnx"));
        const LoadedModel m = load_model(path("if.onnx"), {});
        const Graph& g = *m.graph;
        const auto node = std::find_if(g.nodes.begin(), g.nodes.end(),
                                       [](const Node& n) { return n.opcode == "If"; });
        QVERIFY(node != g.nodes.end());
        // x is captured by the branches: the If reads it, so it stays live across the node.
        QVERIFY(std::count(node->inputs.begin(), node->inputs.end(), g.find_tensor("x")) == 1);
        const Tensor& ws = tensor(g, (node->id + "/workspace").c_str());
        QCOMPARE(ws.role, Role::Workspace);
        QCOMPARE(ws.producer, NodeIndex(node - g.nodes.begin()));
        // The then branch keeps two 256-byte values live at once; the else branch has one. The
        // larger branch sizes the workspace.
        QVERIFY2(ws.bytes >= 2 * 256, std::to_string(ws.bytes).c_str());
        QVERIFY(has_note(m.annotations.notes, "its larger branch"));
        const size_t if_at = size_t(node - g.nodes.begin());
        QCOMPARE(m.annotations.node_attributes[if_at].size(), size_t(2));
        QCOMPARE(m.annotations.node_attributes[if_at][0].first, std::string("then_branch"));
        QCOMPARE(m.annotations.node_attributes[if_at][0].second,
                 std::string("graph 'then', 3 nodes"));
        (void)plan_model(m, Mode::Inference, PlanOptions{}, Progress{}); // validated
    }

    void unknownOpsInBodiesAreNamedWithTheirDomain() {
        OnnxModelBuilder b(13, "custom_in_branch");
        b.import_opset("com.example", 1);
        b.input("cond", {}, lib::TensorProto_DataType_BOOL);
        b.input("x", {"64"});
        lib::GraphProto custom = else_branch();
        custom.mutable_node(0)->set_op_type("FusedThing");
        custom.mutable_node(0)->set_domain("com.example");
        lib::NodeProto& n = b.node("If", {"cond"}, {"y"});
        set_graph(n, "then_branch", then_branch());
        set_graph(n, "else_branch", custom);
        b.output("y", {"64"});
        b.save(path("custom.onnx"));
        const auto f = test::capture_failure([&] { load_model(path("custom.onnx"), {}); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find("'FusedThing' in domain 'com.example'") != std::string::npos,
                 f->what());
        QVERIFY2(f->where().find("else_branch") != std::string::npos, f->what());
    }

    // A window attribute or a group count below 1 is refused before ONNX's shape inference,
    // which divides by a stride of 0 (a SIGFPE inside the library:
    // tests/fuzz/corpus/model-onnx-conv-stride-0.bin).
    void windowAttributesBelowOneAreRefused() {
        for (const char* attribute : {"strides", "dilations", "kernel_shape"}) {
            OnnxModelBuilder b(13, "conv");
            b.input("x", {"1", "1", "5", "5"});
            b.float_initializer("w", {1, 1, 3, 3});
            lib::NodeProto& n = b.node("Conv", {"x", "w"}, {"y"});
            n.set_name("c0");
            set_ints(n, attribute,
                     std::string(attribute) == "kernel_shape" ? std::vector<int64_t>{3, 0}
                                                              : std::vector<int64_t>{1, 0});
            b.output("y", {"1", "1", "3", "3"});
            b.save(path("conv.onnx"));
            const auto f = test::capture_failure([&] { load_model(path("conv.onnx"), {}); });
            QVERIFY(f.has_value());
            QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
            QVERIFY2(f->where().find("node 'c0'") != std::string::npos, f->what());
            QVERIFY2(f->message().find(std::string("Conv attribute '") + attribute +
                                       "' has 0 at index 1") != std::string::npos,
                     f->what());
        }
        OnnxModelBuilder b(13, "conv");
        b.input("x", {"1", "2", "5", "5"});
        b.float_initializer("w", {2, 1, 3, 3});
        set_int(b.node("Conv", {"x", "w"}, {"y"}), "group", 0);
        b.output("y", {"1", "2", "3", "3"});
        b.save(path("group.onnx"));
        const auto f = test::capture_failure([&] { load_model(path("group.onnx"), {}); });
        QVERIFY(f && f->message().find("Conv attribute 'group' is 0") != std::string::npos);
    }

    void externalDataResolvesNextToTheModel() {
        const fs::path sub = fs::path(path("ext"));
        fs::create_directories(sub);
        OnnxModelBuilder b(13, "external");
        b.input("x", {"16"});
        b.external_initializer("w", {16}, "weights.bin", 0);
        b.node("Mul", {"x", "w"}, {"y"});
        b.output("y", {"16"});
        b.save((sub / "model.onnx").string());
        // Loaded from another working directory: the weights file must not be looked up there.
        const fs::path cwd = fs::current_path();
        fs::current_path(dir_.path().toStdString());
        TMMU_EXPECT_FAILURE(load_model((sub / "model.onnx").string(), {}),
                            FailureCode::InvalidIrShapes); // weights.bin missing
        std::ofstream((sub / "weights.bin").string(), std::ios::binary) << std::string(64, '\0');
        const LoadedModel m = load_model((sub / "model.onnx").string(), {});
        fs::current_path(cwd);
        QCOMPARE(tensor(*m.graph, "w").role, Role::Parameter);
        QCOMPARE(tensor(*m.graph, "w").bytes, uint64_t(64));
    }
};

QTEST_GUILESS_MAIN(TestOnnxModels)
#include "test_onnx_models.moc"
