// Every check of the IR loader and of finalize_graph(): the failure code, and that where() names
// the offending tensor, node or JSON field.
#include "ir/dynamic_dims.h"
#include "ir/ir_json.h"
#include "ir/validate.h"
#include "test_support.h"

#include <QObject>

using namespace tmmu;

namespace {

const std::string kData = std::string(TMMU_SOURCE_DIR) + "/tests/data/ir/";

std::string doc(const std::string& tensors, const std::string& nodes,
                const std::string& extra = "") {
    return R"({"format": "tmmu-ir", "version": 1, "tensors": [)" + tensors + R"(], "nodes": [)" +
           nodes + "]" + extra + "}";
}

// x (input) -> relu -> y (output), with `more` appended to the tensor list.
std::string with_tensors(const std::string& more, const std::string& nodes = "") {
    return doc(R"({"id": "x", "shape": [4, 4], "dtype": "f32", "role": "input"},
                  {"id": "y", "shape": [4, 4], "dtype": "f32", "role": "output"})" +
                   (more.empty() ? "" : ", " + more),
               R"({"id": "relu", "opcode": "relu", "inputs": ["x"], "outputs": ["y"]})" +
                   (nodes.empty() ? "" : ", " + nodes));
}

// with_tensors(more, nodes) under a shape envelope of one dimension, seq in [1, 64].
std::string with_seq(const std::string& more, const std::string& seq = R"({"min": 1, "max": 64})",
                     const std::string& extra = "", const std::string& nodes = "") {
    std::string text = with_tensors(more, nodes);
    text.pop_back(); // the closing brace
    return text + R"(, "shape_envelope": {"seq": )" + seq + "}" + extra + "}";
}

Graph small_graph() {
    Graph g;
    g.tensors.resize(2);
    g.tensors[0].id = "x";
    g.tensors[0].shape = {4, 4};
    g.tensors[0].role = Role::Input;
    g.tensors[1].id = "y";
    g.tensors[1].shape = {4, 4};
    g.tensors[1].role = Role::Output;
    g.nodes.resize(1);
    g.nodes[0].id = "relu";
    g.nodes[0].opcode = "relu";
    g.nodes[0].inputs = {0};
    g.nodes[0].outputs = {1};
    return g;
}

} // namespace

// Asserts code, a fragment of where() and a fragment of message().
#define EXPECT_FAIL_AT(expr, expected_code, where_part, message_part)                              \
    do {                                                                                           \
        auto f_ = ::tmmu::test::capture_failure([&] { (void)(expr); });                            \
        QVERIFY2(f_.has_value(), "expected a tmmu::Failure, none was thrown");                     \
        QVERIFY2(f_->code() == (expected_code), f_->what());                                       \
        QVERIFY2(f_->where().find(where_part) != std::string::npos, f_->what());                   \
        QVERIFY2(f_->message().find(message_part) != std::string::npos, f_->what());               \
    } while (0)

#define EXPECT_JSON_FAIL(json, where_part, message_part)                                           \
    EXPECT_FAIL_AT(load_ir_string(json, "m.json"), FailureCode::InvalidIrShapes, where_part,       \
                   message_part)

class TestIrErrors : public QObject {
    Q_OBJECT
  private slots:
    void validBaselineLoads() {
        // The helpers themselves produce a valid model, so each failure below has one cause.
        QCOMPARE(load_ir_string(with_tensors(""), "m.json").tensors.size(), size_t(2));
        Graph g = small_graph();
        finalize_graph(g);
        QCOMPARE(g.tensors[1].bytes, 64u);
    }

