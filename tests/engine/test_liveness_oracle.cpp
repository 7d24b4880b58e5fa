// The engine's liveness against a naive second one written from the documented rules
// (tests/support/naive_liveness.h), over thousands of random graphs that use every feature and
// over the GPT-2 and Llama graphs, in all three modes. A disagreement names the graph, the mode,
// the tensor and both answers.
#include "ir/validate.h"
#include "liveness/liveness.h"
#include "models/graph_builder.h"
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#include "naive_liveness.h"
#include "plan/planner.h"
#include "test_support.h"

#include <QObject>

#include <fmt/format.h>
#include <map>
#include <random>

using namespace tmmu;

namespace {

constexpr Mode kModes[] = {Mode::Inference, Mode::Forward, Mode::Training};

// The engine's storage of t named like the naive one: its smallest member.
TensorIndex representative(const Liveness& lv, TensorIndex t) {
    return lv.storages[lv.storage_of[t]].members.front();
}

// "" when the engine's answer equals the naive one, else the first difference.
std::string compare(const Graph& g, const Liveness& engine, const test::NaiveLiveness& naive) {
    auto id = [&](TensorIndex t) { return g.tensors[t].id; };
    for (TensorIndex t = 0; t < g.tensors.size(); ++t) {
        if (engine.active[t] != naive.active[t])
            return fmt::format("'{}': active {} (engine) vs {} (naive)", id(t),
                               bool(engine.active[t]), bool(naive.active[t]));
        if (!naive.active[t]) continue;
        const Lifetime& l = engine.tensor_life[t];
        if (l.begin != naive.begin[t] || l.end != naive.end[t])
            return fmt::format("'{}': lifetime [{}, {}) (engine) vs [{}, {}) (naive)", id(t),
                               l.begin, l.end, naive.begin[t], naive.end[t]);
        if (representative(engine, t) != naive.storage[t])
            return fmt::format("'{}': storage with '{}' (engine) vs with '{}' (naive)", id(t),
                               id(representative(engine, t)), id(naive.storage[t]));
        if (engine.offset_in_storage[t] != naive.offset[t])
            return fmt::format("'{}': offset in storage {} (engine) vs {} (naive)", id(t),
                               engine.offset_in_storage[t], naive.offset[t]);
    }
    for (const Storage& s : engine.storages) {
        const test::NaiveStorage n = test::naive_storage(g, naive, s.members.front());
        if (s.life.begin != n.begin || s.life.end != n.end || s.bytes != n.bytes)
            return fmt::format("storage of '{}': [{}, {}) {} B (engine) vs [{}, {}) {} B (naive)",
                               id(s.members.front()), s.life.begin, s.life.end, s.bytes, n.begin,
                               n.end, n.bytes);
        if (s.root != n.root || s.alignment != n.alignment || s.pinned_offset != n.pinned)
            return fmt::format("storage of '{}': root '{}', alignment {}, pinned {} (engine) vs "
                               "'{}', {}, {} (naive)",
                               id(s.members.front()), id(s.root), s.alignment,
                               s.pinned_offset ? int64_t(*s.pinned_offset) : -1, id(n.root),
                               n.alignment, n.pinned ? int64_t(*n.pinned) : -1);
    }
    return {};
}

std::string compare(const Graph& g, Mode mode) {
    return compare(g, analyze_liveness(g, mode), test::naive_liveness(g, mode));
}

// What the random graphs exercised, so a generator change cannot quietly drop a feature.
struct Coverage {
    std::map<std::string, size_t> seen;
    void count(const Graph& g, Mode mode, const test::NaiveLiveness& lv) {
        for (TensorIndex t = 0; t < g.tensors.size(); ++t) {
            const Tensor& x = g.tensors[t];
            if (!lv.active[t]) continue;
            seen[std::string(role_name(x.role))]++;
            if (x.view) seen[x.view->byte_offset ? "view at an offset" : "view"]++;
            if (x.view && g.tensors[x.view->base].view) seen["view of a view"]++;
            if (!x.alias_group.empty()) seen["alias group member"]++;
            if (x.saved_for_backward) seen[fmt::format("saved ({})", mode_name(mode))]++;
            if (!x.must_not_alias.empty()) seen["must_not_alias"]++;
            if (x.pinned_offset) seen[x.view ? "pinned view" : "pinned"]++;
            if (x.view && !x.alias_group.empty() &&
                x.alias_group == g.tensors[x.view->base].alias_group)
                seen["view in its base's alias group"]++;
            if (x.in_place_of != kNone)
                seen[lv.in_place_accepted[t] ? "in-place accepted" : "in-place refused"]++;
        }
    }
};

// Features random_graph lacks, added around one of its graphs: an optimizer step updating a
// parameter in place, optimizer state, a workspace, a view of a view at nonzero offsets, an
// in-place write over a saved tensor, and an input only backward reads.
Graph with_every_feature(uint32_t seed, size_t nodes) {
    std::mt19937_64 rng(seed);
    GraphBuilder gb("features");
    const TensorIndex w = gb.add_tensor("w", {64}, DType::F32, Role::Parameter);
    const TensorIndex m = gb.add_tensor("m", {64}, DType::F32, Role::OptimizerState);
    const TensorIndex x = gb.add_tensor("x", {64}, DType::F32, Role::Input);
    const TensorIndex late = gb.add_tensor("late", {64}, DType::F32, Role::Input);
    if (seed % 2 == 0) gb.tensor(w).pinned_offset = 4096 * (1 + seed % 3); // a pinned weight
    if (seed % 5 == 0) gb.tensor(x).alignment = 256;
    std::vector<TensorIndex> values{x, w};
    std::vector<TensorIndex> saved;
    for (size_t n = 0; n < nodes; ++n) {
        const TensorIndex a =
            values[values.size() - 1 - rng() % std::min<size_t>(values.size(), 3)];
        const TensorIndex b =
            values[values.size() - 1 - rng() % std::min<size_t>(values.size(), 4)];
        const TensorIndex ws = gb.add_tensor("ws", {16}, DType::F32, Role::Workspace);
        const TensorIndex out = gb.add_tensor("h", {64}, DType::F32, Role::Activation);
        if (rng() % 3 == 0 && gb.tensor(a).role == Role::Activation &&
            gb.tensor(a).shape == gb.tensor(out).shape) // in place needs equal sizes
            gb.tensor(out).in_place_of = a;
        if (rng() % 4 == 0) gb.tensor(out).saved_for_backward = true;
        if (rng() % 5 == 0) gb.tensor(out).alias_group = fmt::format("k{}", rng() % 2);
        gb.add_node("op", {a, b}, {ws, out}, Phase::Forward);
        values.push_back(out);
        if (gb.tensor(out).saved_for_backward) saved.push_back(out);
        if (rng() % 4 == 0) { // a view of a view, at nonzero offsets
            const TensorIndex v1 = gb.add_tensor("v", {32}, DType::F32, Role::Activation);
            gb.tensor(v1).view = ViewDesc{out, 64, 128, {}};
            const TensorIndex v2 = gb.add_tensor("vv", {8}, DType::F32, Role::Activation);
            gb.tensor(v2).view = ViewDesc{v1, 32, 32, {}};
            // Pinned so that its base starts at 8192, or at 0 (exactly the view's offset); one
            // start per graph, since alias groups may join these bases.
            if (rng() % 3 == 0) gb.tensor(v2).pinned_offset = (seed % 4 < 2 ? 8192 : 0) + 64 + 32;
            // A view in its base's alias group: the two are joined twice (view, then group).
            if (rng() % 4 == 0 && !gb.tensor(out).alias_group.empty())
                gb.tensor(v1).alias_group = gb.tensor(out).alias_group;
            gb.add_node("view", {out}, {v1}, Phase::Forward);
            gb.add_node("view", {v1}, {v2}, Phase::Forward);
            values.push_back(v2);
        }
    }
    const TensorIndex loss = gb.add_tensor("loss", {1}, DType::F32, Role::Output);
    gb.add_node("loss", {values.back()}, {loss}, Phase::Forward);
    TensorIndex grad = loss;
    for (size_t i = saved.size(); i-- > 0;) {
        const TensorIndex g = gb.add_tensor("g", {64}, DType::F32, Role::Gradient);
        if (rng() % 3 == 0) gb.tensor(g).in_place_of = saved[i]; // saved: refused unless inference
        gb.add_node("grad", {grad, saved[i], late}, {g}, Phase::Backward);
        grad = g;
    }
    const TensorIndex gw = gb.add_tensor("gw", {64}, DType::F32, Role::Gradient);
    gb.add_node("grad_w", {grad}, {gw}, Phase::Backward);
    const TensorIndex m2 = gb.add_tensor("m_new", {64}, DType::F32, Role::OptimizerState);
    gb.tensor(m2).in_place_of = m;
    const TensorIndex w2 = gb.add_tensor("w_new", {64}, DType::F32, Role::Parameter);
    gb.tensor(w2).in_place_of = w;
    gb.add_node("adam", {m, gw}, {m2}, Phase::Optimizer);
    gb.add_node("apply", {w, m2}, {w2}, Phase::Optimizer);
    Graph g = gb.take();
    finalize_graph(g);
    return g;
}

} // namespace

