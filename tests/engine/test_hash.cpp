#include "core/failure.h"
#include "encoding/cbor.h"
#include "encoding/sha256.h"
#include "io/dsa_csv.h"
#include "ir/dynamic_dims.h"
#include "plan/plan_hash.h"
#include "sample_plan.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>

#include <functional>

using namespace tmmu;
using tmmu::test::hex;
using tmmu::test::sample_plan;

namespace {

// A finalized-looking two-node graph (canonical_ir reads only the declared fields).
Graph sample_graph() {
    Graph g;
    g.name = "tiny";
    Tensor x;
    x.id = "x";
    x.name = "input x";
    x.shape = {2, 3};
    x.role = Role::Input;
    Tensor w = x;
    w.id = "w";
    w.name = "weight";
    w.role = Role::Parameter;
    w.alignment = 256;
    Tensor y = x;
    y.id = "y";
    y.name = "y";
    y.role = Role::Output;
    y.must_not_alias = {1, 0, 1};
    Tensor v = x;
    v.id = "y.half";
    v.role = Role::Activation;
    v.view = ViewDesc{2, 0, 12, {}};
    g.tensors = {x, w, y, v};
    g.nodes = {Node{"mul", "Mul", {0, 1}, {2}, Phase::Forward},
               Node{"slice", "Slice", {2}, {3}, Phase::Forward}};
    g.execution_order = {0, 1};
    return g;
}

} // namespace

