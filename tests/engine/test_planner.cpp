#include "encoding/sha256.h"
#include "io/trace.h"
#include "ir/ir_json.h"
#include "ir/validate.h"
#include "models/graph_builder.h"
#include "naive_liveness.h"
#include "plan/plan_hash.h"
#include "plan/planner.h"
#include "plan/replan.h"
#include "plan/shard_spec.h"
#include "plan/strategy.h"
#include "test_support.h"

#include <QObject>

using namespace tmmu;

namespace {

// A plan of an offset problem, checked against the problem's own lifetimes (not the plan's):
// buffers that meet in time never share bytes. Independent of the validator and the planner.
std::string problem_plan_is_disjoint(const OffsetProblem& p, const Plan& plan) {
    OffsetSolution s;
    s.offsets.assign(p.buffers.size(), 0);
    for (const PlannedTensor& t : plan.tensors)
        s.offsets.at(std::stoul(t.id)) = t.offset; // ids "0", "1", ... name the buffers
    s.height = test::height_of(p, s.offsets);
    return test::check_solution(p, s);
}

const std::string kDynamicSeq =
    std::string(TMMU_SOURCE_DIR) + "/resources/models/examples/dynamic_seq.json";

// The dynamic example bound at seq 128, and its inference plan there.
std::pair<Graph, Plan> dynamic_seq_at_128() {
    Graph g = load_ir_file(kDynamicSeq);
    bind_dims(g, {{"seq", 128}}, "--dim");
    Plan first = plan_graph(g, Mode::Inference, {}, {}, kDynamicSeq);
    return {std::move(g), std::move(first)};
}

// The failure of running `iterations` in inference from `first`, the plan of `g`, if any.
std::optional<Failure>
schedule_failure(const Graph& g, const Plan& first, const std::vector<DimBinding>& iterations,
                 const std::function<void(const IterationOutcome&)>& seen = nullptr) {
    return test::capture_failure(
        [&] { run_shape_schedule(g, first, Mode::Inference, {}, iterations, seen, {}); });
}

Graph chain(size_t length, bool in_place) {
    GraphBuilder gb("chain");
    TensorIndex prev = gb.add_tensor("x", {256}, DType::F32, Role::Input);
    for (size_t i = 0; i < length; ++i) {
        Role role = i + 1 == length ? Role::Output : Role::Activation;
        TensorIndex next = gb.add_tensor("y", {256}, DType::F32, role);
        if (in_place) gb.tensor(next).in_place_of = prev;
        gb.add_node("relu", {prev}, {next}, Phase::Forward);
        prev = next;
    }
    Graph g = gb.take();
    finalize_graph(g);
    return g;
}

// optimal with a light node budget: these tests check validity and inequalities, which hold at
// every budget, over hundreds of plans each.
PlanOptions with_strategy(const std::string& s) {
    PlanOptions o;
    o.strategy = s;
    o.search_budget = 1'000;
    return o;
}

// One parameter w of `elements` f32 read by a forward node (n000000) and a backward node
// (n000001), then updated in place by the optimizer (n000002).
Graph trained_parameter(int64_t elements, const char* input_id = nullptr) {
    GraphBuilder gb("trained");
    TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
    TensorIndex w = gb.add_tensor("w", {elements}, DType::F32, Role::Parameter);
    TensorIndex y = gb.add_tensor("y", {4}, DType::F32, Role::Activation);
    gb.add_node("matmul", {x, w}, {y}, Phase::Forward);
    TensorIndex g = gb.add_tensor("w.grad", {elements}, DType::F32, Role::Gradient);
    gb.add_node("matmul_grad_weight", {y, w}, {g}, Phase::Backward);
    TensorIndex updated = gb.add_tensor("w.updated", {elements}, DType::F32, Role::Parameter);
    gb.tensor(updated).in_place_of = w;
    gb.add_node("sgd", {w, g}, {updated}, Phase::Optimizer);
    Graph graph = gb.take();
    if (input_id) graph.tensors[x].id = input_id;
    finalize_graph(graph);
    return graph;
}

// Batch-norm style: a forward node reads x and a parameter rm (t000001) and writes y and rm's
// new value in place (t000003); with output_over_activation the output y (t000004) is written
// in place over h (t000002).
Graph forward_update(bool output_over_activation) {
    GraphBuilder gb("update");
    TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
    TensorIndex rm = gb.add_tensor("rm", {8}, DType::F32, Role::Parameter);
    TensorIndex h = gb.add_tensor("h", {8}, DType::F32, Role::Activation);
    TensorIndex rm2 = gb.add_tensor("rm2", {8}, DType::F32, Role::Parameter);
    gb.tensor(rm2).in_place_of = rm;
    gb.add_node("batchnorm", {x, rm}, {h, rm2}, Phase::Forward);
    TensorIndex y = gb.add_tensor("y", {8}, DType::F32, Role::Output);
    if (output_over_activation) gb.tensor(y).in_place_of = h;
    gb.add_node("relu", {h}, {y}, Phase::Forward);
    Graph graph = gb.take();
    finalize_graph(graph);
    return graph;
}

// A two-layer step. The forward pass (steps 0-4): fc1 writes h1 (128 B, saved_for_backward),
// slice a view of h1's first half (h1's buffer, so not counted twice), relu h2 (256 B), fc2 y
// (32 B), loss the loss (4 B). The backward pass reads the loss, h2, h1 and the view.
Graph two_layer_step() {
    GraphBuilder gb("step");
    TensorIndex x = gb.add_tensor("x", {16}, DType::F32, Role::Input);
    TensorIndex h1 = gb.add_tensor("h1", {32}, DType::F32, Role::Activation);
    gb.tensor(h1).saved_for_backward = true;
    gb.add_node("fc1", {x}, {h1}, Phase::Forward);
    TensorIndex h1_half = gb.add_tensor("h1.half", {16}, DType::F32, Role::Activation);
    gb.tensor(h1_half).view = ViewDesc{h1, 0, 0, {}};
    gb.add_node("slice", {h1}, {h1_half}, Phase::Forward);
    TensorIndex h2 = gb.add_tensor("h2", {64}, DType::F32, Role::Activation);
    gb.add_node("relu", {h1}, {h2}, Phase::Forward);
    TensorIndex y = gb.add_tensor("y", {8}, DType::F32, Role::Activation);
    gb.add_node("fc2", {h2}, {y}, Phase::Forward);
    TensorIndex loss = gb.add_tensor("loss", {1}, DType::F32, Role::Activation);
    gb.add_node("loss", {y}, {loss}, Phase::Forward);
    TensorIndex gy = gb.add_tensor("gy", {8}, DType::F32, Role::Gradient);
    gb.add_node("loss_grad", {loss}, {gy}, Phase::Backward);
    TensorIndex gh2 = gb.add_tensor("gh2", {64}, DType::F32, Role::Gradient);
    gb.add_node("fc2_grad", {gy, h2}, {gh2}, Phase::Backward);
    TensorIndex gx = gb.add_tensor("gx", {16}, DType::F32, Role::Output);
    gb.add_node("fc1_grad", {gh2, h1, h1_half}, {gx}, Phase::Backward);
    Graph graph = gb.take();
    finalize_graph(graph);
    return graph;
}

PlanOptions for_rank(uint32_t rank, uint32_t world, std::vector<Role> roles) {
    PlanOptions o = with_strategy("auto");
    o.shard = {world, rank, std::move(roles)};
    return o;
}

const PlannedTensor& planned(const Plan& plan, const std::string& id) {
    for (const PlannedTensor& t : plan.tensors)
        if (t.id == id) return t;
    throw std::runtime_error("no planned tensor " + id);
}

// An activation a (t000001) and a view v of its bytes from view_offset (t000002), both read by
// the node writing the output (t000003).
Graph activation_with_view(DType base_dtype, int64_t base_elements, DType view_dtype,
                           uint64_t view_offset, int64_t view_elements) {
    GraphBuilder gb("view");
    TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
    TensorIndex a = gb.add_tensor("a", {base_elements}, base_dtype, Role::Activation);
    gb.add_node("expand", {x}, {a}, Phase::Forward);
    TensorIndex v = gb.add_tensor("v", {view_elements}, view_dtype, Role::Activation);
    gb.tensor(v).view = ViewDesc{a, view_offset, 0, {}};
    gb.add_node("slice", {a}, {v}, Phase::Forward);
    TensorIndex out = gb.add_tensor("out", {4}, DType::F32, Role::Output);
    gb.add_node("reduce", {a, v}, {out}, Phase::Forward);
    Graph graph = gb.take();
    finalize_graph(graph);
    return graph;
}

} // namespace