class TestLivenessOracle : public QObject {
    Q_OBJECT
  private slots:
    void randomGraphsAgreeWithTheEngine() {
        Coverage cov;
        for (uint32_t seed = 0; seed < 1500; ++seed) {
            const Graph graphs[] = {test::random_graph(seed, 5 + seed % 60, seed % 2 == 0),
                                    with_every_feature(seed, 3 + seed % 25)};
            for (const Graph& g : graphs)
                for (Mode mode : kModes) {
                    const test::NaiveLiveness naive = test::naive_liveness(g, mode);
                    cov.count(g, mode, naive);
                    const std::string diff = compare(g, analyze_liveness(g, mode), naive);
                    QVERIFY2(diff.empty(),
                             qPrintable(QString::fromStdString(fmt::format(
                                 "{} seed {} mode {}: {}", g.name, seed, mode_name(mode), diff))));
                }
        }
        std::string seen;
        for (const auto& [feature, n] : cov.seen)
            seen += fmt::format("{} {}, ", feature, n);
        qInfo("features compared: %s", seen.c_str());
        for (const char* feature : {"parameter",
                                    "input",
                                    "output",
                                    "activation",
                                    "gradient",
                                    "optimizer_state",
                                    "workspace",
                                    "view",
                                    "view at an offset",
                                    "view of a view",
                                    "alias group member",
                                    "saved (inference)",
                                    "saved (forward)",
                                    "saved (training)",
                                    "must_not_alias",
                                    "pinned",
                                    "pinned view",
                                    "view in its base's alias group",
                                    "in-place accepted",
                                    "in-place refused"})
            QVERIFY2(cov.seen[feature] >= 100, feature);
    }

