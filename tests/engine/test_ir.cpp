// The IR format: loading, saving, derived fields, deterministic orders, the example models and
// scale. Failure cases live in test_ir_errors.cpp.
#include "ir/dynamic_dims.h"
#include "ir/ir_json.h"
#include "ir/validate.h"
#include "plan/plan_hash.h"
#include "test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QObject>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

using namespace tmmu;

namespace {

const std::string kExamples = std::string(TMMU_SOURCE_DIR) + "/resources/models/examples/";

std::string doc(const std::string& tensors, const std::string& nodes,
                const std::string& extra = "") {
    return R"({"format": "tmmu-ir", "version": 1, "tensors": [)" + tensors + R"(], "nodes": [)" +
           nodes + "]" + extra + "}";
}

const Tensor& tensor(const Graph& g, std::string_view id) {
    TensorIndex t = g.find_tensor(id);
    if (t == kNone) throw std::runtime_error("no tensor " + std::string(id));
    return g.tensors[t];
}

std::vector<std::string> order_ids(const Graph& g) {
    std::vector<std::string> ids;
    for (NodeIndex n : g.execution_order)
        ids.push_back(g.nodes[n].id);
    return ids;
}

// Field-by-field equality of everything the format stores.
bool same_graph(const Graph& a, const Graph& b, QString* why) {
    auto differ = [&](const QString& what) {
        *why = what;
        return false;
    };
    if (a.name != b.name) return differ("name");
    if (a.tensors.size() != b.tensors.size()) return differ("tensor count");
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const Tensor &x = a.tensors[i], &y = b.tensors[i];
        bool view_same = x.view.has_value() == y.view.has_value() &&
                         (!x.view || (x.view->base == y.view->base &&
                                      x.view->byte_offset == y.view->byte_offset &&
                                      x.view->byte_length == y.view->byte_length));
        if (x.id != y.id || x.name != y.name || x.shape != y.shape || x.dtype != y.dtype ||
            x.role != y.role || x.alias_group != y.alias_group || !view_same ||
            x.in_place_of != y.in_place_of || x.saved_for_backward != y.saved_for_backward ||
            x.must_not_alias != y.must_not_alias || x.alignment != y.alignment ||
            x.shape_dims != y.shape_dims || x.pinned_offset != y.pinned_offset ||
            x.bytes != y.bytes || x.producer != y.producer || x.consumers != y.consumers)
            return differ(QString("tensor %1").arg(QString::fromStdString(x.id)));
    }
    if (a.dims.size() != b.dims.size()) return differ("dimension count");
    for (size_t i = 0; i < a.dims.size(); ++i)
        if (a.dims[i].name != b.dims[i].name || a.dims[i].min != b.dims[i].min ||
            a.dims[i].max != b.dims[i].max || a.dims[i].value != b.dims[i].value)
            return differ(QString("dimension %1").arg(QString::fromStdString(a.dims[i].name)));
    if (a.replan_policy != b.replan_policy) return differ("replan policy");
    if (a.nodes.size() != b.nodes.size()) return differ("node count");
    for (size_t i = 0; i < a.nodes.size(); ++i) {
        const Node &x = a.nodes[i], &y = b.nodes[i];
        if (x.id != y.id || x.opcode != y.opcode || x.inputs != y.inputs ||
            x.outputs != y.outputs || x.phase != y.phase)
            return differ(QString("node %1").arg(QString::fromStdString(x.id)));
    }
    if (a.execution_order != b.execution_order) return differ("execution order");
    if (a.step_of != b.step_of) return differ("step_of");
    return true;
}

// A chain x0 -> n1 -> x1 -> ... of `nodes` unary ops, built through the C++ API.
Graph chain(uint32_t nodes) {
    Graph g;
    g.name = "chain";
    g.tensors.resize(nodes + 1);
    g.nodes.resize(nodes);
    for (uint32_t i = 0; i <= nodes; ++i) {
        Tensor& t = g.tensors[i];
        t.id = "t" + std::to_string(i);
        t.shape = {16, 16};
        t.role = i == 0 ? Role::Input : (i == nodes ? Role::Output : Role::Activation);
    }
    for (uint32_t i = 0; i < nodes; ++i) {
        g.nodes[i].id = "n" + std::to_string(i);
        g.nodes[i].opcode = "relu";
        g.nodes[i].inputs = {i};
        g.nodes[i].outputs = {i + 1};
    }
    return g;
}

} // namespace

