// Seed 000 II.G's stride_desc: views whose elements are spread over their base (a transpose, a
// column slice) span more bytes than their own size; the loader checks the span, the hash and
// the writer keep the strides, plans place the view inside its base, and flat sharding refuses
// to cut one.
#include "core/failure.h"
#include "ir/ir_json.h"
#include "plan/plan_hash.h"
#include "plan/planner.h"
#include "test_support.h"

#include <QObject>

#include <string>

using namespace tmmu;

namespace {

// A [4, 8] f32 activation m (128 bytes) and a view `v` of it, both read by one node.
std::string model(const std::string& view, const std::string& shape = "[4, 2]") {
    return R"({"format": "tmmu-ir", "version": 1, "tensors": [
        {"id": "x", "shape": [4, 8], "dtype": "f32", "role": "input"},
        {"id": "m", "shape": [4, 8], "dtype": "f32", "role": "activation"},
        {"id": "v", "shape": )" +
           shape + R"(, "dtype": "f32", "role": "activation", "view": )" + view + R"(},
        {"id": "y", "shape": [4, 8], "dtype": "f32", "role": "output"}],
      "nodes": [
        {"id": "make", "opcode": "relu", "inputs": ["x"], "outputs": ["m"]},
        {"id": "take", "opcode": "slice", "inputs": ["m"], "outputs": ["v"]},
        {"id": "use", "opcode": "add", "inputs": ["v", "m"], "outputs": ["y"]}]})";
}

// Column 2 and 3 of m: rows 8 elements apart, 26 elements from the first to the last.
const std::string kColumns =
    R"({"base": "m", "byte_offset": 8, "stride_desc": {"strides": [8, 1]}})";

const Tensor& tensor(const Graph& g, const std::string& id) {
    for (const Tensor& t : g.tensors)
        if (t.id == id) return t;
    throw std::logic_error("no tensor " + id);
}

} // namespace

class TestStridedViews : public QObject {
    Q_OBJECT
  private slots:
    void spanIsCheckedAndFilledIn() {
        const Graph g = load_ir_string(model(kColumns), "columns");
        const Tensor& v = tensor(g, "v");
        QCOMPARE(v.bytes, uint64_t(32));
        QCOMPARE(v.view->byte_length, uint64_t(104)); // (3 * 8 + 1 * 1 + 1) * 4
        QCOMPARE(v.view->strides, (std::vector<uint64_t>{8, 1}));
        // The transpose spans its whole base.
        const Graph t = load_ir_string(
            model(R"({"base": "m", "stride_desc": {"strides": [1, 8]}})", "[8, 4]"), "transpose");
        QCOMPARE(tensor(t, "v").view->byte_length, uint64_t(128));
    }

    void badStridesAreRefusedByName() {
        struct Case {
            std::string view, where;
            FailureCode code;
        };
        const Case cases[] = {
            {R"({"base": "m", "byte_offset": 8, "byte_length": 32, "stride_desc": {"strides": [8, 1]}})",
             "view.byte_length", FailureCode::InvalidIrShapes},
            {R"({"base": "m", "stride_desc": {"strides": [8]}})", "view.stride_desc",
             FailureCode::InvalidIrShapes},
            {R"({"base": "m", "byte_offset": 32, "stride_desc": {"strides": [8, 1]}})", "view",
             FailureCode::InvalidIrShapes}, // 32 + 104 > 128
            {R"({"base": "m", "stride_desc": {"strides": [4611686018427387904, 1]}})",
             "view.stride_desc", FailureCode::AllocationOverflow},
            {R"({"base": "m", "stride_desc": {"strides": [8, -1]}})", "stride_desc.strides[1]",
             FailureCode::InvalidIrShapes},
            {R"({"base": "m", "stride_desc": {"step": [8, 1]}})", "stride_desc",
             FailureCode::InvalidIrShapes},
        };
        for (const Case& c : cases) {
            const auto f = test::capture_failure([&] { load_ir_string(model(c.view), "bad"); });
            QVERIFY2(f && f->code() == c.code, f ? f->what() : c.view.c_str());
            QVERIFY2(f->where().find(c.where) != std::string::npos, f->what());
        }
    }

    void strideDescEntersTheHashAndTheWriter() {
        const Graph g = load_ir_string(model(kColumns), "columns");
        const Graph other = load_ir_string(
            model(R"({"base": "m", "byte_offset": 8, "stride_desc": {"strides": [4, 1]}})"), "x");
        QVERIFY(ir_hash(g) != ir_hash(other));
        const Graph again = load_ir_string(save_ir_json(g), "again");
        QCOMPARE(tensor(again, "v").view->strides, (std::vector<uint64_t>{8, 1}));
        QCOMPARE(ir_hash(again), ir_hash(g));
    }

    void planPlacesTheViewInsideItsBase() {
        const Graph g = load_ir_string(model(kColumns), "columns");
        const Plan p = plan_graph(g, Mode::Inference, {}, {}, "columns");
        const PlannedTensor* m = nullptr;
        const PlannedTensor* v = nullptr;
        for (const PlannedTensor& t : p.tensors) {
            if (t.id == "m") m = &t;
            if (t.id == "v") v = &t;
        }
        QVERIFY(m && v);
        QCOMPARE(v->arena, m->arena);
        QCOMPARE(v->buffer, m->buffer);
        QCOMPARE(v->offset, m->offset + 8);
        // Flat sharding cannot cut it: named, not planned wrong.
        PlanOptions sharded;
        sharded.shard = {2, 0, {Role::Activation}};
        const auto f =
            test::capture_failure([&] { plan_graph(g, Mode::Inference, sharded, {}, "x"); });
        QVERIFY2(f && f->code() == FailureCode::InvalidArgument, f ? f->what() : "planned");
        QCOMPARE(f->where(), std::string("tensor 'v'.view"));
    }
};

QTEST_GUILESS_MAIN(TestStridedViews)
#include "test_strided_views.moc"