    void transformerGraphsAgreeWithTheEngine() {
        for (const char* config : {"gpt2-small.json", "tinyllama-1.1b.json"}) {
            const TransformerConfig c =
                load_transformer_config(std::string(TMMU_SOURCE_DIR "/resources/models/") + config);
            for (Mode mode : kModes) {
                GraphRequest r;
                r.batch = 1;
                r.seq = 32;
                r.mode = mode;
                const Graph g = build_transformer_graph(c, r);
                const std::string diff = compare(g, mode);
                QVERIFY2(diff.empty(), qPrintable(QString::fromStdString(fmt::format(
                                           "{} {}: {}", config, mode_name(mode), diff))));
            }
        }
    }

    // The tests' plan checker (naive lifetimes, its own loops) passes real plans and reports a
    // tensor moved onto a live neighbour, naming both.
    void planCheckerReportsOverlaps() {
        const Graph g = with_every_feature(3, 20);
        PlanOptions options;
        options.strategy = "greedy-size";
        Plan plan = plan_graph(g, Mode::Training, options, Progress{}, "features");
        QVERIFY2(test::check_plan_lifetimes(g, Mode::Training, plan).empty(),
                 test::check_plan_lifetimes(g, Mode::Training, plan).c_str());
        const test::NaiveLiveness lv = test::naive_liveness(g, Mode::Training);
        // Only a tensor alone in its storage moves without its views: the overlap is then the
        // only thing wrong.
        auto alone = [&](TensorIndex t) {
            return std::count(lv.storage.begin(), lv.storage.end(), lv.storage[t]) == 1;
        };
        for (PlannedTensor& a : plan.tensors)
            for (PlannedTensor& b : plan.tensors) {
                const TensorIndex ia = g.find_tensor(a.id), ib = g.find_tensor(b.id);
                if (lv.storage[ia] == lv.storage[ib] || a.arena != b.arena || a.size == 0 ||
                    b.size == 0 || !alone(ia) || lv.begin[ia] >= lv.end[ib] ||
                    lv.begin[ib] >= lv.end[ia] || lv.offset[ib] != 0)
                    continue;
                const uint64_t kept = a.offset;
                a.offset = b.offset;
                const std::string found = test::check_plan_lifetimes(g, Mode::Training, plan);
                QVERIFY2(found.find("share bytes") != std::string::npos &&
                             found.find(a.id) != std::string::npos &&
                             found.find(b.id) != std::string::npos,
                         found.c_str());
                a.offset = kept;
                return;
            }
        QFAIL("no two tensors of one arena live at the same time");
    }