class TestIr : public QObject {
    Q_OBJECT
  private slots:
    void derivedFieldsAreFilled() {
        Graph g = load_ir_string(
            doc(R"({"id": "x", "shape": [2, 3], "dtype": "bf16", "role": "input"},
                   {"id": "s", "shape": [], "dtype": "f64", "role": "output"},
                   {"id": "y", "name": "why", "shape": [2, 3], "dtype": "f32", "role": "output"})",
                R"({"id": "dbl", "opcode": "add", "inputs": ["x", "x"], "outputs": ["y"]},
                   {"id": "sum", "opcode": "sum", "inputs": ["x", "y"], "outputs": ["s"]})"),
            "derived");
        QCOMPARE(tensor(g, "x").bytes, 12u);
        QCOMPARE(tensor(g, "s").bytes, 8u); // a scalar holds one element
        QCOMPARE(tensor(g, "x").name, std::string("x"));
        QCOMPARE(tensor(g, "y").name, std::string("why"));
        QCOMPARE(tensor(g, "x").producer, kNone);
        QCOMPARE(tensor(g, "y").producer, 0u);
        // "dbl" reads x twice but is listed once; consumers follow the execution order.
        QCOMPARE(tensor(g, "x").consumers, (std::vector<NodeIndex>{0, 1}));
        QCOMPARE(tensor(g, "s").consumers.size(), size_t(0));
        QCOMPARE(g.execution_order, (std::vector<NodeIndex>{0, 1}));
        QCOMPARE(g.step_of, (std::vector<uint32_t>{0, 1}));
    }

    void derivedOrderTakesLowestReadyNodeFirst() {
        // nodes[0] needs nodes[2]; nodes[1] and nodes[2] are ready at once, so 1 then 2 then 0.
        const std::string json = doc(
            R"({"id": "x", "shape": [1], "dtype": "f32", "role": "input"},
               {"id": "a", "shape": [1], "dtype": "f32", "role": "activation"},
               {"id": "b", "shape": [1], "dtype": "f32", "role": "output"},
               {"id": "c", "shape": [1], "dtype": "f32", "role": "output"})",
            R"({"id": "late", "opcode": "neg", "inputs": ["a"], "outputs": ["b"]},
               {"id": "free", "opcode": "neg", "inputs": ["x"], "outputs": ["c"]},
               {"id": "early", "opcode": "neg", "inputs": ["x"], "outputs": ["a"]})");
        Graph g = load_ir_string(json, "tie");
        QCOMPARE(g.execution_order, (std::vector<NodeIndex>{1, 2, 0}));
        QCOMPARE(g.step_of, (std::vector<uint32_t>{2, 0, 1}));
    }

    void derivedOrderOfShuffledGraphIsDeterministic() {
        // The same DAG under two node permutations: each derived order is topological, and
        // deriving twice from the same input gives the same order.
        for (uint32_t seed : {1u, 2u, 3u}) {
            Graph g = chain(64);
            for (uint32_t i = 2; i < 64; i += 3) // extra skip edges keep several nodes ready
                g.nodes[i].inputs.push_back(i - 2);
            std::vector<uint32_t> perm(g.nodes.size());
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
            Graph shuffled = g;
            for (size_t i = 0; i < perm.size(); ++i)
                shuffled.nodes[i] = g.nodes[perm[i]];
            Graph again = shuffled;
            finalize_graph(shuffled);
            finalize_graph(again);
            QCOMPARE(shuffled.execution_order, again.execution_order);
            QCOMPARE(order_ids(shuffled).size(), size_t(64));
            for (size_t step = 0; step < 64; ++step) // a chain has exactly one topological order
                QCOMPARE(order_ids(shuffled)[step], "n" + std::to_string(step));
            std::string text = save_ir_json(shuffled);
            QCOMPARE(save_ir_json(load_ir_string(text, "again")), text);
        }
    }

    void givenOrderIsKeptAndValidated() {
        Graph g =
            load_ir_string(doc(R"({"id": "x", "shape": [1], "dtype": "f32", "role": "input"},
                   {"id": "b", "shape": [1], "dtype": "f32", "role": "output"},
                   {"id": "c", "shape": [1], "dtype": "f32", "role": "output"})",
                               R"({"id": "n0", "opcode": "neg", "inputs": ["x"], "outputs": ["b"]},
                   {"id": "n1", "opcode": "neg", "inputs": ["x"], "outputs": ["c"]})",
                               R"(, "execution_order": ["n1", "n0"])"),
                           "given");
        QCOMPARE(g.execution_order, (std::vector<NodeIndex>{1, 0}));
        QCOMPARE(tensor(g, "x").consumers, (std::vector<NodeIndex>{1, 0}));
        // Finalizing again is harmless: derived fields are recomputed, not appended.
        finalize_graph(g);
        QCOMPARE(tensor(g, "x").consumers, (std::vector<NodeIndex>{1, 0}));
    }

    void roundTripPreservesEveryField() {
        Graph g = load_ir_file(kExamples + "views_and_inplace.json");
        g.tensors[0].pinned_offset = 4096;
        g.tensors[0].alignment = 64;
        g.tensors[1].name = "target \"labels\" \u00e9";
        finalize_graph(g);
        std::string text = save_ir_json(g);
        Graph back = load_ir_string(text, "saved");
        QString why;
        QVERIFY2(same_graph(g, back, &why), qPrintable(why));
        QCOMPARE(save_ir_json(back), text); // saving is deterministic
        QVERIFY(text.find("\"offset\": 4096") != std::string::npos);
        QVERIFY(text.find("\"phase\": \"optimizer\"") != std::string::npos);
    }

    void roundTripThroughFile() {
        Graph g = load_ir_file(kExamples + "residual_blocks.json");
        std::string path = QDir::tempPath().toStdString() + "/tmmu_test_ir_roundtrip.json";
        save_ir_file(g, path);
        Graph back = load_ir_file(path);
        QString why;
        QVERIFY2(same_graph(g, back, &why), qPrintable(why));
        std::remove(path.c_str());
    }

    void viewLengthZeroMeansOwnSize() {
        Graph g = load_ir_string(
            doc(R"({"id": "x", "shape": [8], "dtype": "f32", "role": "input"},
                   {"id": "v", "shape": [2], "dtype": "f32", "role": "activation",
                    "view": {"base": "x", "byte_offset": 24}})",
                R"({"id": "slice", "opcode": "slice", "inputs": ["x"], "outputs": ["v"]})"),
            "view");
        QCOMPARE(tensor(g, "v").view->byte_length, 8u);
        QCOMPARE(tensor(g, "v").view->byte_offset, 24u);
    }

    void sniffsTheFormat() {
        QVERIFY(looks_like_ir_json("\xEF\xBB\xBF  {\"format\": \"tmmu-ir\", \"version\": 1}"));
        QVERIFY(looks_like_ir_json(test::read_file(kExamples + "linear_chain.json").value()));
        QVERIFY(!looks_like_ir_json("{\"ir_version\": 8, \"graph\": {}}"));
        QVERIFY(!looks_like_ir_json("[\"tmmu-ir\"]"));
        QVERIFY(!looks_like_ir_json(""));
    }

    void fileWithoutNameIsNamedAfterItsStem() {
        std::string path = QDir::tempPath().toStdString() + "/tmmu_unnamed_model.json";
        Graph g = chain(2);
        g.name.clear();
        finalize_graph(g);
        save_ir_file(g, path);
        QCOMPARE(load_ir_file(path).name, std::string("tmmu_unnamed_model"));
        std::remove(path.c_str());
    }

    void linearChainExampleIsAllInPlace() {
        Graph g = load_ir_file(kExamples + "linear_chain.json");
        QCOMPARE(g.nodes.size(), size_t(8));
        QCOMPARE(g.tensors.size(), size_t(9));
        for (size_t i = 1; i < g.tensors.size(); ++i) {
            QCOMPARE(g.tensors[i].in_place_of, TensorIndex(i - 1));
            QCOMPARE(g.tensors[i].bytes, g.tensors[0].bytes);
        }
        QCOMPARE(g.tensors.back().role, Role::Output);
        QCOMPARE(g.tensors[0].bytes, uint64_t(32 * 1024 * 4));
    }

    void residualExampleHasThreeBlocks() {
        Graph g = load_ir_file(kExamples + "residual_blocks.json");
        QCOMPARE(g.nodes.size(), size_t(15));
        auto params = std::count_if(g.tensors.begin(), g.tensors.end(),
                                    [](const Tensor& t) { return t.role == Role::Parameter; });
        QCOMPARE(params, 9);
        // The skip connection keeps each block input alive until its add.
        const Tensor& h1 = tensor(g, "h1");
        QCOMPARE(h1.consumers.size(), size_t(2));
        QCOMPARE(g.nodes[h1.consumers.back()].opcode, std::string("add"));
        QCOMPARE(tensor(g, "b0.u").bytes, uint64_t(4 * 128 * 1024 * 4));
        QCOMPARE(g.nodes[g.execution_order.back()].id, std::string("b2.add"));
    }

    void viewsExampleExercisesEveryAliasFeature() {
        Graph g = load_ir_file(kExamples + "views_and_inplace.json");
        QCOMPARE(tensor(g, "a_head").view->base, g.find_tensor("a_flat"));
        QCOMPARE(tensor(g, "a_flat").view->base, g.find_tensor("a"));
        QCOMPARE(tensor(g, "a").in_place_of, g.find_tensor("h"));
        QCOMPARE(tensor(g, "w_next").in_place_of, g.find_tensor("w"));
        QCOMPARE(tensor(g, "g_a").alias_group, std::string("grad_a"));
        QVERIFY(tensor(g, "h").saved_for_backward);
        QCOMPARE(tensor(g, "g_w").must_not_alias, (std::vector<TensorIndex>{g.find_tensor("w")}));
        QCOMPARE(tensor(g, "w").alignment, 256u);
        QCOMPARE(g.nodes[g.execution_order.back()].phase, Phase::Optimizer);
        QCOMPARE(g.nodes[tensor(g, "g_h").producer].phase, Phase::Backward);
    }

    void dynamicShapesFollowTheirBinding() {
        Graph g = load_ir_file(kExamples + "dynamic_seq.json");
        QCOMPARE(g.dims.size(), size_t(2));
        QCOMPARE(g.dims[0].name, std::string("batch"));
        QCOMPARE(g.dims[0].value, int64_t(1)); // its default
        QCOMPARE(g.dims[1].name, std::string("seq"));
        QCOMPARE(g.dims[1].value, int64_t(2048)); // no default: the max
        QVERIFY(g.replan_policy == ReplanPolicy::ReplanAtSafepoint);
        QCOMPARE(tensor(g, "scores").shape, (std::vector<int64_t>{1, 4, 2048, 2048}));
        QCOMPARE(tensor(g, "scores").bytes, uint64_t(4) * 4 * 2048 * 2048);
        QVERIFY(!tensor(g, "qkv.w").dynamic());

        bind_dims(g, {{"batch", 2}, {"seq", 100}}, "--dim");
        QCOMPARE(binding_text(g), std::string("batch=2, seq=100"));
        QCOMPARE(tensor(g, "scores").shape, (std::vector<int64_t>{2, 4, 100, 100}));
        QCOMPARE(tensor(g, "scores").bytes, uint64_t(4) * 2 * 4 * 100 * 100);
        // A dynamic view's length follows its shape at each binding.
        QCOMPARE(tensor(g, "q").view->byte_length, uint64_t(2) * 2 * 100 * 256);
        QCOMPARE(tensor(g, "q").bytes, tensor(g, "q").view->byte_length);

        const ModelAnnotations a = dim_annotations(g);
        QCOMPARE(a.symbolic_dims, (std::vector<std::string>{"batch", "seq"}));
        QCOMPARE(a.dim_names[g.find_tensor("scores")],
                 (std::vector<std::string>{"batch", "", "seq", "seq"}));
        QVERIFY(a.dim_names[g.find_tensor("qkv.w")].empty());
    }

    void dynamicShapesRoundTripWithTheirBinding() {
        Graph g = load_ir_file(kExamples + "dynamic_seq.json");
        bind_dims(g, {{"seq", 512}}, "--dim");
        const std::string text = save_ir_json(g);
        QVERIFY2(text.find(R"("shape": ["batch", 4, "seq", "seq"])") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find(R"("replan_policy": "REPLAN_AT_SAFEPOINT")") != std::string::npos,
                 text.c_str());
        // The binding is saved as the defaults, and a dynamic view keeps no byte_length.
        QVERIFY2(text.find(R"("seq": {"min": 1, "max": 2048, "default": 512})") !=
                     std::string::npos,
                 text.c_str());
        QVERIFY2(text.find(R"("view": {"base": "qkv", "byte_offset": 0})") != std::string::npos,
                 text.c_str());
        Graph back = load_ir_string(text, "saved");
        QString why;
        QVERIFY2(same_graph(g, back, &why), qPrintable(why));
        QCOMPARE(save_ir_json(back), text);
    }

    // An axis may be a product of dimensions with a factor (a flattened batch x seq): it is
    // saved in one spelling (the factor, then the dimensions in name order) and binds to the
    // product of their values.
    void productAxesBindAndRoundTrip() {
        const std::string text =
            R"({"format": "tmmu-ir", "version": 1,
                "shape_envelope": {"batch": {"min": 1, "max": 8, "default": 2},
                                   "seq": {"min": 1, "max": 64, "default": 16}},
                "tensors": [{"id": "x", "shape": ["batch", "seq", 4], "dtype": "f32",
                             "role": "input"},
                            {"id": "y", "shape": ["seq*batch*4"], "dtype": "f32",
                             "role": "output"},
                            {"id": "z", "shape": ["2*seq*3", "batch*batch"], "dtype": "f32",
                             "role": "output"}],
                "nodes": [{"id": "n", "opcode": "flatten", "inputs": ["x"],
                           "outputs": ["y", "z"]}]})";
        Graph g = load_ir_string(text, "m.json");
        QCOMPARE(tensor(g, "y").shape, std::vector<int64_t>{128});
        QCOMPARE(tensor(g, "z").shape, (std::vector<int64_t>{96, 4}));
        QCOMPARE(dim_annotations(g).dim_names[g.find_tensor("z")],
                 (std::vector<std::string>{"6*seq", "batch*batch"}));
        bind_dims(g, {{"batch", 3}, {"seq", 5}}, "--dim");
        QCOMPARE(tensor(g, "y").shape, std::vector<int64_t>{60});
        QCOMPARE(tensor(g, "y").bytes, uint64_t(60 * 4));
        QCOMPARE(tensor(g, "z").shape, (std::vector<int64_t>{30, 9}));
        const std::string saved = save_ir_json(g);
        QVERIFY2(saved.find(R"("shape": ["4*batch*seq"])") != std::string::npos, saved.c_str());
        const Graph back = load_ir_string(saved, "saved");
        QString why;
        QVERIFY2(same_graph(g, back, &why), qPrintable(why));
        QCOMPARE(to_hex(ir_hash(back)), to_hex(ir_hash(g)));
        // Another product is another model.
        Graph other = g;
        other.tensors[g.find_tensor("y")].shape_dims[0].factor = 2;
        finalize_graph(other);
        QVERIFY(ir_hash(other) != ir_hash(g));
    }

    void apiGraphsKeepTheirDimensionsThroughSaveAndLoad() {
        // Declared seq before batch: finalizing puts them in name order, as loading does.
        Graph g = chain(2);
        g.dims = {{"seq", 1, 64, 16}, {"batch", 1, 8, 2}};
        g.tensors[1].shape_dims = {{{1}}, {{0}}}; // batch x seq
        g.replan_policy = ReplanPolicy::ReplanAtSafepoint;
        finalize_graph(g);
        QCOMPARE(g.dims[0].name, std::string("batch"));
        QCOMPARE(g.tensors[1].shape, (std::vector<int64_t>{2, 16}));
        QVERIFY(g.tensors[1].shape_dims == (std::vector<AxisDims>{{{0}}, {{1}}}));
        const Graph back = load_ir_string(save_ir_json(g), "saved");
        QString why;
        QVERIFY2(same_graph(g, back, &why), qPrintable(why));
        QCOMPARE(to_hex(ir_hash(back)), to_hex(ir_hash(g)));
    }

    void irHashCoversTheBindingAndKeepsFixedModelsUnchanged() {
        Graph g = load_ir_file(kExamples + "dynamic_seq.json");
        const Digest at_max = ir_hash(g);
        bind_dims(g, {{"seq", 512}}, "--dim");
        const Digest at_512 = ir_hash(g);
        QVERIFY(at_512 != at_max);
        bind_dims(g, {{"seq", 2048}}, "--dim");
        QCOMPARE(to_hex(ir_hash(g)), to_hex(at_max));
        // The same shapes written as fixed numbers are another model: the envelope is hashed.
        Graph fixed = g;
        fixed.dims.clear();
        fixed.replan_policy = ReplanPolicy::Abort; // a policy needs dimensions
        for (Tensor& t : fixed.tensors)
            t.shape_dims.clear();
        finalize_graph(fixed);
        QVERIFY(ir_hash(fixed) != at_max);
        // So is another policy.
        Graph aborting = g;
        aborting.replan_policy = ReplanPolicy::Abort;
        QVERIFY(ir_hash(aborting) != at_max);
        // A model without dynamic dimensions writes neither key, so its hash is as before.
        const Graph chain_model = load_ir_file(kExamples + "linear_chain.json");
        QVERIFY(canonical_ir(chain_model).items[1].find("shape_envelope") == nullptr);
        QVERIFY(canonical_ir(chain_model).items[1].find("replan_policy") == nullptr);
    }

    void bindingFitsNeedsNoLargerDimension() {
        const DimBinding planned{{"batch", 2}, {"seq", 512}};
        QVERIFY(binding_fits(planned, {{"seq", 512}}));
        QVERIFY(binding_fits(planned, {{"seq", 1}, {"batch", 2}}));
        QVERIFY(!binding_fits(planned, {{"seq", 513}}));
        QVERIFY(!binding_fits(planned, {{"batch", 3}, {"seq", 8}}));
    }

    void largeChainFinalizes() {
        // 200k tensors through the C++ API, then 20k through save and load.
        Graph g = chain(200'000 - 1);
        QElapsedTimer timer;
        timer.start();
        finalize_graph(g);
        qInfo("finalize_graph: 200k tensors in %lld ms", static_cast<long long>(timer.elapsed()));
        QCOMPARE(g.execution_order.size(), size_t(199'999));
        QCOMPARE(g.step_of.back(), 199'998u);
        Graph small = chain(20'000);
        finalize_graph(small);
        timer.restart();
        std::string text = save_ir_json(small);
        Graph back = load_ir_string(text, "big");
        qInfo("save + load: 20k tensors (%zu bytes) in %lld ms", text.size(),
              static_cast<long long>(timer.elapsed()));
        QCOMPARE(back.tensors.size(), small.tensors.size());
        QCOMPARE(back.execution_order, small.execution_order);
    }
};

QTEST_GUILESS_MAIN(TestIr)
#include "test_ir.moc"