    // --- files and syntax --------------------------------------------------------------------
    void unreadableFileIsIoError() {
        EXPECT_FAIL_AT(load_ir_file(kData + "does_not_exist.json"), FailureCode::IoError,
                       "does_not_exist.json", "cannot open");
        EXPECT_FAIL_AT(save_ir_file(small_graph(), kData + "no_such_dir/out.json"),
                       FailureCode::IoError, "no_such_dir", "cannot open");
    }
    void syntaxErrorGivesLineAndColumn() {
        EXPECT_FAIL_AT(load_ir_file(kData + "syntax_error.json"), FailureCode::InvalidIrShapes,
                       "syntax_error.json:6:", "JSON syntax error");
        EXPECT_FAIL_AT(load_ir_string("{\n\"format\": tmmu}", "<clip>"),
                       FailureCode::InvalidIrShapes, "<clip>:2:", "syntax");
        EXPECT_JSON_FAIL("", "m.json:1:1", "syntax");
    }
    void duplicateKeyIsRejected() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32", "dtype": "f16",
                             "role": "input"})"),
                         "tensors[2]", "duplicate key \"dtype\"");
        EXPECT_JSON_FAIL(R"({"format": "tmmu-ir", "format": "tmmu-ir"})", "top level",
                         "duplicate key");
    }

    // --- header and unknown keys -------------------------------------------------------------
    void headerIsChecked() {
        EXPECT_JSON_FAIL(R"([1, 2])", "top level", "expected an object");
        EXPECT_JSON_FAIL(R"({"version": 1, "tensors": [], "nodes": []})", "top level",
                         "missing required key \"format\"");
        EXPECT_JSON_FAIL(R"({"format": "onnx", "version": 1, "tensors": [], "nodes": []})",
                         "format", "expected \"tmmu-ir\"");
        EXPECT_JSON_FAIL(R"({"format": "tmmu-ir", "version": 2, "tensors": [], "nodes": []})",
                         "version", "supported versions: 1");
        EXPECT_JSON_FAIL(R"({"format": "tmmu-ir", "version": 1, "tensors": []})", "top level",
                         "missing required key \"nodes\"");
        EXPECT_JSON_FAIL(R"({"format": "tmmu-ir", "version": 1, "tensors": {}, "nodes": []})",
                         "tensors", "expected an array");
    }
    void unknownKeysAreRejected() {
        EXPECT_JSON_FAIL(doc("", "", R"(, "executon_order": [])"), "top level",
                         "unknown key \"executon_order\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32", "role": "input",
                             "saved_for_backwards": true})"),
                         "tensors[2] ('z')", "unknown key \"saved_for_backwards\"");
        EXPECT_JSON_FAIL(
            with_tensors("", R"({"id": "n", "opcode": "neg", "inputs": [], "outputs": [],
                                 "stage": "forward"})"),
            "nodes[1] ('n')", "unknown key \"stage\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "v", "shape": [1], "dtype": "f32", "role": "input",
                             "view": {"base": "x", "offset": 4}})"),
                         "tensors[2] ('v').view", "unknown key \"offset\"");
    }

    // --- field values ------------------------------------------------------------------------
    void enumsNameTheChoices() {
        EXPECT_FAIL_AT(load_ir_file(kData + "bad_dtype.json"), FailureCode::InvalidIrShapes,
                       "tensors[1] ('h0.q').dtype", "unknown dtype \"f13\"; expected one of f64");
        EXPECT_JSON_FAIL(
            with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32", "role": "weights"})"),
            "tensors[2] ('z').role", "optimizer_state");
        EXPECT_JSON_FAIL(
            with_tensors("", R"({"id": "n", "opcode": "neg", "inputs": [], "outputs": [],
                                 "phase": "fwd"})"),
            "nodes[1] ('n').phase", "unknown phase \"fwd\"");
    }
    void requiredFieldsAndTypes() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "role": "input"})"),
                         "tensors[2] ('z')", "missing required key \"dtype\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"shape": [1], "dtype": "f32", "role": "input"})"),
                         "tensors[2]", "missing required key \"id\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": 7, "shape": [1], "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2].id", "expected a string");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": "4x4", "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2] ('z').shape", "expected an array");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "saved_for_backward": 1})"),
                         "tensors[2] ('z').saved_for_backward", "expected true or false");
        EXPECT_JSON_FAIL(with_tensors("", R"({"id": "n", "opcode": "", "inputs": [],
                                              "outputs": []})"),
                         "nodes[1] ('n').opcode", "empty");
    }
    void numbersMustFit() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [4, -1], "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2] ('z').shape[1]", "negative");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [2.5], "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2] ('z').shape[0]", "integer");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [9223372036854775808],
                                          "dtype": "f32", "role": "input"})"),
                         "tensors[2] ('z').shape[0]", "2^63-1");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "alignment": 18446744073709551616})"),
                         "tensors[2] ('z').alignment", "2^64-1");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "offset": -64})"),
                         "tensors[2] ('z').offset", "non-negative");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "view": {"base": "x",
                                          "byte_offset": "0"}})"),
                         "tensors[2] ('z').view.byte_offset", "non-negative integer");
    }

    // --- ids and references ------------------------------------------------------------------
    void idsMustBeUniqueAndNonEmpty() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "x", "shape": [1], "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2].id", "duplicate id \"x\" (first used by tensors[0])");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "", "shape": [1], "dtype": "f32",
                                          "role": "input"})"),
                         "tensors[2].id", "empty");
        EXPECT_JSON_FAIL(with_tensors("", R"({"id": "relu", "opcode": "neg", "inputs": [],
                                              "outputs": []})"),
                         "nodes[1].id", "duplicate id \"relu\"");
        Graph g = small_graph();
        g.tensors[1].id = "x";
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "tensor 'x'.id",
                       "tensors[0] and tensors[1]");
        g = small_graph();
        g.nodes[0].id.clear();
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "nodes[0].id", "empty");
    }
    void referencesMustResolve() {
        EXPECT_JSON_FAIL(with_tensors("", R"({"id": "n", "opcode": "add", "inputs": ["x", "q"],
                                              "outputs": []})"),
                         "nodes[1] ('n').inputs[1]", "unknown tensor id \"q\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "in_place_of": "nope"})"),
                         "tensors[2] ('z').in_place_of", "unknown tensor id \"nope\"");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "view": {"base": "nope"}})"),
                         "tensors[2] ('z').view.base", "unknown tensor id");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "must_not_alias": ["x", "nope"]})"),
                         "tensors[2] ('z').must_not_alias[1]", "unknown tensor id");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [1], "dtype": "f32", "role": "input"})", "",
                             R"(, "execution_order": ["ghost"])"),
                         "execution_order[0]", "unknown node id \"ghost\"");
    }
    void indicesInRangeForApiGraphs() {
        Graph g = small_graph();
        g.nodes[0].inputs = {7};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "node 'relu'.inputs[0]",
                       "out of range");
        g = small_graph();
        g.nodes[0].outputs.push_back(2);
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "node 'relu'.outputs[1]",
                       "out of range");
        g = small_graph();
        g.tensors[0].must_not_alias = {9};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes,
                       "tensor 'x'.must_not_alias[0]", "out of range");
        g = small_graph();
        g.tensors[0].dtype = static_cast<DType>(200);
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "tensor 'x'.dtype", "");
        g = small_graph();
        g.nodes[0].phase = static_cast<Phase>(9);
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "node 'relu'.phase", "");
    }

    // --- producers ---------------------------------------------------------------------------
    void twoProducersNameBothNodes() {
        EXPECT_FAIL_AT(load_ir_file(kData + "two_producers.json"), FailureCode::InvalidIrShapes,
                       "tensor 'y'", "node 'first' and node 'second'");
        Graph g = small_graph();
        g.nodes[0].outputs = {1, 1};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "node 'relu'.outputs[1]",
                       "more than once");
    }
    void nodeMayNotReadItsOwnOutput() {
        Graph g = small_graph();
        g.nodes[0].inputs = {0, 1};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "node 'relu'.inputs[1]",
                       "its own output 'y'");
    }
    void producedRolesNeedAProducer() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "act", "shape": [1], "dtype": "f32",
                                          "role": "activation"})"),
                         "tensor 'act'", "activation tensor 'act' has no producer");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "ws", "shape": [1], "dtype": "u8",
                                          "role": "workspace"})"),
                         "tensor 'ws'", "workspace tensor 'ws' has no producer");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "w", "shape": [4, 4], "dtype": "f32",
                                          "role": "parameter"})",
                                      R"({"id": "init", "opcode": "randn", "inputs": [],
                                          "outputs": ["w"]})"),
                         "tensor 'w'", "only be produced by an in-place update");
    }

    // --- shapes, sizes, alignment ------------------------------------------------------------
    void negativeDimensionNamesTheIndex() {
        Graph g = small_graph();
        g.tensors[1].shape = {4, 4, -2};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "tensor 'y'.shape[2]",
                       "negative");
    }
    void sizeOverflowIsAllocationOverflow() {
        EXPECT_FAIL_AT(load_ir_string(with_tensors(R"({"id": "huge", "shape": [4294967296,
                                          4294967296], "dtype": "f32", "role": "input"})"),
                                      "m.json"),
                       FailureCode::AllocationOverflow, "tensor 'huge'", "overflows");
        // The element count fits but times dtype bytes does not.
        Graph g = small_graph();
        g.tensors[0].shape = {int64_t(1) << 62};
        g.tensors[0].dtype = DType::F64;
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::AllocationOverflow, "tensor 'x'", "");
    }
    void alignmentMustBeAPowerOfTwo() {
        EXPECT_FAIL_AT(load_ir_string(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "alignment": 48})"),
                                      "m.json"),
                       FailureCode::AlignmentViolation, "tensor 'z'.alignment", "power of two");
    }
    void pinnedOffsetMustBeAligned() {
        EXPECT_FAIL_AT(load_ir_string(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "alignment": 64, "offset": 96})"),
                                      "m.json"),
                       FailureCode::AlignmentViolation, "tensor 'z'.offset", "alignment 64");
        // Without an alignment the offset is free (the arena default is checked by the planner).
        QVERIFY(load_ir_string(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                               "role": "input", "offset": 96})"),
                               "m.json")
                    .tensors[2]
                    .pinned_offset == 96u);
    }

    // --- dynamic dimensions --------------------------------------------------------------------
    void shapesNameDeclaredDimensionsOnly() {
        const std::string d = R"({"id": "d", "shape": ["seq", 4], "dtype": "f32",
                                   "role": "input"})";
        EXPECT_JSON_FAIL(with_tensors(d), "tensors[2] ('d').shape[0]", "has no shape_envelope");
        EXPECT_JSON_FAIL(with_seq(R"({"id": "d", "shape": ["sq"], "dtype": "f32",
                                      "role": "input"})"),
                         "tensors[2] ('d').shape[0]", "the shape_envelope declares seq");
        QCOMPARE(load_ir_string(with_seq(d), "m.json").tensors[2].bytes, uint64_t(64 * 4 * 4));
    }
    void productAxesNameDimensionsAndPositiveFactors() {
        const auto shaped = [](const std::string& shape,
                               const std::string& seq = R"({"min": 1, "max": 64})") {
            return with_seq(R"({"id": "d", "shape": [)" + shape +
                                R"(], "dtype": "f32", "role": "input"})",
                            seq);
        };
        const std::string at = "tensors[2] ('d').shape[0]";
        EXPECT_JSON_FAIL(shaped(R"("seq*sq")"), at, "dimension \"sq\" is not declared");
        EXPECT_JSON_FAIL(shaped(R"("seq**2")"), at, "\"seq**2\" has an empty part");
        EXPECT_JSON_FAIL(shaped(R"("*seq")"), at, "\"*seq\" has an empty part");
        EXPECT_JSON_FAIL(shaped(R"("4")"), at,
                         "\"4\" names no dimension; write a fixed size as a number");
        EXPECT_JSON_FAIL(shaped(R"("0*seq")"), at, "factor 0 in \"0*seq\" is not a positive");
        EXPECT_JSON_FAIL(shaped(R"("99999999999999999999*seq")"), at,
                         "is not a positive integer below 2^63");
        EXPECT_JSON_FAIL(shaped(R"("seq*seq*seq", 8)", R"({"min": 1, "max": 2147483647})"),
                         "m.json: tensor 'd'.shape[0]",
                         "seq*seq*seq at seq=2147483647 is larger than 9223372036854775807");
        // The envelope is checked before products are taken at its binding.
        EXPECT_FAIL_AT(
            load_ir_string(shaped(R"("seq*seq")", R"({"min": 1, "max": 8, "default": 4000000000})"),
                           "m.json"),
            FailureCode::ShapeEnvelopeViolation, "m.json: shape_envelope.seq",
            "outside the model's shape envelope");
        QCOMPARE(load_ir_string(shaped(R"("2*seq*seq")"), "m.json").tensors[2].bytes,
                 uint64_t(2 * 64 * 64 * 4));
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [4], "dtype": "f32", "role": "input"})", "",
                             R"(, "shape_envelope": {"a*b": {"min": 1, "max": 8}})"),
                         "shape_envelope.a*b", "dimension name 'a*b' holds '*'");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [4], "dtype": "f32", "role": "input"})", "",
                             R"(, "shape_envelope": {"2": {"min": 1, "max": 8}})"),
                         "shape_envelope.2", "dimension name '2' is a number");
    }
    void envelopesMustHoldTheirBinding() {
        const std::string d = R"({"id": "d", "shape": ["seq"], "dtype": "f32", "role": "input"})";
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 9, "max": 8})"), "shape_envelope.seq",
                         "envelope [9, 8] is not inside [1, 2147483647] with min <= max");
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 0, "max": 8})"), "shape_envelope.seq",
                         "envelope [0, 8] is not inside");
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 1, "max": 2147483648})"), "shape_envelope.seq",
                         "is not inside [1, 2147483647]");
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 1})"), "shape_envelope.seq",
                         "missing required key \"max\"");
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 1, "max": 8, "step": 2})"), "shape_envelope.seq",
                         "unknown key \"step\"");
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": -1, "max": 8})"), "shape_envelope.seq.min",
                         "negative");
        EXPECT_FAIL_AT(
            load_ir_string(with_seq(d, R"({"min": 1, "max": 8, "default": 9})"), "m.json"),
            FailureCode::ShapeEnvelopeViolation, "m.json: shape_envelope.seq",
            "seq=9 is outside the model's shape envelope [1, 8]");
    }
    void replanPolicyNeedsAnEnvelope() {
        const std::string d = R"({"id": "d", "shape": ["seq"], "dtype": "f32", "role": "input"})";
        EXPECT_JSON_FAIL(with_seq(d, R"({"min": 1, "max": 8})", R"(, "replan_policy": "LATER")"),
                         "replan_policy", "expected ABORT or REPLAN_AT_SAFEPOINT");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [1], "dtype": "f32", "role": "input"})", "",
                             R"(, "replan_policy": "ABORT")"),
                         "replan_policy", "declares no shape_envelope");
    }
    void apiGraphsNeedDimensionsForAReplanPolicy() {
        Graph g = small_graph();
        g.replan_policy = ReplanPolicy::ReplanAtSafepoint;
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "replan_policy",
                       "declares no shape_envelope");
        g.dims.push_back({"n", 1, 8, 4});
        g.tensors[0].shape_dims = {{{0}}, {{7}}}; // the second axis names no dimension there is
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "tensor 'x'.shape[1]",
                       "dimension index 7 is out of range");
    }
    void dynamicViewsTakeTheirLengthFromTheirShape() {
        EXPECT_JSON_FAIL(with_seq(R"({"id": "d", "shape": ["seq"], "dtype": "f32",
                                      "role": "input"},
                                     {"id": "v", "shape": ["seq"], "dtype": "f32",
                                      "role": "input", "view": {"base": "d",
                                      "byte_length": 256}})"),
                         "tensors[3] ('v').view.byte_length", "leave byte_length out");
    }
    void envelopeCornersAreCheckedWhenLoading() {
        // v fits d at seq=64 (the binding and the max) but not at the min, seq=1.
        EXPECT_FAIL_AT(load_ir_string(with_seq(R"({"id": "d", "shape": ["seq"], "dtype": "f32",
                                                   "role": "input"},
                                                  {"id": "v", "shape": [4], "dtype": "f32",
                                                   "role": "input", "view": {"base": "d",
                                                   "byte_offset": 16}})"),
                                      "m.json"),
                       FailureCode::InvalidIrShapes, "m.json: tensor 'v'.view",
                       "at the envelope's min (seq=1): view bytes [16, 32) exceed base 'd' of 4 "
                       "bytes");
        // An in-place write over a tensor whose size only matches at one binding.
        EXPECT_FAIL_AT(load_ir_string(with_seq(R"({"id": "d", "shape": ["seq"], "dtype": "f32",
                                                   "role": "input"},
                                                  {"id": "e", "shape": [64], "dtype": "f32",
                                                   "role": "output", "in_place_of": "d"})",
                                               R"({"min": 1, "max": 64})", "",
                                               R"({"id": "w", "opcode": "relu",
                                                   "inputs": ["d"], "outputs": ["e"]})"),
                                      "m.json"),
                       FailureCode::InvalidIrShapes, "tensor 'e'.in_place_of",
                       "at the envelope's min (seq=1)");
    }
    void bindingNamesDeclaredDimensionsInsideTheirEnvelope() {
        Graph g = load_ir_string(with_seq(R"({"id": "d", "shape": ["seq"], "dtype": "f32",
                                              "role": "input"})"),
                                 "m.json");
        EXPECT_FAIL_AT(bind_dims(g, {{"batch", 2}}, "--dim"), FailureCode::InvalidArgument, "--dim",
                       "no dynamic dimension 'batch'; it declares seq");
        EXPECT_FAIL_AT(bind_dims(g, {{"seq", 65}}, "--dim"), FailureCode::ShapeEnvelopeViolation,
                       "--dim", "seq=65 is outside the model's shape envelope [1, 64]");
        QCOMPARE(g.tensors[2].bytes, uint64_t(256)); // unchanged by the refused bindings
        Graph fixed = small_graph();
        finalize_graph(fixed);
        EXPECT_FAIL_AT(bind_dims(fixed, {{"seq", 2}}, "--dim"), FailureCode::InvalidArgument,
                       "--dim", "declares no shape_envelope");
    }

    // --- views -------------------------------------------------------------------------------
    void viewMustFitInsideItsBase() {
        // x is 64 bytes; [48, 48 + 32) overruns it.
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "v", "shape": [8], "dtype": "f32",
                                          "role": "input", "view": {"base": "x",
                                          "byte_offset": 48}})"),
                         "tensor 'v'.view", "exceed base 'x' of 64 bytes");
        EXPECT_FAIL_AT(load_ir_string(with_tensors(R"({"id": "v", "shape": [1], "dtype": "f32",
                            "role": "input", "view": {"base": "x",
                            "byte_offset": 18446744073709551615}})"),
                                      "m.json"),
                       FailureCode::AllocationOverflow, "tensor 'v'.view", "overflows");
    }
    void viewLengthMustMatchItsSize() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "v", "shape": [2], "dtype": "f32",
                                          "role": "input", "view": {"base": "x",
                                          "byte_length": 16}})"),
                         "tensor 'v'.view.byte_length", "own size 8 bytes");
    }
    void viewOfItselfOrInACycle() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "v", "shape": [1], "dtype": "f32",
                                          "role": "input", "view": {"base": "v"}})"),
                         "tensor 'v'.view.base", "view of itself");
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "p", "shape": [1], "dtype": "f32",
                                          "role": "input", "view": {"base": "q"}},
                                         {"id": "q", "shape": [1], "dtype": "f32",
                                          "role": "input", "view": {"base": "p"}})"),
                         "tensor 'p'.view.base", "view cycle: 'p' -> 'q' -> 'p'");
        // A chain of views ending at a real tensor is fine.
        QVERIFY(load_ir_string(with_tensors(R"({"id": "p", "shape": [1], "dtype": "f32",
                                               "role": "input", "view": {"base": "q"}},
                                              {"id": "q", "shape": [2], "dtype": "f32",
                                               "role": "input", "view": {"base": "x"}})"),
                               "m.json")
                    .tensors[2]
                    .view.has_value());
    }

    // --- in-place ----------------------------------------------------------------------------
    void inPlaceConditions() {
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [4], "dtype": "f32", "role": "input"},
                   {"id": "y", "shape": [4], "dtype": "f32", "role": "output",
                    "in_place_of": "y"})",
                             R"({"id": "n", "opcode": "relu", "inputs": ["x"], "outputs": ["y"]})"),
                         "tensor 'y'.in_place_of", "in place of itself");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [8], "dtype": "f32", "role": "input"},
                   {"id": "y", "shape": [4], "dtype": "f32", "role": "output",
                    "in_place_of": "x"})",
                             R"({"id": "n", "opcode": "half", "inputs": ["x"], "outputs": ["y"]})"),
                         "tensor 'y'.in_place_of", "'y' is 16 bytes, 'x' is 32 bytes");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [4], "dtype": "f32", "role": "input"},
                   {"id": "z", "shape": [4], "dtype": "f32", "role": "input"},
                   {"id": "y", "shape": [4], "dtype": "f32", "role": "output",
                    "in_place_of": "z"})",
                             R"({"id": "n", "opcode": "relu", "inputs": ["x"], "outputs": ["y"]})"),
                         "tensor 'y'.in_place_of",
                         "producer 'n' of in-place tensor 'y' does not read 'z'");
        EXPECT_JSON_FAIL(doc(R"({"id": "x", "shape": [4], "dtype": "f32", "role": "input"},
                   {"id": "y", "shape": [4], "dtype": "f32", "role": "input",
                    "in_place_of": "x"})",
                             ""),
                         "tensor 'y'.in_place_of", "has no producer");
    }
    void mustNotAliasItself() {
        EXPECT_JSON_FAIL(with_tensors(R"({"id": "z", "shape": [1], "dtype": "f32",
                                          "role": "input", "must_not_alias": ["x", "z"]})"),
                         "tensor 'z'.must_not_alias[1]", "its own must_not_alias");
    }

    // --- execution order ---------------------------------------------------------------------
    void givenOrderMustListEveryNodeOnce() {
        const std::string tensors = R"({"id": "x", "shape": [1], "dtype": "f32", "role": "input"},
                                       {"id": "a", "shape": [1], "dtype": "f32", "role": "output"},
                                       {"id": "b", "shape": [1], "dtype": "f32", "role": "output"})";
        const std::string nodes =
            R"({"id": "na", "opcode": "neg", "inputs": ["x"], "outputs": ["a"]},
               {"id": "nb", "opcode": "neg", "inputs": ["x"], "outputs": ["b"]})";
        EXPECT_JSON_FAIL(doc(tensors, nodes, R"(, "execution_order": ["na", "nb", "na"])"),
                         "execution_order[2]", "node 'na' is listed twice");
        EXPECT_JSON_FAIL(doc(tensors, nodes, R"(, "execution_order": ["nb"])"), "execution_order",
                         "node 'na' is missing");
        Graph g = small_graph();
        g.execution_order = {3};
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::InvalidIrShapes, "execution_order[0]",
                       "out of range");
    }
    void givenOrderMustWriteBeforeRead() {
        EXPECT_FAIL_AT(load_ir_file(kData + "read_before_write.json"), FailureCode::LivenessCycle,
                       "node 'consume'.inputs[0]",
                       "reads tensor 'h' before its producer 'produce' runs");
    }
    void dataflowCycleNamesThePath() {
        auto f = test::capture_failure([] { load_ir_file(kData + "cycle.json"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::LivenessCycle);
        QVERIFY2(f->where().find("node 'loop_a'") != std::string::npos, f->what());
        QVERIFY2(f->message().find("'loop_a' --a--> 'loop_b' --b--> 'loop_a'") != std::string::npos,
                 f->what());
        QVERIFY2(f->where().find("cycle.json") != std::string::npos, f->what());
    }
    void longerCycleIsFoundPastAnAcyclicPrefix() {
        // n0 feeds a 3-cycle n1 -> n2 -> n3 -> n1; the report names only the cycle.
        Graph g;
        for (int i = 0; i < 5; ++i) {
            Tensor t;
            t.id = "t" + std::to_string(i);
            t.shape = {2};
            t.role = i == 0 ? Role::Input : Role::Activation;
            g.tensors.push_back(t);
        }
        auto node = [&](std::string id, std::vector<TensorIndex> in, TensorIndex out) {
            Node n;
            n.id = std::move(id);
            n.opcode = "op";
            n.inputs = std::move(in);
            n.outputs = {out};
            g.nodes.push_back(n);
        };
        node("n0", {0}, 1);
        node("n1", {1, 4}, 2);
        node("n2", {2}, 3);
        node("n3", {3}, 4);
        EXPECT_FAIL_AT(finalize_graph(g), FailureCode::LivenessCycle, "node 'n",
                       "--t2--> 'n2' --t3--> 'n3'");
        auto f = test::capture_failure([&] { finalize_graph(g); });
        QVERIFY2(f->message().find("n0") == std::string::npos, f->what());
    }
};

QTEST_GUILESS_MAIN(TestIrErrors)
#include "test_ir_errors.moc"