    // A must_not_alias pair is kept apart at any time: moved together while their lifetimes
    // are disjoint, the checker reports it, and the same move without the rule passes.
    void planCheckerReportsMustNotAliasAtAnyTime() {
        for (const bool rule : {true, false}) {
            GraphBuilder gb("never");
            const TensorIndex x = gb.add_tensor("x", {64}, DType::F32, Role::Input);
            const TensorIndex a = gb.add_tensor("a", {64}, DType::F32, Role::Activation);
            const TensorIndex c = gb.add_tensor("c", {64}, DType::F32, Role::Activation);
            const TensorIndex b = gb.add_tensor("b", {64}, DType::F32, Role::Activation);
            const TensorIndex y = gb.add_tensor("y", {64}, DType::F32, Role::Output);
            gb.add_node("n1", {x}, {a}, Phase::Forward);
            gb.add_node("n2", {a}, {c}, Phase::Forward);
            gb.add_node("n3", {c}, {b}, Phase::Forward);
            gb.add_node("n4", {b}, {y}, Phase::Forward);
            if (rule) gb.tensor(b).must_not_alias.push_back(a);
            Graph g = gb.take();
            finalize_graph(g);
            const test::NaiveLiveness lv = test::naive_liveness(g, Mode::Inference);
            QVERIFY(lv.end[a] <= lv.begin[b]); // disjoint: only the rule keeps them apart
            Plan plan = plan_graph(g, Mode::Inference, PlanOptions{}, Progress{}, "never");
            QCOMPARE(test::check_plan_lifetimes(g, Mode::Inference, plan), std::string());
            auto planned = [&](TensorIndex t) -> PlannedTensor& {
                auto it =
                    std::find_if(plan.tensors.begin(), plan.tensors.end(),
                                 [&](const PlannedTensor& p) { return p.id == g.tensors[t].id; });
                if (it == plan.tensors.end())
                    qFatal("tensor %s is not planned", g.tensors[t].id.c_str());
                return *it;
            };
            QVERIFY(planned(b).offset != planned(a).offset || !rule);
            planned(b).offset = planned(a).offset;
            const std::string found = test::check_plan_lifetimes(g, Mode::Inference, plan);
            if (rule)
                QVERIFY2(found.find("(must_not_alias)") != std::string::npos, found.c_str());
            else
                QVERIFY2(found.empty(), found.c_str());
        }
    }