class TestHash : public QObject {
    Q_OBJECT
  private slots:
    // FIPS 180-2 / NIST test vectors.
    void sha256MatchesTestVectors() {
        QCOMPARE(to_hex(sha256(std::string_view("abc"))),
                 std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(to_hex(sha256(std::string_view(""))),
                 std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(to_hex(sha256(
                     std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    }
    void hexRoundTripsAndRejectsGarbage() {
        const Digest d = sha256(std::string_view("abc"));
        QCOMPARE(digest_from_hex(to_hex(d), "x"), d);
        std::string upper = to_hex(d);
        for (char& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        QCOMPARE(digest_from_hex(upper, "x"), d);
        TMMU_EXPECT_FAILURE(digest_from_hex("abc", "--replay-token"), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(digest_from_hex(std::string(63, '0') + "g", "--replay-token"),
                            FailureCode::InvalidArgument);
    }
    // Seed 000 section 10's replan key: the envelope, mode and arena config, not the binding.
    void replanKeyIgnoresTheBindingOnly() {
        const LoadedModel m = load_model(
            TMMU_SOURCE_DIR "/resources/models/examples/dynamic_seq.json", {Mode::Inference});
        auto plan_at = [&](const Graph& g, Mode mode, const PlanOptions& o = {}) {
            return plan_graph(g, mode, o, Progress{}, "dynamic_seq");
        };
        const Graph small = bound_at(*m.graph, {{"seq", 64}}, "test");
        const Plan a = plan_at(*m.graph, Mode::Inference), b = plan_at(small, Mode::Inference);
        QVERIFY(a.plan_hash != b.plan_hash);
        const Digest key = replan_key(*m.graph, a);
        QCOMPARE(replan_key(small, b), key);
        QVERIFY(replan_key(*m.graph, plan_at(*m.graph, Mode::Training)) != key);
        PlanOptions capped;
        capped.policy.set_capacity("activations", uint64_t(1) << 30);
        QVERIFY(replan_key(*m.graph, plan_at(*m.graph, Mode::Inference, capped)) != key);
        Graph wider = *m.graph;
        wider.dims[0].max += 1;
        QVERIFY(replan_key(wider, a) != key);
    }
    // The expected values were computed independently of this code: the preimage bytes were
    // rebuilt by a separate Python 3 CBOR encoder written from RFC 8949 and seed II.K (it
    // reproduced plan_hash_preimage byte for byte) and hashed with hashlib.sha256.
    void planHashIsStable() {
        const Plan p = sample_plan();
        const std::vector<uint8_t> preimage = plan_hash_preimage(p);
        QVERIFY2(to_hex(p.plan_hash) == kExpectedPlanHash,
                 (to_hex(p.plan_hash) + " preimage " + hex(preimage)).c_str());
        QCOMPARE(to_hex(sha256(preimage)), to_hex(p.plan_hash));
        // ["tmmu_plan_v1", [h'<ir_hash>', ...: array(2), text(12), array(9), bytes(32).
        QCOMPARE(hex(preimage).substr(0, 34), std::string("82"
                                                          "6c"
                                                          "746d6d755f706c616e5f7631"
                                                          "89"
                                                          "5820"));
    }
    void planHashCoversLayoutAndConfig_data() {
        QTest::addColumn<int>("change");
        const char* names[] = {"offset",       "slot",        "size",       "mode",
                               "no mode",      "arena align", "arena cap",  "arena name",
                               "replay token", "ir hash",     "exec order", "tensor arena",
                               "tensor id",    "extra tensor"};
        for (int i = 0; i < int(std::size(names)); ++i)
            QTest::newRow(names[i]) << i;
    }
    void planHashCoversLayoutAndConfig() {
        QFETCH(int, change);
        Plan p = sample_plan();
        const std::vector<std::function<void(Plan&)>> edits = {
            [](Plan& q) { q.tensors[1].offset += 64; },
            [](Plan& q) { q.tensors[3].slot = 1; },
            [](Plan& q) { q.tensors[5].size = 101; },
            [](Plan& q) { q.mode = Mode::Inference; },
            [](Plan& q) { q.mode.reset(); },
            [](Plan& q) { q.arenas[0].config.alignment = 256; },
            [](Plan& q) { q.arenas[1].config.capacity = 8192; },
            [](Plan& q) { q.arenas[1].config.name = "acts"; },
            [](Plan& q) { q.replay_token[31] ^= 1; },
            [](Plan& q) { q.ir_hash[0] ^= 1; },
            [](Plan& q) { std::swap(q.execution_order[1], q.execution_order[2]); },
            [](Plan& q) { q.tensors[4].arena = 1; },
            [](Plan& q) { q.tensors[0].id = "a0"; },
            [](Plan& q) { q.tensors.push_back(q.tensors[0]); },
        };
        edits[static_cast<size_t>(change)](p);
        QVERIFY(compute_plan_hash(p) != p.plan_hash);
    }
    void planHashIgnoresTimingNamesAndOrder() {
        Plan p = sample_plan();
        p.total_plan_ns = 1;
        p.arenas[0].metrics.plan_ns = 99999;
        p.arenas[1].metrics.reuse_ratio = 0.25;
        p.arenas[1].strategy = "ffd";
        p.tensors[0].name = "renamed";
        p.notes.push_back("another note");
        p.source = "elsewhere.json";
        std::reverse(p.tensors.begin(), p.tensors.end()); // tables are sorted by id
        QCOMPARE(to_hex(compute_plan_hash(p)), to_hex(p.plan_hash));
    }
    void planHashRejectsBadArenaIndex() {
        Plan p = sample_plan();
        p.tensors[2].arena = 7;
        TMMU_EXPECT_FAILURE(compute_plan_hash(p), FailureCode::InvalidArgument);
    }
    void irHashIgnoresNamesAndStorageOrder() {
        const Graph g = sample_graph();
        const Digest h = ir_hash(g);
        // Computed independently: the canonical IR of sample_graph() written out by hand in
        // Python (dicts encoded by a from-scratch RFC 8949 encoder, keys sorted bytewise).
        QCOMPARE(to_hex(h),
                 std::string("ef096cec3066f3a6ab5e61abb27c3c3278f9aa5ae111f44bcfa439ac47991232"));
        Graph renamed = g;
        renamed.name = "other";
        renamed.tensors[0].name = "the input";
        QCOMPARE(ir_hash(renamed), h);
        // Same graph with tensors 0 and 1 stored the other way round, nodes swapped too.
        Graph shuffled = g;
        std::swap(shuffled.tensors[0], shuffled.tensors[1]);
        shuffled.tensors[2].must_not_alias = {0, 1};
        shuffled.nodes[0].inputs = {1, 0};
        std::swap(shuffled.nodes[0], shuffled.nodes[1]);
        shuffled.execution_order = {1, 0};
        QCOMPARE(ir_hash(shuffled), h);
    }
    void irHashCoversSemantics_data() {
        QTest::addColumn<int>("change");
        const char* names[] = {"shape",    "dtype", "role",     "alias group", "view offset",
                               "in place", "saved", "no-alias", "alignment",   "pinned",
                               "opcode",   "phase", "inputs",   "tensor id",   "node id"};
        for (int i = 0; i < int(std::size(names)); ++i)
            QTest::newRow(names[i]) << i;
    }
    void irHashCoversSemantics() {
        QFETCH(int, change);
        Graph g = sample_graph();
        const Digest before = ir_hash(g);
        const std::vector<std::function<void(Graph&)>> edits = {
            [](Graph& h) {
                h.tensors[0].shape = {3, 2};
            },
            [](Graph& h) { h.tensors[0].dtype = DType::BF16; },
            [](Graph& h) { h.tensors[3].role = Role::Workspace; },
            [](Graph& h) { h.tensors[2].alias_group = "g"; },
            [](Graph& h) { h.tensors[3].view->byte_offset = 12; },
            [](Graph& h) { h.tensors[2].in_place_of = 0; },
            [](Graph& h) { h.tensors[2].saved_for_backward = true; },
            [](Graph& h) { h.tensors[2].must_not_alias = {1}; },
            [](Graph& h) { h.tensors[1].alignment = 512; },
            [](Graph& h) { h.tensors[1].pinned_offset = 0; },
            [](Graph& h) { h.nodes[0].opcode = "Add"; },
            [](Graph& h) { h.nodes[1].phase = Phase::Backward; },
            [](Graph& h) {
                h.nodes[0].inputs = {1, 0};
            },
            [](Graph& h) { h.tensors[3].id = "y.lo"; },
            [](Graph& h) { h.nodes[1].id = "slice2"; },
        };
        edits[static_cast<size_t>(change)](g);
        QVERIFY(ir_hash(g) != before);
    }
    void irHashRejectsDanglingReferences() {
        Graph g = sample_graph();
        g.nodes[1].outputs = {9};
        TMMU_EXPECT_FAILURE(ir_hash(g), FailureCode::InvalidIrShapes);
        g = sample_graph();
        g.tensors[3].view->base = kNone;
        TMMU_EXPECT_FAILURE(ir_hash(g), FailureCode::InvalidIrShapes);
    }
    void problemHashCoversBuffersInOrder() {
        OffsetProblem p = test::random_problem(7, 20, 50, 1000, true);
        std::vector<std::string> ids;
        for (size_t i = 0; i < p.buffers.size(); ++i)
            ids.push_back("r" + std::to_string(i));
        const Digest h = problem_hash(p, ids);
        QCOMPARE(problem_hash(p, ids), h);
        OffsetProblem q = p;
        q.capacity = 12345; // the capacity is arena config, hashed with the plan
        QCOMPARE(problem_hash(q, ids), h);
        q.buffers[3].size += 1;
        QVERIFY(problem_hash(q, ids) != h);
        q = p;
        q.buffers[3].pinned = 0;
        QVERIFY(problem_hash(q, ids) != h);
        q = p;
        std::swap(q.buffers[0], q.buffers[1]);
        std::swap(ids[0], ids[1]);
        QVERIFY(problem_hash(q, ids) != h);
        ids.pop_back();
        TMMU_EXPECT_FAILURE(problem_hash(p, ids), FailureCode::InvalidArgument);
    }

    // The hashes of real inputs, pinned: recorded sessions, checkpoints and scripts compare
    // them across versions, so a change here is a format change (bump the hash's version tag and
    // say so), never a refactoring detail. Recorded at cac3fc5; the GPT-2 and residual plan
    // hashes equal the summaries of the golden traces, which were written before them (3b9aeb3).
    void hashesOfRealInputsArePinned_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("input_hash"); // IR hash, or problem hash for the CSV
        QTest::addColumn<QString>("plan_hash");  // strategy slots, default options
        QTest::newRow("gpt2 inference")
            << "gpt2-small.json"
            << "inference"
            << "7d5972ae7a1265a3b5ac42fac9b7a9d1baa0eb22302872da577c1c6e9cbf4abf"
            << "3916c5c5b2dc57359ac359542151123465abf4ca62d8b00e30098a3406834f37";
        QTest::newRow("gpt2 forward")
            << "gpt2-small.json"
            << "forward"
            << "05718e36cf3f50b8e101ad77054956167c6169cadf692ad3dc9186af5da68f9b"
            << "242603cbb0787b9754ff82c3e278d0b8a1c37726a2005928bc692bbd448ad13a";
        QTest::newRow("gpt2 training")
            << "gpt2-small.json"
            << "training"
            << "d46155d5b3fed523dced089a6854b07d1af60e83bee0eea6ca1aa523d2c4fa91"
            << "e55d0e3392e23d631b18097bc1f5321a8f71fd97a61b7ff442dad1649b315016";
        QTest::newRow("llama training")
            << "tinyllama-1.1b.json"
            << "training"
            << "fb02adb3379d02fcbf7178168e49131280e2917991c9414b866115d9c29c1d70"
            << "f408bd4541e94770b22b105ea22d6519545c899de10110224ba423cb5506efb6";
        QTest::newRow("residual ir")
            << "examples/residual_blocks.json"
            << "training"
            << "0afcb1f622e5d919ac49dc4d5a741ba534a35cd116513690e141b6473cb17a19"
            << "81b4c26581b382c6cec2491a33ee3853c55d7c7a94b8eda81ef1e3bb207ee880";
        QTest::newRow("csv problem")
            << ""
            << "inference"
            << "88d6d7038c2ac3a16c524ddb826ff388b71d61d9ab1a63e4d75d9c38b24711c6"
            << "c900cbae7be2fabe0a551794aa4039dc47261b0fea5ae7cc2e7ef84955e863f6";
    }
    void hashesOfRealInputsArePinned() {
        QFETCH(QString, model);
        QFETCH(QString, mode);
        QFETCH(QString, input_hash);
        QFETCH(QString, plan_hash);
        const ModelRequest request{*parse_mode(mode.toStdString()), 1, 128};
        LoadedModel m;
        if (model.isEmpty()) {
            m.kind = ModelKind::DsaCsv;
            m.path = "pinned.csv";
            m.problem = parse_dsa_csv(
                "id,lower,upper,size\nb1,0,3,40\nb2,1,9,40\nb3,0,9,40\nb4,9,21,24\n", m.path);
        } else {
            m = load_model(TMMU_SOURCE_DIR "/resources/models/" + model.toStdString(), request);
        }
        PlanOptions options;
        options.strategy = "slots";
        const Plan plan = plan_model(m, request.mode, options, {});
        const std::string input = m.graph
                                      ? to_hex(ir_hash(*m.graph))
                                      : to_hex(problem_hash(m.problem->problem, m.problem->ids));
        QCOMPARE(QString::fromStdString(input), input_hash);
        QCOMPARE(QString::fromStdString(to_hex(plan.plan_hash)), plan_hash);
    }

  private:
    static inline const std::string kExpectedPlanHash =
        "6b6118e75be7baca581c917390f6348ca219fcfa4ec79349a6fd14380fa06d47";
};

QTEST_GUILESS_MAIN(TestHash)
#include "test_hash.moc"
