#include "ir/validate.h"
#include "liveness/liveness.h"
#include "models/graph_builder.h"
#include "test_support.h"

#include <QObject>

using namespace tmmu;

namespace {

// x (input) -> relu -> a -> relu -> b -> relu -> y (output); 1 KiB f32 tensors.
struct Chain {
    Graph g;
    TensorIndex x, a, b, y;
};

Chain make_chain(bool in_place) {
    GraphBuilder gb("chain");
    Chain c;
    c.x = gb.add_tensor("x", {256}, DType::F32, Role::Input);
    c.a = gb.add_tensor("a", {256}, DType::F32, Role::Activation);
    c.b = gb.add_tensor("b", {256}, DType::F32, Role::Activation);
    c.y = gb.add_tensor("y", {256}, DType::F32, Role::Output);
    gb.add_node("relu", {c.x}, {c.a}, Phase::Forward);
    gb.add_node("relu", {c.a}, {c.b}, Phase::Forward);
    gb.add_node("relu", {c.b}, {c.y}, Phase::Forward);
    if (in_place) {
        gb.tensor(c.a).in_place_of = c.x;
        gb.tensor(c.b).in_place_of = c.a;
        gb.tensor(c.y).in_place_of = c.b;
    }
    c.g = gb.take();
    finalize_graph(c.g);
    return c;
}

// Forward: w (param), x (input) -> matmul -> h (saved) -> relu -> y -> loss.
// Backward: loss_grad -> relu_grad(h) -> h_grad -> matmul_grad_weight(x, h_grad) -> w_grad.
struct TinyTraining {
    Graph g;
    TensorIndex w, x, h, y, loss, gy, gh, gw;
};

TinyTraining make_training() {
    GraphBuilder gb("tiny");
    TinyTraining t;
    t.w = gb.add_tensor("w", {64, 64}, DType::F32, Role::Parameter);
    t.x = gb.add_tensor("x", {8, 64}, DType::F32, Role::Input);
    t.h = gb.add_tensor("h", {8, 64}, DType::F32, Role::Activation);
    t.y = gb.add_tensor("y", {8, 64}, DType::F32, Role::Activation);
    t.loss = gb.add_tensor("loss", {}, DType::F32, Role::Output);
    t.gy = gb.add_tensor("gy", {8, 64}, DType::F32, Role::Gradient);
    t.gh = gb.add_tensor("gh", {8, 64}, DType::F32, Role::Gradient);
    t.gw = gb.add_tensor("gw", {64, 64}, DType::F32, Role::Gradient);
    gb.add_node("matmul", {t.x, t.w}, {t.h}, Phase::Forward);                // step 0
    gb.add_node("relu", {t.h}, {t.y}, Phase::Forward);                       // step 1
    gb.add_node("sum", {t.y}, {t.loss}, Phase::Forward);                     // step 2
    gb.add_node("sum_grad", {t.loss}, {t.gy}, Phase::Backward);              // step 3
    gb.add_node("relu_grad", {t.gy, t.h}, {t.gh}, Phase::Backward);          // step 4
    gb.add_node("matmul_grad_weight", {t.x, t.gh}, {t.gw}, Phase::Backward); // step 5
    gb.tensor(t.h).saved_for_backward = true;
    gb.tensor(t.x).saved_for_backward = true;
    t.g = gb.take();
    finalize_graph(t.g);
    return t;
}

} // namespace