    // Pins that cannot all hold are refused by the engine, and the naive storage says why.
    void conflictingPinsAreRefusedByBoth() {
        for (const auto& [view_pin, other_pin] :
             {std::pair<uint64_t, uint64_t>{32, 0}, std::pair<uint64_t, uint64_t>{1000, 2000}}) {
            GraphBuilder gb("pins");
            const TensorIndex x = gb.add_tensor("x", {64}, DType::F32, Role::Input);
            const TensorIndex h = gb.add_tensor("h", {64}, DType::F32, Role::Activation);
            const TensorIndex v = gb.add_tensor("v", {16}, DType::F32, Role::Activation);
            gb.tensor(v).view = ViewDesc{h, 64, 64, {}};
            gb.tensor(v).pinned_offset = view_pin; // below 64: under its base's start
            if (other_pin) gb.tensor(h).pinned_offset = other_pin; // base at 936 vs 2000
            const TensorIndex y = gb.add_tensor("y", {16}, DType::F32, Role::Output);
            gb.add_node("op", {x}, {h}, Phase::Forward);
            gb.add_node("view", {h}, {v}, Phase::Forward);
            gb.add_node("op", {v}, {y}, Phase::Forward);
            Graph g = gb.take();
            finalize_graph(g);
            TMMU_EXPECT_FAILURE(analyze_liveness(g, Mode::Inference), FailureCode::InvalidIrShapes);
            const test::NaiveLiveness naive = test::naive_liveness(g, Mode::Inference);
            QVERIFY(!test::naive_storage(g, naive, naive.storage[v]).pin_conflict.empty());
        }
    }

    // The oracle is not blind: each planted liveness bug is reported.
    void plantedBugsAreReported() {
        const Graph g = with_every_feature(7, 20);
        const Mode mode = Mode::Training;
        const test::NaiveLiveness naive = test::naive_liveness(g, mode);
        const Liveness good = analyze_liveness(g, mode);
        QVERIFY(compare(g, good, naive).empty());
        const auto first = [&](auto pred) {
            for (TensorIndex t = 0; t < g.tensors.size(); ++t)
                if (good.active[t] && pred(t)) return t;
            return TensorIndex(kNone);
        };
        const TensorIndex saved =
            first([&](TensorIndex t) { return g.tensors[t].saved_for_backward; });
        const TensorIndex view = first([&](TensorIndex t) { return bool(g.tensors[t].view); });
        const TensorIndex inplace =
            first([&](TensorIndex t) { return naive.in_place_accepted[t]; });
        QVERIFY(saved != kNone && view != kNone && inplace != kNone);

        Liveness bad = good; // a lifetime one step short
        bad.tensor_life[saved].end -= 1;
        QVERIFY(!compare(g, bad, naive).empty());
        bad = good; // a view placed at its base's start instead of its offset
        bad.offset_in_storage[view] = 0;
        QVERIFY(!compare(g, bad, naive).empty());
        bad = good; // an accepted in-place write given bytes of its own
        Storage own;
        own.members = {inplace};
        own.life = good.tensor_life[inplace];
        own.bytes = g.tensors[inplace].bytes;
        auto& members = bad.storages[bad.storage_of[inplace]].members;
        members.erase(std::find(members.begin(), members.end(), inplace));
        bad.storage_of[inplace] = uint32_t(bad.storages.size());
        bad.storages.push_back(own);
        QVERIFY(!compare(g, bad, naive).empty());
        bad = good; // a storage that dies before its last member
        bad.storages[bad.storage_of[saved]].life.end -= 1;
        QVERIFY(!compare(g, bad, naive).empty());
    }
};

QTEST_GUILESS_MAIN(TestLivenessOracle)
#include "test_liveness_oracle.moc"