class TestPlanner : public QObject {
    Q_OBJECT
  private slots:
    void inPlaceChainUsesOneSlot() {
        Plan plan =
            plan_graph(chain(8, true), Mode::Inference, with_strategy("slots"), {}, "chain");
        QCOMPARE(plan.arenas.size(), size_t(1));
        QCOMPARE(plan.arenas[0].config.name, std::string("activations"));
        QCOMPARE(plan.arenas[0].metrics.slot_count, 1u);
        QCOMPARE(plan.arenas[0].metrics.peak_bytes, uint64_t(1024));
        QCOMPARE(plan.tensors.size(), size_t(9));
        for (const auto& t : plan.tensors)
            QCOMPARE(t.offset, uint64_t(0));
    }
    void plainChainAlternatesTwoSlots() {
        Plan plan =
            plan_graph(chain(8, false), Mode::Inference, with_strategy("slots"), {}, "chain");
        QCOMPARE(plan.arenas[0].metrics.slot_count, 2u);
        QCOMPARE(plan.arenas[0].metrics.max_live, 2u);
        QCOMPARE(plan.arenas[0].metrics.peak_bytes, uint64_t(2048));
        QCOMPARE(plan.arenas[0].metrics.lower_bound, uint64_t(2048));
    }
    // One bar for the whole plan: each arena's strategy reports inside that arena's share, so
    // the fraction never runs back (auto reported 0..1 per arena over the whole bar before).
    void progressNeverRunsBack() {
        std::vector<std::pair<double, std::string>> seen;
        Progress progress;
        progress.on_progress = [&](double f, std::string_view stage) {
            seen.emplace_back(f, std::string(stage));
        };
        const Plan plan = plan_graph(load_ir_file(kDynamicSeq), Mode::Training,
                                     with_strategy("auto"), progress, "dynamic");
        QVERIFY(plan.arenas.size() >= 2);
        QVERIFY(seen.size() > plan.arenas.size());
        for (size_t i = 1; i < seen.size(); ++i)
            QVERIFY2(seen[i - 1].first <= seen[i].first,
                     (seen[i - 1].second + " then " + seen[i].second).c_str());
        QCOMPARE(seen.back(), (std::pair<double, std::string>{1.0, "done"}));
        QCOMPARE(std::count_if(seen.begin(), seen.end(),
                               [](const auto& p) { return p.second == "auto: done"; }),
                 std::ptrdiff_t(plan.arenas.size()));
    }
    void unknownStrategyIsAnArgumentError() {
        TMMU_EXPECT_FAILURE(
            plan_graph(chain(2, false), Mode::Inference, with_strategy("magic"), {}, "c"),
            FailureCode::InvalidArgument);
    }
    void tooSmallArenaFailsWithItsName() {
        PlanOptions o = with_strategy("auto");
        o.policy.set_capacity("activations", 1500);
        auto f = test::capture_failure(
            [&] { plan_graph(chain(4, false), Mode::Inference, o, {}, "c"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::ArenaTooSmall);
        QVERIFY2(std::string(f->what()).find("activations") != std::string::npos, f->what());
    }
    // Each arena fits in 64 bits but together they do not: the planner refuses the plan rather
    // than hand every front end a total it cannot represent.
    void totalsThatOverflowAreRefused() {
        GraphBuilder gb("huge");
        const TensorIndex w = gb.add_tensor("w", {uint64_t(1) << 61}, DType::F32, Role::Parameter);
        const TensorIndex y = gb.add_tensor("y", {uint64_t(1) << 61}, DType::F32, Role::Output);
        gb.add_node("copy", {w}, {y}, Phase::Forward);
        Graph g = gb.take();
        finalize_graph(g);
        const auto f = test::capture_failure(
            [&] { plan_graph(g, Mode::Inference, with_strategy("greedy-size"), {}, "huge"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AllocationOverflow);
        QCOMPARE(QString::fromStdString(f->where()), QString("totals.peak_bytes"));
    }
    void nonPowerOfTwoAlignmentIsRejected() {
        PlanOptions o;
        o.policy.set_alignment(96);
        TMMU_EXPECT_FAILURE(plan_graph(chain(2, false), Mode::Inference, o, {}, "c"),
                            FailureCode::AlignmentViolation);
    }
    void offsetsHonourArenaAlignment() {
        PlanOptions o = with_strategy("best-fit");
        o.policy.set_alignment(4096);
        Plan plan = plan_graph(test::random_graph(7, 40, false), Mode::Inference, o, {}, "r");
        for (const auto& t : plan.tensors)
            if (plan.tensors.size() && t.offset % 4096 != 0) {
                // Only views may sit inside their base at an unaligned offset.
                bool shares = false;
                for (const auto& u : plan.tensors)
                    shares |= (&u != &t && u.arena == t.arena && u.buffer == t.buffer);
                QVERIFY2(shares, t.id.c_str());
            }
    }
    void mustNotAliasKeepsTensorsApartAtAllTimes() {
        // x -> a -> b -> c -> y: a and c never live at once, so they would share bytes.
        auto build = [](bool keep_apart) {
            GraphBuilder gb("mna");
            auto x = gb.add_tensor("x", {256}, DType::F32, Role::Input);
            auto a = gb.add_tensor("a", {256}, DType::F32, Role::Activation);
            auto b = gb.add_tensor("b", {256}, DType::F32, Role::Activation);
            auto c = gb.add_tensor("c", {256}, DType::F32, Role::Activation);
            auto y = gb.add_tensor("y", {256}, DType::F32, Role::Output);
            gb.add_node("relu", {x}, {a}, Phase::Forward);
            gb.add_node("relu", {a}, {b}, Phase::Forward);
            gb.add_node("relu", {b}, {c}, Phase::Forward);
            gb.add_node("relu", {c}, {y}, Phase::Forward);
            if (keep_apart) gb.tensor(a).must_not_alias = {c};
            Graph g = gb.take();
            finalize_graph(g);
            return g;
        };
        Graph free_graph = build(false);
        Graph g = build(true);
        auto offset_of = [](const Plan& p, const char* id) {
            for (const auto& t : p.tensors)
                if (t.id == id) return t.offset;
            return UINT64_MAX;
        };
        for (const OffsetStrategy* s : all_strategies()) {
            Plan free_plan = plan_graph(free_graph, Mode::Inference,
                                        with_strategy(std::string(s->name())), {}, "f");
            Plan plan =
                plan_graph(g, Mode::Inference, with_strategy(std::string(s->name())), {}, "m");
            QCOMPARE(offset_of(free_plan, "t000001"), offset_of(free_plan, "t000003")); // reuse
            QVERIFY(offset_of(plan, "t000001") != offset_of(plan, "t000003"));
        }
    }
    // A gradient that must not alias its parameter lives in another arena, where no plan could
    // give them the same bytes: its lifetime stays its own (it was widened to the parameter's,
    // holding the gradient's bytes from the first step). Routed to one arena, they are kept
    // apart over the whole run.
    void mustNotAliasAcrossArenasKeepsLifetimes() {
        auto build = [](bool rule) {
            GraphBuilder gb("mna_arenas");
            auto x = gb.add_tensor("x", {256}, DType::F32, Role::Input);
            auto w = gb.add_tensor("w", {256}, DType::F32, Role::Parameter);
            auto h = gb.add_tensor("h", {256}, DType::F32, Role::Activation);
            auto y = gb.add_tensor("y", {256}, DType::F32, Role::Output);
            auto gw = gb.add_tensor("g_w", {256}, DType::F32, Role::Gradient);
            gb.add_node("fc", {x, w}, {h}, Phase::Forward);
            gb.add_node("relu", {h}, {y}, Phase::Forward);
            gb.add_node("fc_bwd", {x, y}, {gw}, Phase::Backward);
            if (rule) gb.tensor(gw).must_not_alias = {w};
            Graph g = gb.take();
            finalize_graph(g);
            return g;
        };
        const Plan free_plan = plan_graph(build(false), Mode::Training, {}, {}, "f");
        const Plan plan = plan_graph(build(true), Mode::Training, {}, {}, "m");
        QCOMPARE(plan.series.live_bytes, free_plan.series.live_bytes);
        const size_t gradients = 2; // parameters, activations, gradients, optimizer
        QCOMPARE(plan.arenas[gradients].config.name, std::string("gradients"));
        QCOMPARE(plan.series.live_bytes[gradients].front(), uint64_t(0));

        PlanOptions one_arena;
        one_arena.policy.route(Role::Gradient, "parameters");
        const Plan shared = plan_graph(build(true), Mode::Training, one_arena, {}, "s");
        QCOMPARE(shared.series.live_bytes[0].front(), uint64_t(2 * 1024)); // w and g_w
    }
    void randomGraphsPlanValidlyInEveryModeAndStrategy() {
        // Every size and both kinds of graph occur in the first 75 seeds (property_cases).
        for (uint32_t seed = 0; seed < test::property_cases(300); ++seed) {
            Graph g = test::random_graph(seed, 10 + seed % 50, seed % 2 == 0);
            for (Mode m : {Mode::Inference, Mode::Forward, Mode::Training}) {
                for (const OffsetStrategy* s : all_strategies()) {
                    Plan plan = plan_graph(g, m, with_strategy(std::string(s->name())), {}, "r");
                    // Lifetimes and storages from the tests' naive liveness, not the planner's.
                    const std::string wrong = test::check_plan_lifetimes(g, m, plan);
                    QVERIFY2(wrong.empty(), wrong.c_str());
                    for (const auto& a : plan.arenas) {
                        QCOMPARE(a.metrics.slot_count, a.metrics.max_live);
                        QVERIFY(a.metrics.peak_bytes >= a.metrics.lower_bound);
                    }
                }
            }
        }
    }
    void autoIsNeverWorseThanAnyHeuristic() {
        for (uint32_t seed = 0; seed < 100; ++seed) {
            Graph g = test::random_graph(1000 + seed, 60, true);
            Plan best = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "r");
            size_t compared = 0;
            for (const OffsetStrategy* s : all_strategies()) {
                // auto is the heuristics' minimum; optimal searches below it, so auto <= optimal
                // would demand that the search never improves (optimalIsNeverWorseThanAuto).
                if (s->name() == "optimal" || s->name() == "auto") continue;
                ++compared;
                Plan p =
                    plan_graph(g, Mode::Training, with_strategy(std::string(s->name())), {}, "r");
                for (size_t a = 0; a < p.arenas.size(); ++a)
                    QVERIFY2(best.arenas[a].metrics.peak_bytes <= p.arenas[a].metrics.peak_bytes,
                             (std::string(s->name()) + " seed " + std::to_string(seed)).c_str());
            }
            QCOMPARE(compared, all_strategies().size() - 2);
        }
    }
    void optimalIsNeverWorseThanAuto() {
        for (uint32_t seed = 0; seed < 100; ++seed) {
            Graph g = test::random_graph(1000 + seed, 60, true);
            Plan automatic = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "r");
            Plan optimal = plan_graph(g, Mode::Training, with_strategy("optimal"), {}, "r");
            QCOMPARE(optimal.arenas.size(), automatic.arenas.size());
            for (size_t a = 0; a < optimal.arenas.size(); ++a)
                QVERIFY2(optimal.arenas[a].metrics.peak_bytes <=
                             automatic.arenas[a].metrics.peak_bytes,
                         ("seed " + std::to_string(seed)).c_str());
        }
    }
    void samePlanAndHashOnRepeatedRuns() {
        Graph g = test::random_graph(42, 80, true);
        Plan first = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "r");
        for (int i = 0; i < 3; ++i) {
            Plan again = plan_graph(test::random_graph(42, 80, true), Mode::Training,
                                    with_strategy("auto"), {}, "r");
            QCOMPARE(to_hex(again.plan_hash), to_hex(first.plan_hash));
            QCOMPARE(again.tensors.size(), first.tensors.size());
            for (size_t t = 0; t < first.tensors.size(); ++t)
                QCOMPARE(again.tensors[t].offset, first.tensors[t].offset);
        }
        Plan other_mode = plan_graph(g, Mode::Forward, with_strategy("auto"), {}, "r");
        QVERIFY(to_hex(other_mode.plan_hash) != to_hex(first.plan_hash));
    }
    void seriesPeaksMatchMetrics() {
        Graph g = test::random_graph(5, 80, true);
        Plan plan = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "r");
        QCOMPARE(plan.series.times.size(), plan.execution_order.size());
        for (size_t a = 0; a < plan.arenas.size(); ++a) {
            const auto& live = plan.series.live_bytes[a];
            const auto& high = plan.series.high_water[a];
            QCOMPARE(*std::max_element(live.begin(), live.end()),
                     plan.arenas[a].metrics.lower_bound);
            QCOMPARE(*std::max_element(high.begin(), high.end()),
                     plan.arenas[a].metrics.peak_bytes);
            for (size_t k = 0; k < live.size(); ++k)
                QVERIFY(live[k] <= high[k]);
        }
    }
    void problemPlansUseOneArena() {
        OffsetProblem p = test::random_problem(3, 200, 100, 4096, true);
        std::vector<std::string> ids;
        for (size_t i = 0; i < p.buffers.size(); ++i)
            ids.push_back(std::to_string(i));
        Plan plan = plan_problem(p, ids, with_strategy("auto"), {}, "random");
        QVERIFY(!plan.mode.has_value());
        QVERIFY(!plan.retention); // no phases, so nothing to retain
        QCOMPARE(plan.arenas.size(), size_t(1));
        QCOMPARE(plan.tensors.size(), size_t(200));
        const std::string wrong = problem_plan_is_disjoint(p, plan);
        QVERIFY2(wrong.empty(), wrong.c_str());
    }
    // A failure names the time step it is about and the seed operator it left (seed 0.Z).
    void failuresNameTheirStepAndOperator() {
        // b and c begin together and cannot both fit under 150 bytes: whichever is placed on
        // top is the first above the capacity, at step 2.
        OffsetProblem p;
        p.buffers = {{0, 1, 100, 1, {}}, {2, 4, 100, 1, {}}, {2, 5, 100, 1, {}}};
        PlanOptions o;
        o.policy.arenas = {{"arena", 150, 1}};
        for (const char* strategy : {"greedy-size", "best-fit", "auto"}) {
            o.strategy = strategy;
            const auto f = test::capture_failure([&] {
                (void)plan_problem(p, {"a", "b", "c"}, o, {}, "three.csv");
            });
            QVERIFY(f);
            QCOMPARE(f->code(), FailureCode::ArenaTooSmall);
            QCOMPARE(f->step(), std::optional<uint64_t>(2));
            QCOMPARE(f->operator_name(), std::string("UML_OS.TMMU.MapToVirtualAddresses_v1"));
            QVERIFY2(f->message().find("first at time step 2, where '") != std::string::npos,
                     f->what());
        }
        // Outside every inner stage: planning as a whole.
        PlanOptions odd;
        odd.policy.set_alignment(3);
        const auto f = test::capture_failure(
            [&] { (void)plan_graph(chain(4, false), Mode::Inference, odd, {}, "c"); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::AlignmentViolation);
        QCOMPARE(f->step(), std::nullopt);
        QCOMPARE(f->operator_name(), std::string("UML_OS.TMMU.PlanMemory_v2"));
    }
    void shardRangesSplitElementsEvenly() {
        auto range = [](uint64_t elements, uint32_t rank, uint32_t world) {
            const ShardRange r = shard_range(elements, ShardSpec{world, rank, {}});
            return std::pair(r.begin, r.end);
        };
        QCOMPARE(range(10, 0, 4), std::pair(uint64_t(0), uint64_t(3)));
        QCOMPARE(range(10, 3, 4), std::pair(uint64_t(9), uint64_t(10)));
        QCOMPARE(range(2, 1, 4), std::pair(uint64_t(1), uint64_t(2)));
        QCOMPARE(range(2, 3, 4), std::pair(uint64_t(2), uint64_t(2))); // nothing left for it
        // chunk * rank would pass 2^64 here.
        QCOMPARE(range(UINT64_MAX, 2, 3), std::pair(uint64_t(12297829382473034410u), UINT64_MAX));
        for (uint64_t elements : {0, 1, 7, 100, 1001})
            for (uint32_t world : {1u, 2u, 3u, 8u, 1024u}) {
                uint64_t next = 0;
                for (uint32_t rank = 0; rank < world; ++rank) {
                    const auto [begin, end] = range(elements, rank, world);
                    QCOMPARE(begin, next); // the chunks tile the elements in rank order
                    QVERIFY(end - begin <= elements / world + 1);
                    next = end;
                }
                QCOMPARE(next, elements);
            }
    }
    void shardedParametersAreGatheredBeforeTheirReaders() {
        const Graph g = trained_parameter(1001);
        const Plan whole = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "t");
        const Plan plan = plan_graph(g, Mode::Training, for_rank(3, 4, {Role::Parameter}), {}, "t");
        // Rank 3 holds elements [753, 1001) of w; the in-place update shares them.
        QCOMPARE(planned(plan, "t000001").size, uint64_t(248 * 4));
        QCOMPARE(plan.arenas[0].config.name, std::string("parameters"));
        QCOMPARE(plan.arenas[0].metrics.peak_bytes, uint64_t(248 * 4));
        QCOMPARE(plan.execution_order,
                 (std::vector<std::string>{"all_gather:t000001@n000000", "n000000",
                                           "all_gather:t000001@n000001", "n000001", "n000002"}));
        for (const char* reader : {"n000000", "n000001"}) {
            const PlannedTensor& copy = planned(plan, std::string("t000001@gathered:") + reader);
            QCOMPARE(copy.size, uint64_t(1001 * 4));
            QCOMPARE(copy.role, Role::Workspace);
            QCOMPARE(plan.arenas[copy.arena].config.name, std::string("activations"));
        }
        // The two copies never live together, so they share bytes.
        const ArenaPlan& activations = plan.arenas[planned(plan, "t000002").arena];
        QVERIFY(activations.metrics.peak_bytes < 2 * 1001 * 4);
        // The model's IR hash, a plan hash of the rank's own.
        QCOMPARE(plan.ir_hash, whole.ir_hash);
        QVERIFY(plan.plan_hash != whole.plan_hash);
        QCOMPARE(plan.shard, (ShardSpec{4, 3, {Role::Parameter}}));
        QVERIFY(!plan.notes.empty());
        QVERIFY(plan.notes[0].find("rank 3 of 4, sharding parameter") == 0);
    }
    void parameterGradientsAreReduceScatteredIntoShards() {
        const Graph g = trained_parameter(1001);
        const Plan plan = plan_graph(g, Mode::Training, for_rank(3, 4, {Role::Gradient}), {}, "t");
        QCOMPARE(
            plan.execution_order,
            (std::vector<std::string>{"n000000", "n000001", "reduce_scatter:t000003", "n000002"}));
        // The whole gradient lives until it is scattered; the optimizer reads the shard.
        const PlannedTensor& whole = planned(plan, "t000003");
        const PlannedTensor& shard = planned(plan, "t000003@shard");
        QCOMPARE(whole.size, uint64_t(1001 * 4));
        QCOMPARE(shard.size, uint64_t(248 * 4));
        QCOMPARE(shard.role, Role::Gradient);
        QVERIFY(whole.life.end <= shard.life.begin + 1);
        QVERIFY(shard.life.end > whole.life.end); // read by the optimizer, after the scatter
        QCOMPARE(planned(plan, "t000001").size, uint64_t(1001 * 4)); // parameters stay whole
        QVERIFY(plan.notes[1].find("1 reduce_scatter of parameter gradients") == 0);
    }
    // Review cases: sharding never breaks a valid IR.
    void aNodeUpdatingAParameterInPlaceReadsItsShard() {
        const Plan plan = plan_graph(forward_update(false), Mode::Inference,
                                     for_rank(1, 2, {Role::Parameter}), {}, "u");
        QCOMPARE(plan.execution_order, (std::vector<std::string>{"n000000", "n000001"}));
        QCOMPARE(planned(plan, "t000001").size, uint64_t(16));
        QCOMPARE(planned(plan, "t000003").offset, planned(plan, "t000001").offset);
    }
    void storageSharedWithAnUnshardedRoleStaysWhole() {
        const Plan plan = plan_graph(forward_update(true), Mode::Inference,
                                     for_rank(1, 2, {Role::Activation}), {}, "u");
        QCOMPARE(planned(plan, "t000002").size, uint64_t(32)); // h, written over by output y
        QCOMPARE(planned(plan, "t000004").size, uint64_t(32));
        QVERIFY(std::any_of(plan.notes.begin(), plan.notes.end(), [](const std::string& n) {
            return n.find("1 tensor of sharded roles kept whole") == 0;
        }));
    }
    void aPinnedViewKeepsItsStorageWhereItWasPinned() {
        // a: 16 f32 (64 bytes); v: its bytes [40, 56), pinned at 40, so a's storage sits at 0.
        GraphBuilder gb("pinned");
        TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
        TensorIndex a = gb.add_tensor("a", {16}, DType::F32, Role::Activation);
        gb.add_node("expand", {x}, {a}, Phase::Forward);
        TensorIndex v = gb.add_tensor("v", {4}, DType::F32, Role::Activation);
        gb.tensor(v).view = ViewDesc{a, 40, 0, {}};
        gb.tensor(v).pinned_offset = 40;
        gb.add_node("slice", {a}, {v}, Phase::Forward);
        TensorIndex out = gb.add_tensor("out", {4}, DType::F32, Role::Output);
        gb.add_node("reduce", {a, v}, {out}, Phase::Forward);
        Graph g = gb.take();
        finalize_graph(g);
        for (uint32_t rank : {0u, 1u}) {
            const Plan p =
                plan_graph(g, Mode::Inference, for_rank(rank, 2, {Role::Activation}), {}, "p");
            QCOMPARE(planned(p, "t000001").offset, uint64_t(0));
            // Rank 1 holds bytes [32, 64): v's part starts 8 bytes in; rank 0 holds none of it.
            QCOMPARE(planned(p, "t000002").size, uint64_t(rank == 1 ? 16 : 0));
            if (rank == 1) QCOMPARE(planned(p, "t000002").offset, uint64_t(8));
        }
    }
    // A node reading a parameter and a view of it (a fused weight and one of its splits)
    // gathers the parameter once and reads the view inside that copy; a node reading only the
    // view gathers just the view.
    void aParameterAndItsViewAreGatheredOnce() {
        GraphBuilder gb("fused");
        TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
        TensorIndex w = gb.add_tensor("w", {16}, DType::F32, Role::Parameter);
        TensorIndex part = gb.add_tensor("w.part", {8}, DType::F32, Role::Parameter);
        gb.tensor(part).view = ViewDesc{w, 16, 0, {}};
        TensorIndex y = gb.add_tensor("y", {4}, DType::F32, Role::Activation);
        gb.add_node("fused", {x, part, w}, {y}, Phase::Forward);
        TensorIndex out = gb.add_tensor("out", {4}, DType::F32, Role::Output);
        gb.add_node("matmul", {y, part}, {out}, Phase::Forward);
        Graph g = gb.take();
        finalize_graph(g);
        const Plan p = plan_graph(g, Mode::Inference, for_rank(1, 2, {Role::Parameter}), {}, "f");
        QCOMPARE(p.execution_order,
                 (std::vector<std::string>{"all_gather:t000001@n000000", "n000000",
                                           "all_gather:t000002@n000001", "n000001"}));
        const PlannedTensor& whole = planned(p, "t000001@gathered:n000000");
        const PlannedTensor& inside = planned(p, "t000002@gathered:n000000");
        QCOMPARE(whole.size, uint64_t(64));
        QCOMPARE(inside.size, uint64_t(32));
        QCOMPARE(inside.role, Role::Workspace);
        QCOMPARE(inside.arena, whole.arena);
        QCOMPARE(inside.offset, whole.offset + 16); // the view's bytes in the gathered copy
        QCOMPARE(planned(p, "t000002@gathered:n000001").size, uint64_t(32));
        QVERIFY(std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
            return n.find("2 all_gathers of sharded parameters") == 0 &&
                   n.find("(96 B in all") != std::string::npos &&
                   n.find("1 view read inside the copy") != std::string::npos;
        }));
    }
    void collectivesKeepAlignmentAndCountOnlyWhatRuns() {
        Graph g = trained_parameter(1000);
        const Plan training =
            plan_graph(g, Mode::Training, for_rank(0, 2, {Role::Parameter}), {}, "t");
        QCOMPARE(planned(training, "t000001@gathered:n000000").alignment, uint64_t(128));
        PlanOptions aligned = for_rank(0, 2, {Role::Parameter, Role::Gradient});
        aligned.policy.set_alignment(64);
        GraphBuilder gb("aligned");
        TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
        TensorIndex w = gb.add_tensor("w", {64}, DType::F32, Role::Parameter);
        gb.tensor(w).alignment = 256;
        TensorIndex y = gb.add_tensor("y", {4}, DType::F32, Role::Output);
        gb.add_node("matmul", {x, w}, {y}, Phase::Forward);
        Graph small = gb.take();
        finalize_graph(small);
        const Plan p = plan_graph(small, Mode::Inference, aligned, {}, "a");
        QCOMPARE(planned(p, "t000001@gathered:n000000").alignment, uint64_t(256));
        // Inference runs no backward or optimizer: no reduce_scatter, and the updated
        // parameter it never writes is not counted.
        const Plan inference = plan_graph(
            g, Mode::Inference, for_rank(0, 2, {Role::Parameter, Role::Gradient}), {}, "t");
        QVERIFY(inference.notes[0].find("1 tensor cut") != std::string::npos);
        for (const std::string& n : inference.notes)
            QVERIFY2(n.find("reduce_scatter") == std::string::npos, n.c_str());
    }
    void aCollectivesNameTakenByTheModelIsRefused() {
        const Graph g = trained_parameter(8, "t000003@shard");
        const auto f = test::capture_failure(
            [&] { plan_graph(g, Mode::Training, for_rank(0, 2, {Role::Gradient}), {}, "t"); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("tensor 't000003@shard'"));
    }
    void shardingARoleTheGraphLacksOnlyNamesTheRank() {
        const Graph g = trained_parameter(1000);
        const Plan plan =
            plan_graph(g, Mode::Training, for_rank(0, 4, {Role::OptimizerState}), {}, "t");
        const Plan whole = plan_graph(g, Mode::Training, with_strategy("auto"), {}, "t");
        // No optimizer state in this graph: nothing cut, nothing gathered, yet the hash names
        // the rank.
        QCOMPARE(plan.execution_order, whole.execution_order);
        QCOMPARE(planned(plan, "t000001").size, uint64_t(4000));
        QVERIFY(plan.plan_hash != whole.plan_hash);
    }
    void rankAndWorldSizeEnterThePlanHash() {
        const Graph g = trained_parameter(1000);
        const Plan single = plan_graph(g, Mode::Training, for_rank(0, 1, {}), {}, "t");
        const Plan rank0 = plan_graph(g, Mode::Training, for_rank(0, 2, {}), {}, "t");
        const Plan rank1 = plan_graph(g, Mode::Training, for_rank(1, 2, {}), {}, "t");
        QCOMPARE(single.plan_hash,
                 plan_graph(g, Mode::Training, with_strategy("auto"), {}, "t").plan_hash);
        // Data parallel: every rank holds everything, the same layout, a hash per rank.
        QCOMPARE(rank0.tensors.size(), single.tensors.size());
        for (size_t i = 0; i < rank0.tensors.size(); ++i)
            QCOMPARE(rank0.tensors[i].offset, single.tensors[i].offset);
        QVERIFY(rank0.plan_hash != single.plan_hash);
        QVERIFY(rank0.plan_hash != rank1.plan_hash);
    }
    void shardedViewsCoverTheirPartOfTheChunk() {
        // a's 32 bytes: rank 0 holds [0, 16), rank 1 [16, 32); the view covers [12, 28).
        const Graph g = activation_with_view(DType::F32, 8, DType::F32, 12, 4);
        const Plan rank0 =
            plan_graph(g, Mode::Inference, for_rank(0, 2, {Role::Activation}), {}, "v");
        const Plan rank1 =
            plan_graph(g, Mode::Inference, for_rank(1, 2, {Role::Activation}), {}, "v");
        QCOMPARE(planned(rank0, "t000001").size, uint64_t(16));
        QCOMPARE(planned(rank0, "t000002").size, uint64_t(4));
        QCOMPARE(planned(rank0, "t000002").offset, planned(rank0, "t000001").offset + 12);
        QCOMPARE(planned(rank1, "t000002").size, uint64_t(12));
        QCOMPARE(planned(rank1, "t000002").offset, planned(rank1, "t000001").offset);
        // Inputs and outputs are never cut.
        QCOMPARE(planned(rank1, "t000000").size, uint64_t(16));
        QCOMPARE(planned(rank1, "t000003").size, uint64_t(16));
    }
    void aViewCutInsideAnElementIsRefused() {
        // Rank 0 holds bytes [0, 3) of a 6-byte base: one byte of the f32 view over [2, 6).
        const Graph g = activation_with_view(DType::U8, 6, DType::F32, 2, 1);
        const auto f = test::capture_failure(
            [&] { plan_graph(g, Mode::Inference, for_rank(0, 2, {Role::Activation}), {}, "v"); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("tensor 't000002'.view"));
        QVERIFY(f->message().find("not a whole number") != std::string::npos);
    }
    void shardSpecsAreChecked() {
        const Graph g = trained_parameter(8);
        for (const PlanOptions& o :
             {for_rank(2, 2, {}), for_rank(0, 0, {}), for_rank(0, 1, {Role::Parameter}),
              for_rank(0, 2, {Role::Workspace}), for_rank(0, 2, {Role::Input}),
              for_rank(0, 2, {Role::OptimizerState, Role::Parameter}),
              for_rank(0, 2, {Role::Parameter, Role::Parameter})})
            TMMU_EXPECT_FAILURE(plan_graph(g, Mode::Training, o, {}, "t"),
                                FailureCode::InvalidArgument);
        OffsetProblem p;
        p.buffers.push_back(Buffer{0, 1, 8, 1, std::nullopt});
        TMMU_EXPECT_FAILURE(plan_problem(p, {"0"}, for_rank(1, 2, {}), {}, "p"),
                            FailureCode::InvalidArgument);
    }
    // --- dynamic shapes over iterations (seed 000, II.H) -------------------------------------
    // Seed 000's activation_retention_ratio: of the 420 B the forward pass writes, training
    // holds h1, h2 and the loss (388 B) into the backward pass, which starts at step 5; forward
    // mode holds only what is saved_for_backward (h1); inference holds nothing.
    void activationRetentionCountsWhatTheBackwardPassHolds() {
        const Graph g = two_layer_step();
        const auto retention = [&](Mode m) {
            const Plan p = plan_graph(g, m, with_strategy("auto"), {}, "step");
            if (!p.retention) throw std::runtime_error("a graph's plan without retention");
            return *p.retention;
        };
        const ActivationRetention training = retention(Mode::Training);
        QCOMPARE(training.forward_bytes, uint64_t(420));
        QCOMPARE(training.forward_storages, 4u);
        QCOMPARE(training.retained_bytes, uint64_t(388));
        QCOMPARE(training.retained_storages, 3u);
        QCOMPARE(training.backward_start, 5u);
        QCOMPARE(training.ratio(), 388.0 / 420.0);
        const ActivationRetention forward = retention(Mode::Forward);
        QCOMPARE(forward.forward_bytes, uint64_t(420));
        QCOMPARE(forward.retained_bytes, uint64_t(128));
        QCOMPARE(forward.retained_storages, 1u);
        QCOMPARE(forward.backward_start, 5u);
        const ActivationRetention inference = retention(Mode::Inference);
        QCOMPARE(inference.forward_bytes, uint64_t(420));
        QCOMPARE(inference.retained_bytes, uint64_t(0));
        QCOMPARE(inference.backward_start, kNone);
        // Nothing retained in a training schedule without a backward pass.
        GraphBuilder gb("forward only");
        TensorIndex x = gb.add_tensor("x", {4}, DType::F32, Role::Input);
        TensorIndex a = gb.add_tensor("a", {4}, DType::F32, Role::Activation);
        gb.add_node("relu", {x}, {a}, Phase::Forward);
        TensorIndex out = gb.add_tensor("out", {4}, DType::F32, Role::Output);
        gb.add_node("relu", {a}, {out}, Phase::Forward);
        Graph only_forward = gb.take();
        finalize_graph(only_forward);
        const Plan p = plan_graph(only_forward, Mode::Training, with_strategy("auto"), {}, "f");
        QVERIFY(p.retention && p.retention->forward_bytes == 16 &&
                p.retention->retained_bytes == 0 && p.retention->backward_start == kNone);
        // Nor in forward mode, when nothing is saved for a backward pass.
        const Plan f = plan_graph(only_forward, Mode::Forward, with_strategy("auto"), {}, "f");
        QVERIFY(f.retention && f.retention->backward_start == kNone);
    }
    // A member's own reads decide, whatever its buffer shares with: the backward pass reads k
    // (held) and the output o written in place over h (an output's bytes, not an activation's),
    // in either declaration order; a, dead early, shares a buffer with a larger gradient; and
    // forward and backward passes may interleave (a second micro-batch's h2).
    void activationRetentionFollowsTheActivationsThemselves() {
        const auto retained = [](bool output_first, bool alias_with_gradient, bool interleave) {
            GraphBuilder gb("members");
            TensorIndex x = gb.add_tensor("x", {16}, DType::F32, Role::Input);
            TensorIndex o = 0, h = 0;
            if (output_first) o = gb.add_tensor("o", {16}, DType::F32, Role::Output);
            h = gb.add_tensor("h", {16}, DType::F32, Role::Activation); // read by the backward
            if (!output_first) o = gb.add_tensor("o", {16}, DType::F32, Role::Output);
            gb.tensor(o).in_place_of = h;
            TensorIndex a = gb.add_tensor("a", {8}, DType::F32, Role::Activation); // dead early
            TensorIndex k = gb.add_tensor("k", {16}, DType::F32, Role::Activation);
            gb.add_node("fc", {x}, {h}, Phase::Forward);
            gb.add_node("relu", {h}, {a}, Phase::Forward);
            gb.add_node("scale", {h}, {k}, Phase::Forward);
            gb.add_node("add", {h, a}, {o}, Phase::Forward);
            TensorIndex gh = gb.add_tensor("gh", {64}, DType::F32, Role::Gradient);
            if (alias_with_gradient) {
                gb.tensor(a).alias_group = "shared";
                gb.tensor(gh).alias_group = "shared";
            }
            gb.add_node("fc_grad", {o, k}, {gh}, Phase::Backward);
            if (interleave) { // a second micro-batch after the first backward step
                TensorIndex h2 = gb.add_tensor("h2", {32}, DType::F32, Role::Activation);
                gb.add_node("fc", {x}, {h2}, Phase::Forward);
                TensorIndex g2 = gb.add_tensor("g2", {16}, DType::F32, Role::Output);
                gb.add_node("fc_grad", {h2, gh}, {g2}, Phase::Backward);
            }
            Graph g = gb.take();
            finalize_graph(g);
            return *plan_graph(g, Mode::Training, with_strategy("auto"), {}, "m").retention;
        };
        const ActivationRetention plain = retained(false, false, false);
        QCOMPARE(plain.forward_storages, 3u); // h with o in place, a, k
        QCOMPARE(plain.forward_bytes, uint64_t(64 + 32 + 64));
        QCOMPARE(plain.retained_storages, 1u); // k
        QCOMPARE(plain.retained_bytes, uint64_t(64));
        QCOMPARE(plain.backward_start, 4u);
        QVERIFY(retained(true, false, false) == plain);
        const ActivationRetention shared = retained(false, true, false);
        QCOMPARE(shared.forward_bytes, uint64_t(64 + 256 + 64)); // a's buffer holds gh too
        QCOMPARE(shared.retained_storages, 1u);                  // it lives on for gh, not for a
        QCOMPARE(shared.retained_bytes, uint64_t(64));
        const ActivationRetention two = retained(false, false, true);
        QCOMPARE(two.forward_storages, 4u);
        QCOMPARE(two.retained_storages, 2u); // h2, born after the first backward step, too
        QCOMPARE(two.retained_bytes, uint64_t(64 + 128));
        QCOMPARE(two.backward_start, 4u);
    }
    void iterationsReplanOnlyWhenTheyOutgrowThePlan() {
        auto [g, first] = dynamic_seq_at_128();
        std::vector<IterationOutcome> seen;
        const ShapeScheduleRun run = run_shape_schedule(
            g, first, Mode::Inference, {},
            {{{"seq", 64}}, {{"seq", 512}, {"batch", 2}}, {{"seq", 256}}, {{"batch", 4}}},
            [&](const IterationOutcome& i) { seen.push_back(i); }, {});
        QCOMPARE(run.iterations.size(), size_t(4));
        QCOMPARE(seen.size(), size_t(4));
        const std::vector<bool> replanned{false, true, false, true};
        for (size_t i = 0; i < 4; ++i)
            QCOMPARE(run.iterations[i].replanned, bool(replanned[i]));
        QCOMPARE(to_hex(run.iterations[0].plan_hash), to_hex(first.plan_hash));
        QCOMPARE(to_hex(run.iterations[1].old_plan_hash), to_hex(first.plan_hash));
        // Each dimension grows to the larger of the plan's and the iteration's: batch stays 2
        // after iteration 2, and seq stays 512 when iteration 3 asks for batch 4 only.
        QCOMPARE(binding_text(run.iterations[2].plan_binding), std::string("batch=2, seq=512"));
        QCOMPARE(binding_text(run.iterations[3].plan_binding), std::string("batch=4, seq=512"));
        QCOMPARE(to_hex(run.iterations[3].old_plan_hash), to_hex(run.iterations[2].plan_hash));
        // The new plan is the plan of the model bound there, hash for hash.
        Graph direct = load_ir_file(kDynamicSeq);
        bind_dims(direct, {{"seq", 512}, {"batch", 4}}, "--dim");
        const Plan expected = plan_graph(direct, Mode::Inference, {}, {}, kDynamicSeq);
        QCOMPARE(to_hex(run.plan.plan_hash), to_hex(expected.plan_hash));
        QCOMPARE(to_hex(run.iterations[3].plan_hash), to_hex(expected.plan_hash));
        QCOMPARE(binding_text(run.graph), std::string("batch=4, seq=512"));
        QVERIFY(run.iterations[3].peak_bytes > run.iterations[0].peak_bytes);

        // The trace: the last plan's, then one replan record per replan.
        const std::string trace = schedule_trace_jsonl(run.plan, run.iterations);
        QVERIFY(trace.starts_with(trace_jsonl(run.plan)));
        const std::string records = trace.substr(trace_jsonl(run.plan).size());
        const std::string second =
            "{\"record\":\"replan\",\"iteration\":3,\"safepoint\":\"iteration_boundary\","
            "\"old_plan_hash\":\"" +
            to_hex(run.iterations[2].plan_hash) + "\",\"new_plan_hash\":\"" +
            to_hex(expected.plan_hash) + "\",\"dims\":{\"batch\":4,\"seq\":512},\"replan_key\":\"" +
            to_hex(replan_key(direct, expected)) + "\"}\n";
        QVERIFY2(records.ends_with(second), records.c_str());
        QCOMPARE(std::count(records.begin(), records.end(), '\n'), 2l);
    }

    void iterationsOutsideTheEnvelopeOrOutgrowingAnAbortingPlanStop() {
        auto [g, first] = dynamic_seq_at_128();
        size_t decided = 0;
        auto count = [&](const IterationOutcome&) { ++decided; };
        auto f = schedule_failure(g, first, {{{"seq", 8}}, {{"seq", 4096}}}, count);
        QVERIFY(f && f->code() == FailureCode::ShapeEnvelopeViolation);
        QCOMPARE(f->where(), std::string("--iteration 1"));
        QCOMPARE(decided, size_t(1)); // iteration 0 ran before 1 was refused
        g.replan_policy = ReplanPolicy::Abort;
        f = schedule_failure(g, first, {{{"seq", 64}}, {{"seq", 129}}}, count);
        QVERIFY(f && f->code() == FailureCode::ShapeEnvelopeViolation);
        QCOMPARE(f->where(), std::string("--iteration 1"));
        QVERIFY2(f->message().find("seq=129 outgrows the plan made at batch=1, seq=128, and the "
                                   "model's replan_policy is ABORT") != std::string::npos,
                 f->what());
        // Under ABORT, iterations inside the plan's binding all run on the first plan.
        const ShapeScheduleRun run = run_shape_schedule(
            g, first, Mode::Inference, {}, {{{"seq", 128}}, {{"seq", 1}}}, nullptr, {});
        QCOMPARE(to_hex(run.plan.plan_hash), to_hex(first.plan_hash));
        f = schedule_failure(g, first, {{{"heads", 2}}});
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
    }

    // A rank of a model with dynamic dimensions plans the model's bytes at its binding, and any
    // other binding is planned again, smaller ones too: a rank's share need not shrink with its
    // tensor (9 elements on 4 ranks give rank 3 none, 8 give it 2).
    void shardedRanksOfADynamicModelFollowItsBinding() {
        auto [g, whole] = dynamic_seq_at_128();
        const PlanOptions rank1 = for_rank(1, 2, {Role::Parameter, Role::Activation});
        const Plan first = plan_graph(g, Mode::Inference, rank1, {}, kDynamicSeq);
        // scores is [1, 4, 128, 128] f32: rank 1 holds the second half of its bytes.
        QCOMPARE(planned(first, "scores").size, uint64_t(4 * 128 * 128 * 4 / 2));
        QCOMPARE(first.dims, (DimBinding{{"batch", 1}, {"seq", 128}}));
        const ShapeScheduleRun run = run_shape_schedule(
            g, first, Mode::Inference, rank1, {{{"seq", 64}}, {{"seq", 256}}}, nullptr, {});
        QVERIFY(run.iterations[0].replanned);
        QCOMPARE(run.iterations[0].plan_binding, (DimBinding{{"batch", 1}, {"seq", 64}}));
        QVERIFY(run.iterations[1].replanned);
        QCOMPARE(planned(run.plan, "scores").size, uint64_t(4 * 256 * 256 * 4 / 2));
        Graph at9 = load_ir_file(kDynamicSeq);
        bind_dims(at9, {{"seq", 9}}, "--dim");
        const PlanOptions rank3 = for_rank(3, 4, {Role::Activation});
        const ShapeScheduleRun smaller =
            run_shape_schedule(at9, plan_graph(at9, Mode::Inference, rank3, {}, kDynamicSeq),
                               Mode::Inference, rank3, {{{"seq", 8}}}, nullptr, {});
        QVERIFY(smaller.iterations[0].replanned);
        bind_dims(at9, {{"seq", 8}}, "--dim");
        QCOMPARE(to_hex(smaller.plan.plan_hash),
                 to_hex(plan_graph(at9, Mode::Inference, rank3, {}, kDynamicSeq).plan_hash));
        Graph direct = load_ir_file(kDynamicSeq);
        bind_dims(direct, {{"seq", 256}}, "--dim");
        QCOMPARE(to_hex(run.plan.plan_hash),
                 to_hex(plan_graph(direct, Mode::Inference, rank1, {}, kDynamicSeq).plan_hash));
        QCOMPARE(run.plan.shard, rank1.shard);
    }

    // A view of [a] over [b] holds at both corners of the envelope but not where a > b: each
    // iteration's shapes are checked, not only those that replan.
    void iterationsAtWhichTheModelDoesNotHoldAreRefused() {
        Graph g =
            load_ir_string("{\"format\": \"tmmu-ir\", \"version\": 1, \"shape_envelope\": "
                           "{\"a\": {\"min\": 1, \"max\": 64}, \"b\": {\"min\": 1, \"max\": 64}}, "
                           "\"tensors\": [{\"id\": \"x\", \"shape\": [\"b\"], \"dtype\": \"f32\", "
                           "\"role\": \"input\"}, {\"id\": \"v\", \"shape\": [\"a\"], \"dtype\": "
                           "\"f32\", \"role\": \"input\", \"view\": {\"base\": \"x\"}}, {\"id\": "
                           "\"y\", \"shape\": [\"a\"], \"dtype\": \"f32\", \"role\": \"output\"}], "
                           "\"nodes\": [{\"id\": \"n\", \"opcode\": \"relu\", \"inputs\": [\"v\"], "
                           "\"outputs\": [\"y\"]}]}",
                           "mixed.json");
        const Plan first = plan_graph(g, Mode::Inference, {}, {}, "mixed.json");
        auto f = schedule_failure(g, first, {{{"a", 8}, {"b", 8}}, {{"b", 1}}});
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("--iteration 1"));
        QVERIFY2(f->message().find("tensor 'v'.view: at a=64, b=1: view bytes [0, 256) exceed "
                                   "base 'x' of 4 bytes") != std::string::npos,
                 f->what());
    }

    void cancellationStopsPlanning() {
        std::atomic<bool> cancel{true};
        Progress progress;
        progress.cancel_flag = &cancel;
        TMMU_EXPECT_FAILURE(
            plan_graph(chain(4, false), Mode::Inference, PlanOptions{}, progress, "c"),
            FailureCode::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestPlanner)
#include "test_planner.moc"