class TestLiveness : public QObject {
    Q_OBJECT
  private slots:
    void chainLifetimesAreHalfOpen() {
        Chain c = make_chain(false);
        Liveness lv = analyze_liveness(c.g, Mode::Inference);
        QCOMPARE(lv.steps(), 3u);
        auto life = [&](TensorIndex t) {
            return std::pair(lv.tensor_life[t].begin, lv.tensor_life[t].end);
        };
        QCOMPARE(life(c.x), std::pair(0u, 1u));
        QCOMPARE(life(c.a), std::pair(0u, 2u));
        QCOMPARE(life(c.b), std::pair(1u, 3u));
        QCOMPARE(life(c.y), std::pair(2u, 3u)); // outputs live to the end
        QCOMPARE(lv.storages.size(), size_t(4));
        QVERIFY(lv.notes.empty());
    }
    void inPlaceChainCollapsesIntoOneStorage() {
        Chain c = make_chain(true);
        Liveness lv = analyze_liveness(c.g, Mode::Inference);
        QCOMPARE(lv.storages.size(), size_t(1));
        QCOMPARE(lv.storages[0].members.size(), size_t(4));
        QCOMPARE(lv.storages[0].life.begin, 0u);
        QCOMPARE(lv.storages[0].life.end, 3u);
        QCOMPARE(lv.storages[0].bytes, uint64_t(1024));
    }
    void inPlaceRefusedWhenTargetReadLater() {
        GraphBuilder gb("refuse");
        auto x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
        auto a = gb.add_tensor("a", {4}, DType::F32, Role::Activation);
        auto y = gb.add_tensor("y", {4}, DType::F32, Role::Output);
        gb.add_node("relu", {x}, {a}, Phase::Forward);
        gb.add_node("add", {a, x}, {y}, Phase::Forward); // x is still read here
        gb.tensor(a).in_place_of = x;
        Graph g = gb.take();
        finalize_graph(g);
        Liveness lv = analyze_liveness(g, Mode::Inference);
        QVERIFY(lv.storage_of[a] != lv.storage_of[x]);
        QCOMPARE(lv.notes.size(), size_t(1));
        QVERIFY(lv.notes[0].find("read after") != std::string::npos);
    }
    void savedForBackwardDependsOnMode() {
        TinyTraining t = make_training();
        Liveness inf = analyze_liveness(t.g, Mode::Inference);
        Liveness fwd = analyze_liveness(t.g, Mode::Forward);
        Liveness train = analyze_liveness(t.g, Mode::Training);
        QCOMPARE(inf.steps(), 3u);
        QCOMPARE(fwd.steps(), 3u);
        QCOMPARE(train.steps(), 6u);
        // inference: h dies after relu (step 1)
        QCOMPARE(inf.tensor_life[t.h].end, 2u);
        // forward: h is retained for the backward pass that follows: to the last step
        QCOMPARE(fwd.tensor_life[t.h].end, 3u);
        // training: h lives through its last backward consumer, relu_grad at step 4
        QCOMPARE(train.tensor_life[t.h].end, 5u);
        QCOMPARE(train.tensor_life[t.x].end, 6u);
        // gradients do not exist outside training
        QVERIFY(!inf.active[t.gw]);
        QVERIFY(train.active[t.gw]);
        QCOMPARE(train.tensor_life[t.gw].begin, 5u);
    }
    void parametersPersistForTheWholeRun() {
        TinyTraining t = make_training();
        for (Mode m : {Mode::Inference, Mode::Training}) {
            Liveness lv = analyze_liveness(t.g, m);
            QCOMPARE(lv.tensor_life[t.w].begin, 0u);
            QCOMPARE(lv.tensor_life[t.w].end, lv.steps());
        }
    }
    void viewKeepsBaseStorageAlive() {
        GraphBuilder gb("view");
        auto x = gb.add_tensor("x", {16}, DType::F32, Role::Input);
        auto base = gb.add_tensor("base", {16}, DType::F32, Role::Activation);
        auto v = gb.add_tensor("v", {8}, DType::F32, Role::Activation);
        auto u = gb.add_tensor("u", {16}, DType::F32, Role::Activation);
        auto y = gb.add_tensor("y", {8}, DType::F32, Role::Output);
        gb.add_node("relu", {x}, {base}, Phase::Forward);  // 0
        gb.add_node("slice", {base}, {v}, Phase::Forward); // 1
        gb.add_node("relu", {x}, {u}, Phase::Forward);     // 2
        gb.add_node("relu", {v}, {y}, Phase::Forward);     // 3
        gb.tensor(v).view = ViewDesc{base, 32, 32, {}};
        Graph g = gb.take();
        finalize_graph(g);
        Liveness lv = analyze_liveness(g, Mode::Inference);
        QCOMPARE(lv.storage_of[v], lv.storage_of[base]);
        QCOMPARE(lv.offset_in_storage[v], uint64_t(32));
        const Storage& s = lv.storages[lv.storage_of[base]];
        QCOMPARE(s.root, base);
        QCOMPARE(s.bytes, uint64_t(64));
        QCOMPARE(s.life.begin, 0u);
        QCOMPARE(s.life.end, 4u); // base itself dies at step 1, its view at step 3
        QVERIFY(lv.storage_of[u] != lv.storage_of[base]);
    }
    void aliasGroupSharesOneStorage() {
        GraphBuilder gb("alias");
        auto x = gb.add_tensor("x", {16}, DType::F32, Role::Input);
        auto a = gb.add_tensor("a", {16}, DType::F32, Role::Activation);
        auto b = gb.add_tensor("b", {32}, DType::F32, Role::Activation);
        auto y = gb.add_tensor("y", {32}, DType::F32, Role::Output);
        gb.add_node("relu", {x}, {a}, Phase::Forward);
        gb.add_node("pad", {a}, {b}, Phase::Forward);
        gb.add_node("relu", {b}, {y}, Phase::Forward);
        gb.tensor(a).alias_group = "g";
        gb.tensor(b).alias_group = "g";
        Graph g = gb.take();
        finalize_graph(g);
        Liveness lv = analyze_liveness(g, Mode::Inference);
        QCOMPARE(lv.storage_of[a], lv.storage_of[b]);
        QCOMPARE(lv.storages[lv.storage_of[a]].bytes, uint64_t(128));
        QCOMPARE(lv.storages[lv.storage_of[a]].root, b); // the largest member owns the bytes
    }
    void modeNamesParse() {
        QCOMPARE(parse_mode("backward"), std::optional(Mode::Training));
        QCOMPARE(parse_mode("inference"), std::optional(Mode::Inference));
        QVERIFY(!parse_mode("sideways"));
        QCOMPARE(mode_name(Mode::Forward), std::string_view("forward"));
    }
};

QTEST_GUILESS_MAIN(TestLiveness)
#include "test_liveness.moc"
