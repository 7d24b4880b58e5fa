// The lazy program format (engine/lazy/program.h): what the loader accepts and how it names
// what it refuses, the initialisers' values, and programs run against the engine.
#include "lazy/lazy_error.h"
#include "lazy/program.h"
#include "test_support.h"

#include <QDir>
#include <QObject>

#include <nlohmann/json.hpp>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

const QString kPrograms = QStringLiteral(TMMU_SOURCE_DIR "/resources/programs");

std::string doc(const std::string& statements) {
    return R"({"format": "tmmu-lazy-program", "version": 1, "program": [)" + statements + "]}";
}

constexpr const char* kX = R"({"let": "x", "tensor": {"values": [[1, 2, 3], [4, 5, 6]]}})";

LazyProgram parse(const std::string& statements) {
    return parse_lazy_program(doc(statements), "t.json");
}

ProgramRun run(const std::string& statements, bool eager = false) {
    return run_lazy_program(parse(statements), EngineOptions{.eager = eager});
}

std::vector<float> values_of(const std::string& tensor_spec) {
    const LazyProgram p =
        parse(R"({"let": "t", "tensor": )" + tensor_spec + "}, " + R"({"read": "t"})");
    return run_lazy_program(p).reads.at(0).values;
}

} // namespace

class TestLazyProgram : public QObject {
    Q_OBJECT
  private slots:
    void bundledExamplesParse() {
        const QStringList files = QDir(kPrograms).entryList({"*.json"}, QDir::Files);
        QVERIFY(files.size() >= 4);
        for (const QString& f : files) {
            const std::string path = (kPrograms + "/" + f).toStdString();
            const LazyProgram p = load_lazy_program(path);
            QCOMPARE(QString::fromStdString(p.name) + ".json", f);
            QVERIFY(!p.description.empty());
            QVERIFY(p.statement_count >= p.program.size());
            QVERIFY(looks_like_lazy_program(test::read_file(path).value_or("")));
        }
    }
    void sniffsByContent() {
        QVERIFY(looks_like_lazy_program("\xEF\xBB\xBF  " + doc("")));
        QVERIFY(!looks_like_lazy_program(R"({"format": "tmmu-ir", "version": 1})"));
        QVERIFY(!looks_like_lazy_program("[\"tmmu-lazy-program\"]"));
        QVERIFY(!looks_like_lazy_program(""));
    }
    void statementsKeepTheirPaths() {
        const LazyProgram p = parse(std::string(kX) + R"(, {"repeat": 2, "body": [
            {"let": "y", "op": "slice", "args": ["x"], "dim": 1, "start": 1},
            {"op": "mul_", "args": ["y", 2]}]})");
        QCOMPARE(p.statement_count, uint64_t(4));
        QCOMPARE(p.name, std::string("t"));
        const Statement& slice = p.program[1].body[0];
        QCOMPARE(slice.path, std::string("program[1].body[0]"));
        QCOMPARE(slice.op, ProgramOp::Slice);
        QVERIFY(!slice.end_given);
        QCOMPARE(p.program[1].body[1].args[1].number, 2.0f);
        QCOMPARE(program_op_name(ProgramOp::MulInPlace), std::string_view("mul_"));
    }
    void initialisers() {
        QCOMPARE(values_of(R"({"shape": [2, 2], "arange": true})"),
                 (std::vector<float>{0, 1, 2, 3}));
        QCOMPARE(values_of(R"({"shape": [3], "arange": [1, 0.5]})"),
                 (std::vector<float>{1, 1.5, 2}));
        QCOMPARE(values_of(R"({"shape": [2], "ones": true})"), (std::vector<float>{1, 1}));
        QCOMPARE(values_of(R"({"shape": [2], "fill": -3})"), (std::vector<float>{-3, -3}));
        QCOMPARE(values_of(R"({"values": 7})"), (std::vector<float>{7}));
        // splitmix64 from the seed, the top 24 bits as u, low + (high - low) * u: these exact
        // floats on every machine (lazy-programs.md).
        QCOMPARE(
            values_of(R"({"shape": [4], "uniform": [-1, 1], "seed": 1})"),
            (std::vector<float>{0x1.10a2dp-3f, 0x1.f75c68p-2f, 0x1.e24e88p-1f, -0x1.c7cf4p-4f}));
    }
    void nestedValuesGiveTheShape() {
        const LazyProgram p = parse(kX);
        QCOMPARE(p.program[0].shape, (Shape{2, 3}));
        QCOMPARE(p.program[0].init.values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
    }

    void malformedProgramsNameTheField_data() {
        QTest::addColumn<QString>("statements");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        const QString x = kX;
        QTest::newRow("unknown op") << x + R"(, {"let": "y", "op": "frob", "args": ["x"]})"
                                    << "program[1].op"
                                    << "unknown op \"frob\"";
        QTest::newRow("unknown name") << x + R"(, {"let": "y", "op": "add", "args": ["x", "q"]})"
                                      << "program[1].args[1]"
                                      << "unknown tensor \"q\"";
        QTest::newRow("arity") << x + R"(, {"let": "y", "op": "matmul", "args": ["x"]})"
                               << "program[1].args"
                               << "takes 2 arguments, got 1";
        QTest::newRow("number for a tensor") << x + R"(, {"let": "y", "op": "exp", "args": [1]})"
                                             << "program[1].args[0]"
                                             << "expected the name";
        QTest::newRow("string for a number")
            << x + R"(, {"let": "o", "sgd": {"params": ["x"], "lr": "fast"}})"
            << "program[1].sgd.lr"
            << "expected a number";
        QTest::newRow("value count")
            << R"({"let": "x", "tensor": {"shape": [2, 2], "values": [1]}})"
            << "program[0].tensor.values"
            << "1 values for shape [2, 2]";
        QTest::newRow("ragged values") << R"({"let": "x", "tensor": {"values": [[1, 2], [3]]}})"
                                       << "program[0].tensor.values[1]"
                                       << "not rectangular";
        QTest::newRow("overflowing shape")
            << R"({"let": "x", "tensor": {"shape": [4294967296, 4294967296], "zeros": true}})"
            << "program[0].tensor.shape[0]"
            << "above the limit";
        QTest::newRow("too many elements")
            << R"({"let": "x", "tensor": {"shape": [65536, 65536], "zeros": true}})"
            << "program[0].tensor.shape"
            << "above the limit";
        // The engine has no empty tensors: dimensions start at 1 (a 0 failed at run time, as a
        // usage error naming no file).
        QTest::newRow("negative dimension")
            << R"({"let": "x", "tensor": {"shape": [2, -1], "zeros": true}})"
            << "program[0].tensor.shape[1]"
            << "-1 is below 1";
        QTest::newRow("zero dimension")
            << R"({"let": "x", "tensor": {"shape": [2, 0], "zeros": true}})"
            << "program[0].tensor.shape[1]"
            << "0 is below 1";
        QTest::newRow("empty nested values") << R"({"let": "x", "tensor": {"values": [[]]}})"
                                   << "program[0].tensor.values[0]"
                                   << "holds no values; a tensor needs at least one";
        QTest::newRow("no values") << R"({"let": "x", "tensor": {"shape": [2]}})"
                                   << "program[0].tensor"
                                   << "needs its values";
        QTest::newRow("f32 range") << R"({"let": "x", "tensor": {"values": [1e39]}})"
                                   << "program[0].tensor.values[0]"
                                   << "outside the f32 range";
        QTest::newRow("attribute of another op")
            << x + R"(, {"let": "y", "op": "relu", "args": ["x"], "dim": 0})"
            << "program[1].dim"
            << "\"relu\" takes no \"dim\"";
        QTest::newRow("pure op without let") << x + R"(, {"op": "relu", "args": ["x"]})"
                                             << "program[1]"
                                             << "needs \"let\"";
        QTest::newRow("in-place op with let")
            << x + R"(, {"let": "y", "op": "add_", "args": ["x", 1]})"
            << "program[1].let"
            << "binds nothing";
        QTest::newRow("two statements in one") << x + R"(, {"read": "x", "mark_step": true})"
                                               << "program[1]"
                                               << "one statement per object";
        QTest::newRow("no statement") << R"({"frob": 1})"
                                      << "program[0]"
                                      << "needs one of";
        QTest::newRow("unknown key") << x + R"(, {"read": "x", "colour": "red"})"
                                     << "program[1]"
                                     << "unknown key \"colour\"";
        QTest::newRow("kind change") << x + R"(, {"let": "x", "sgd": {"params": ["x"], "lr": 1}})"
                                     << "program[1].let"
                                     << "already names a tensor";
        QTest::newRow("optimizer as tensor")
            << x + R"(, {"let": "o", "sgd": {"params": ["x"], "lr": 1}}, {"backward": "o"})"
            << "program[2].backward"
            << "is an optimizer, not a tensor";
        QTest::newRow("duplicate key") << R"({"read": "x", "read": "x"})"
                                       << "t.json"
                                       << "duplicate key \"read\"";
        QTest::newRow("slice step")
            << x + R"(, {"let": "y", "op": "slice", "args": ["x"], "step": 0})"
            << "program[1].step"
            << "at least 1";
        QTest::newRow("rand without shape") << R"({"let": "u", "op": "rand", "args": []})"
                                            << "program[0]"
                                            << "missing key \"shape\"";
        QTest::newRow("dropout probability")
            << x + R"(, {"let": "y", "op": "dropout", "args": ["x"], "p": 1})"
            << "program[1].p"
            << "a dropout probability is in [0, 1)";
        QTest::newRow("dropout without p")
            << x + R"(, {"let": "y", "op": "dropout", "args": ["x"]})"
            << "program[1]"
            << "missing key \"p\"";
        QTest::newRow("checkpoint body") << R"({"checkpoint": 3})"
                                         << "program[0].checkpoint"
                                         << "expected an array";
        QTest::newRow("negative seed") << R"({"manual_seed": -1})"
                                       << "program[0].manual_seed"
                                       << "below 0";
        QTest::newRow("repeat count") << R"({"repeat": -1, "body": []})"
                                      << "program[0].repeat"
                                      << "below 0";
        QTest::newRow("deep nesting")
            << QString(R"({"repeat": 1, "body": [)").repeated(40) + QString("]}").repeated(40)
            << "body"
            << "nest deeper than";
    }
    void malformedProgramsNameTheField() {
        QFETCH(QString, statements);
        QFETCH(QString, where);
        QFETCH(QString, message);
        const auto f = test::capture_failure([&] { parse(statements.toStdString()); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
        QVERIFY2(QString::fromStdString(f->where()).contains(where), f->where().c_str());
        QVERIFY2(QString::fromStdString(f->message()).contains(message), f->message().c_str());
    }
    void headerAndSyntax() {
        const auto syntax =
            test::capture_failure([] { parse_lazy_program("{\n  \"format\": ", "p.json"); });
        QVERIFY(syntax && syntax->where() == "p.json:2:13");
        const auto format = test::capture_failure([] {
            parse_lazy_program(R"({"format": "tmmu-ir", "version": 1, "program": []})", "");
        });
        QVERIFY(format && format->where() == "format");
        const auto version = test::capture_failure([] {
            parse_lazy_program(R"({"format": "tmmu-lazy-program", "version": 2, "program": []})",
                               "");
        });
        QVERIFY(version && version->where() == "version");
    }

    // A tensor named where a number is needed loads (as a Coercion statement) and raises the
    // spec's TensorHostCoercionError when it is reached, naming the field and the iteration.
    void tensorAsNumberIsHostCoercion() {
        const LazyProgram p = parse(R"({"let": "w", "param": {"values": [1, 2]}},
            {"repeat": 2, "body": [{"let": "o", "sgd": {"params": ["w"], "lr": "w"}}]})");
        QCOMPARE(p.program[1].body[0].kind, StatementKind::Coercion);
        try {
            run_lazy_program(p);
            QFAIL("no error");
        } catch (const LazyFailure& f) {
            QCOMPARE(f.kind(), LazyError::TensorHostCoercion);
            QCOMPARE(f.where(), std::string("program[1].body[0].sgd.lr (iteration 1)"));
            QVERIFY(f.message().starts_with("TensorHostCoercionError"));
        }
    }
    void opRefusingItsOperandsIsTheProgramsFault() {
        const auto f = test::capture_failure(
            [] { run(std::string(kX) + R"(, {"let": "y", "op": "matmul", "args": ["x", "x"]})"); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("program[1]"));
        // A dimension counted from the end is named as written (-3 read as -1).
        const auto g = test::capture_failure([] {
            run(std::string(kX) + R"(, {"let": "y", "op": "slice", "args": ["x"], "dim": -3},
                                      {"read": "y"})");
        });
        QVERIFY(g && g->code() == FailureCode::InvalidIrShapes);
        QVERIFY2(g->message().find("dimension -3 out of range for a tensor of shape [2, 3]") !=
                     std::string::npos,
                 g->what());
    }
    // A name bound only inside a repeat of no iterations, used after it: the program's fault
    // at the use, for an optimizer as for a tensor (an optimizer was an internal error).
    void namesBoundByStatementsThatNeverRanAreRefused() {
        const std::string unbound =
            R"({"let": "w", "param": {"shape": [2], "ones": true}},
               {"repeat": 0, "body": [{"let": "opt", "sgd": {"params": ["w"], "lr": 0.1}},
                                      {"let": "t", "op": "mul", "args": ["w", 2]}]}, )";
        for (const char* use :
             {R"({"step": "opt"})", R"({"zero_grad": "opt"})", R"({"read": "t"})"}) {
            const auto f = test::capture_failure([&] { run(unbound + use); });
            QVERIFY2(f && f->code() == FailureCode::InvalidIrShapes, use);
            QCOMPARE(f->where(), std::string("program[2]"));
            QVERIFY2(f->message().find("is not bound yet") != std::string::npos, f->what());
        }
    }
    void readsAndViews() {
        const ProgramRun r = run(std::string(kX) + R"(,
            {"let": "c", "op": "slice", "args": ["x"], "dim": 1, "start": 1},
            {"op": "mul_", "args": ["c", 10]},
            {"let": "t", "op": "transpose", "args": ["x"], "dim0": 0, "dim1": 1},
            {"let": "s", "op": "sum", "args": ["t"], "dims": [0], "keepdim": true},
            {"let": "m", "op": "maximum", "args": [25, "s"]},
            {"let": "e", "op": "slice", "args": ["x"], "dim": -1, "step": 2},
            {"read": ["x", "s", "m", "e"]})");
        QCOMPARE(r.reads.size(), size_t(4));
        QCOMPARE(r.reads[0].values, (std::vector<float>{1, 20, 30, 4, 50, 60}));
        QCOMPARE(r.reads[1].shape, (Shape{1, 2}));
        QCOMPARE(r.reads[1].values, (std::vector<float>{51, 114}));
        QCOMPARE(r.reads[2].values, (std::vector<float>{51, 114}));
        QCOMPARE(r.reads[3].shape, (Shape{2, 2}));
        QCOMPARE(r.reads[3].values, (std::vector<float>{1, 30, 4, 60}));
        QCOMPARE(r.reads[0].site, std::string("program[7]"));
    }
    void tidyDisposesWhatItDoesNotKeep() {
        const std::string body = std::string(kX) + R"(,
            {"tidy": [{"let": "a", "op": "exp", "args": ["x"]},
                      {"let": "b", "op": "neg", "args": ["a"]}], "keep": ["b"]},
            {"read": "b"})";
        QCOMPARE(run(body).reads.size(), size_t(1));
        try {
            run(body + R"(, {"read": "a"})");
            QFAIL("no error");
        } catch (const LazyFailure& f) {
            QCOMPARE(f.kind(), LazyError::DisposedTensor);
        }
    }
    void lazyAndEagerReadTheSame() {
        const LazyProgram p = load_lazy_program((kPrograms + "/mlp-training.json").toStdString());
        const ProgramRun lazy = run_lazy_program(p);
        const ProgramRun again = run_lazy_program(p);
        const ProgramRun eager = run_lazy_program(p, EngineOptions{.eager = true});
        QCOMPARE(lazy.trace_hash, again.trace_hash);
        QCOMPARE(lazy.reads.size(), size_t(5));
        QCOMPARE(lazy.stats.steps, uint64_t(3));
        QVERIFY(eager.stats.plans > lazy.stats.plans);
        for (size_t i = 0; i < lazy.reads.size(); ++i)
            QCOMPARE(lazy.reads[i].values, eager.reads[i].values);
        // The loss falls at every step (an independent float64 model gives 0.132253, 0.125141,
        // 0.118783).
        QCOMPARE(lazy.reads[0].site, std::string("program[8].body[9] (iteration 1)"));
        QVERIFY(std::abs(lazy.reads[0].values[0] - 0.132253f) < 1e-5f);
        QVERIFY(std::abs(lazy.reads[2].values[0] - 0.118783f) < 1e-5f);
    }
    // 10.6 from a program: a compiled call inside a checkpointed body that writes a tensor
    // written before (which has its own location) stops the run with
    // CheckpointCompiledNotPureError at the statement; writing a fresh tensor in place would
    // externalize it inside the body instead.
    void compiledWritesInCheckpointsAreNamed() {
        const std::string head =
            "{\"let\": \"w\", \"tensor\": {\"values\": [3, 4]}}, "
            "{\"op\": \"mul_\", \"args\": [\"w\", 1]}, "
            "{\"let\": \"t\", \"tensor\": {\"values\": [1, 2]}}, "
            "{\"checkpoint\": [{\"compile\": \"f\", \"body\": [{\"op\": \"mul_\", \"args\": [\"";
        const std::string tail = "\", 2]}], \"returns\": []}]}";
        const std::vector<std::pair<std::string, std::string>> cases{
            {"w", "CheckpointCompiledNotPureError"},
            {"t", "CheckpointCompiledAutoExternalizeError"}};
        for (const auto& c : cases) {
            const ProgramRun r =
                run_lazy_program_to_failure(parse(head + c.first + tail), {.compile = true});
            QCOMPARE(r.failure_code, FailureCode::LazyEngineError);
            QVERIFY2(r.failure.find(c.second) != std::string::npos &&
                         r.failure.find("program[3].checkpoint[0].body[0]") != std::string::npos,
                     r.failure.c_str());
        }
    }

    void outputsAreJson() {
        const LazyProgram p = load_lazy_program((kPrograms + "/view-mutation.json").toStdString());
        const ProgramRun r = run_lazy_program(p);
        const auto summary = nlohmann::json::parse(program_run_json(p, r));
        const auto trace = nlohmann::json::parse(lazy_trace_json(p, r));
        QCOMPARE(summary["events"].get<uint64_t>(), trace["events"].size());
        QCOMPARE(summary["plans"].get<uint64_t>(), trace["plans"].size());
        QCOMPARE(summary["trace_hash"].get<std::string>(), trace["trace_hash"].get<std::string>());
        QCOMPARE(summary["reads"].size(), r.reads.size());
        QCOMPARE(trace["events"][0]["index"].get<uint64_t>(), uint64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestLazyProgram)
#include "test_lazy_program.moc"
