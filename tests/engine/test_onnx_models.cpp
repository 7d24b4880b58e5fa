// ONNX models the test writes itself (issue 15): shape chains of an opset-11 export folded once
// dims are bound, fills and guards torch exports fold, views and in-place writes as runtimes alias
// them (and the switch that turns that off), If bodies planned as the node's workspace with
// captured values kept alive, annotations (dim names, attributes, declared inputs), and external
// data next to the model. Runs over iterations: test_onnx_iterations.cpp.
#include "onnx/onnx_loader.h"
#include "onnx/tensor_types.h"
#include "onnx_models.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace tmmu;
using test::first_dimension;
using test::OnnxModelBuilder;
using test::run_over;
using test::set_graph;
using test::set_int;
using test::set_int64_tensor;
using test::set_ints;
using test::tensor_named;
using test::write_shape_chain;
namespace fs = std::filesystem;
namespace lib = ::onnx;

namespace {

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

  private slots:
    void shapeChainsOfOldOpsetsFoldOnceDimsAreBound() {
        write_shape_chain(path("chain.onnx"));
        TMMU_EXPECT_FAILURE(load_model(path("chain.onnx"), {}), FailureCode::UnboundDimension);
        ModelRequest r;
        r.dims["N"] = 2;
        const LoadedModel m = load_model(path("chain.onnx"), r);
        const Graph& g = *m.graph;
        QCOMPARE(tensor_named(g, "z").shape, (std::vector<int64_t>{2, 48}));
        QCOMPARE(tensor_named(g, "y").bytes, uint64_t(2 * 48 * 4));
        // The chain became constants: only Reshape and Relu run; the target is a parameter.
        QCOMPARE(g.nodes.size(), size_t(2));
        QCOMPARE(tensor_named(g, "target").role, Role::Parameter);
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
        QCOMPARE(tensor_named(g, "mask19").shape, (std::vector<int64_t>{5, 64}));
        QCOMPARE(tensor_named(g, "h19").shape, (std::vector<int64_t>{5, 64}));
        QCOMPARE(tensor_named(g, "rows19").role, Role::Parameter);
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
        first_dimension(b, "x", "xs", "n");
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
        first_dimension(b, "x", "xs", "n");
        set_int(b.node("Concat", {"n", "rest"}, {"rows"}), "axis", 0);
        b.node("Reshape", {"x", "rows"}, {"r"});
        first_dimension(b, "r", "rs", "m");
        set_int(b.node("Concat", {"m", "rest"}, {"rows_again"}), "axis", 0);
        b.node("Reshape", {"r", "rows_again"}, {"y"});
        b.output("y", {"?", "?"});
        b.output("rows", {"2"}, lib::TensorProto_DataType_INT64);
        b.save(path("shape_output.onnx"));
        ModelRequest r;
        r.dims["N"] = 3;
        const Graph g = *load_model(path("shape_output.onnx"), r).graph;
        QCOMPARE(tensor_named(g, "r").shape, (std::vector<int64_t>{3, 8}));
        QCOMPARE(tensor_named(g, "y").shape, (std::vector<int64_t>{3, 8}));
        QCOMPARE(tensor_named(g, "rows").role, Role::Output);

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
        const ShapeScheduleRun run = run_over(TMMU_SOURCE_DIR "/tests/data/onnx/bool-mask.onnx",
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
        QCOMPARE(tensor_named(*m.graph, "token_types").role, Role::Activation);
        QCOMPARE(tensor_named(*m.graph, "ones").role, Role::Parameter);
        QCOMPARE(tensor_named(*m.graph, "out_shape").role, Role::Parameter);
        const ShapeScheduleRun run =
            run_over(path("token_types.onnx"), asked, {{{"S", 8}}, {{"S", 2000}}});
        QCOMPARE(run.plan.dims, (DimBinding{{"B", 1}, {"S", 2000}}));
        QCOMPARE(tensor_named(run.graph, "out").shape, (std::vector<int64_t>{1, 2000, 8}));

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
        QCOMPARE(tensor_named(*guarded.graph, "ones").role, Role::Parameter);
        QCOMPARE(tensor_named(*guarded.graph, "spread").shape, (std::vector<int64_t>{2, 8}));

        // A fill of x's shape through arithmetic: y = x + ConstantOfShape(Shape(x) / 1).
        asked.dims = {{"N", 2}};
        QCOMPARE(run_over(TMMU_SOURCE_DIR "/tests/data/onnx/folded-while-small.onnx", asked,
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
        first_dimension(b, "x", "xs", "n");
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
            QCOMPARE(tensor_named(g, "y").shape, (std::vector<int64_t>{n, 4}));
            QCOMPARE(tensor_named(g, "target").role, Role::Parameter);
            QCOMPARE(tensor_named(g, "rows").shape, (std::vector<int64_t>{clamped, 4}));
            QCOMPARE(tensor_named(g, "head").shape, (std::vector<int64_t>{three, 4}));
            // Expand, Add and the two Slices of the table run; the rest folded.
            QCOMPARE(g.nodes.size(), size_t(4));
        }
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
        QCOMPARE(tensor_named(*load_model(path("positions.onnx"), asked).graph, "y").shape,
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
        QVERIFY(tensor_named(g, "b").view.has_value());
        QCOMPARE(tensor_named(g, "b").view->base, g.find_tensor("a"));
        QCOMPARE(tensor_named(g, "d").in_place_of, g.find_tensor("c"));
        QCOMPARE(tensor_named(g, "e").in_place_of, kNone); // c2 has two readers
        QVERIFY(!tensor_named(g, "c").view);               // Sigmoid changes values
        const Plan p = plan_model(m, Mode::Inference, PlanOptions{}, Progress{});
        QCOMPARE(planned(p, "b").offset, planned(p, "a").offset);
        QCOMPARE(planned(p, "d").offset, planned(p, "c").offset);
        QVERIFY(has_note(p.notes, "'b' is a view of 'a'"));
        QVERIFY(has_note(p.notes, "'d' may be written in place of 'c'"));

        ModelRequest off;
        off.aliasing = false;
        const LoadedModel plain = load_model(path("alias.onnx"), off);
        QVERIFY(!tensor_named(*plain.graph, "b").view);
        QCOMPARE(tensor_named(*plain.graph, "d").in_place_of, kNone);
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
        const Tensor& ws = tensor_named(g, (node->id + "/workspace").c_str());
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

    // An int64 operand whose raw bytes are shorter or longer than its dims crashed inside the
    // library's shape inference (a SIGSEGV on 1 byte, a heap overflow on 12): refused first,
    // as an initializer and as a Constant's value.
    void rawDataOfTheWrongLengthIsRefused() {
        for (const size_t bytes : {1, 7, 12, 24}) {
            for (const bool constant : {false, true}) {
                OnnxModelBuilder b(13, "reshape");
                b.input("x", {"2", "3"});
                if (constant) {
                    lib::NodeProto& c = b.node("Constant", {}, {"s"});
                    c.set_name("make_s");
                    set_int64_tensor(c, "value", {2}, {3, 2});
                } else {
                    b.int64_initializer("s", {2}, {3, 2});
                }
                lib::TensorProto& s =
                    constant ? *b.graph().mutable_node(0)->mutable_attribute(0)->mutable_t()
                             : *b.graph().mutable_initializer(0);
                s.clear_int64_data();
                s.set_raw_data(std::string(bytes, '\1'));
                b.node("Reshape", {"x", "s"}, {"y"});
                b.output("y", {"3", "2"});
                b.save(path("raw.onnx"));
                const auto f = test::capture_failure([&] { load_model(path("raw.onnx"), {}); });
                QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
                QVERIFY2(f->where().find(constant ? "node 'make_s' attribute 'value'"
                                                  : "initializer: tensor 's'") != std::string::npos,
                         f->what());
                QVERIFY2(f->message().find(std::to_string(bytes) +
                                           " bytes; dims [2] of 8-byte elements need 16") !=
                             std::string::npos,
                         f->what());
            }
        }
        // A sparse initializer's indices crashed the library's checker itself (helper-55).
        OnnxModelBuilder b(13, "sparse");
        b.input("x", {"4"});
        lib::SparseTensorProto& sparse = *b.graph().add_sparse_initializer();
        sparse.add_dims(4);
        lib::TensorProto& values = *sparse.mutable_values();
        values.set_name("s");
        values.set_data_type(lib::TensorProto_DataType_FLOAT);
        values.add_dims(1);
        values.set_raw_data(std::string(4, '\0'));
        lib::TensorProto& indices = *sparse.mutable_indices();
        indices.set_name("s_indices");
        indices.set_data_type(lib::TensorProto_DataType_INT64);
        indices.add_dims(1);
        indices.set_raw_data(std::string(1, '\0'));
        b.node("Add", {"x", "s"}, {"y"});
        b.output("y", {"4"});
        b.save(path("sparse.onnx"));
        const auto f = test::capture_failure([&] { load_model(path("sparse.onnx"), {}); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->where().find("sparse initializer indices: tensor 's_indices'") !=
                     std::string::npos,
                 f->what());
    }

    // Names become ids that every plan and checkpoint keeps as UTF-8 text: a Latin-1 value or
    // node name is refused at load, shown with '?' for its other bytes.
    void namesThatAreNotUtf8AreRefused() {
        for (const bool node : {false, true}) {
            OnnxModelBuilder b(13, "latin1");
            b.input("x", {"4"});
            lib::NodeProto& relu = b.node("Relu", {"x"}, {node ? "y" : "caf\xe9"});
            relu.set_name(node ? "n\xe9" : "n");
            b.output(node ? "y" : "caf\xe9", {"4"});
            b.save(path("latin1.onnx"));
            const auto f = test::capture_failure([&] { load_model(path("latin1.onnx"), {}); });
            QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
            QVERIFY2(f->message().find(node ? "node 'n?' is not UTF-8" : "'caf?' is not UTF-8") !=
                         std::string::npos,
                     f->what());
        }
        // A symbolic dimension's name names a plan's binding (helper-56).
        OnnxModelBuilder b(13, "latin1_dim");
        b.input("x", {"N\xe9"});
        b.node("Relu", {"x"}, {"y"});
        b.output("y", {"N\xe9"});
        b.save(path("latin1.onnx"));
        const auto f = test::capture_failure([&] { load_model(path("latin1.onnx"), {}); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(f->message().find("dimension of 'x' 'N?' is not UTF-8") != std::string::npos,
                 f->what());
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
        QCOMPARE(tensor_named(*m.graph, "w").role, Role::Parameter);
        QCOMPARE(tensor_named(*m.graph, "w").bytes, uint64_t(64));
    }
};

QTEST_GUILESS_MAIN(TestOnnxModels)
#include "test_onnx_models.moc"
