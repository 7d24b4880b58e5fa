// Every failure code, end to end: the real `tmmu` binary meets an input that fails with that
// code and must exit with its documented status (README: 2 for usage errors, 10 + code
// otherwise) and one stderr line "tmmu: CODE at WHERE: ...". The test fails if a code is left
// uncovered, so a new code needs a case here.
#include "io/checkpoint.h"
#include "io/dsa_csv.h"
#include "plan/plan_hash.h"
#include "sample_plan.h"
#include "test_support.h"

#include <QFile>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

using namespace tmmu;

namespace {

QString resource(const char* rel) {
    return QStringLiteral(TMMU_SOURCE_DIR "/") + rel;
}

void write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// A checkpoint that decodes (hashes right, canonical bytes) but whose activations arena puts
// buffer b over a, which is live at the same time: only the validator can object.
void write_colliding_checkpoint(const QString& path) {
    Plan p = test::sample_plan();
    ArenaPlan& acts = p.arenas[1];
    acts.solution.offsets[1] = 0; // b (live [1, 3)) onto a (live [0, 2))
    acts.solution.height = 512;
    acts.metrics.peak_bytes = acts.metrics.lower_bound = 512;
    acts.metrics.derive_ratios();
    for (PlannedTensor& t : p.tensors)
        if (t.id == "b") t.offset = 0;
    p.plan_hash = compute_plan_hash(p);
    write_checkpoint_file(p, path.toStdString());
}

// A problem big enough that `optimal` with a large budget searches for many seconds.
void write_long_problem(const QString& path) {
    DsaProblem d;
    // One time-connected group small enough for the exact search (at most 2,000 buffers), which
    // then runs for minutes on a budget of 2e9 nodes. (Larger groups get only the windowed
    // improvement, whose work limit ends it within a second.)
    d.problem = test::random_problem(3, 1500, 2000, 1 << 20, true);
    for (size_t i = 0; i < d.problem.buffers.size(); ++i)
        d.ids.push_back("b" + std::to_string(i));
    d.given_offsets.assign(d.problem.buffers.size(), std::nullopt);
    write(path, QByteArray::fromStdString(write_dsa_csv(d, nullptr)));
}

} // namespace

class TestExitStatus : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::set<QString> covered_;
    bool gpu_runs_ = false;    // this build and machine run a GPU backend (Vulkan or CUDA)
    bool onnx_corpus_ = false; // libonnx-testdata is installed (ONNX models to load)

    void expect(const test::ProgramRun& r, FailureCode code) {
        const QString name = QString::fromUtf8(failure_code_name(code).data());
        QVERIFY2(r.code == failure_exit_status(code),
                 qPrintable(QString("%1: exit %2, expected %3; stderr: %4")
                                .arg(name)
                                .arg(r.code)
                                .arg(failure_exit_status(code))
                                .arg(r.err)));
        QVERIFY2(r.err.startsWith("tmmu: " + name + " at "), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        covered_.insert(name);
    }
    test::ProgramRun tmmu(const QStringList& args) { return test::run_program(TMMU_CLI, args); }

  private slots:
    void invalidIrShapes() {
        expect(tmmu({"plan", resource("tests/data/ir/bad_dtype.json")}),
               FailureCode::InvalidIrShapes);
    }
    void livenessCycle() {
        expect(tmmu({"plan", resource("tests/data/ir/cycle.json")}), FailureCode::LivenessCycle);
    }
    void addressCollision() {
        const QString path = dir_.filePath("colliding.ckpt");
        write_colliding_checkpoint(path);
        expect(tmmu({"validate", path}), FailureCode::AddressCollision);
    }
    void allocationOverflow() {
        const QString path = dir_.filePath("huge.json");
        write(path, R"({"format":"tmmu-ir","version":1,"tensors":[
            {"id":"x","shape":[4294967296,4294967296,16],"dtype":"f32","role":"input"},
            {"id":"y","shape":[4],"dtype":"f32","role":"output"}],
            "nodes":[{"id":"n","opcode":"sum","inputs":["x"],"outputs":["y"]}]})");
        expect(tmmu({"plan", path}), FailureCode::AllocationOverflow);
    }
    // Bad data in a file is the file's failure code (INVALID_IR_SHAPES, 10), never usage (2) or
    // an internal error (3), and validate judges a file exactly as plan does.
    void dataErrorsAreTheFilesFailure() {
        const QString huge_number = dir_.filePath("huge-number.json");
        write(huge_number, R"({"format":"tmmu-ir","version":1,"tensors":[
            {"id":"x","shape":[1e400],"dtype":"f32","role":"input"},
            {"id":"y","shape":[4],"dtype":"f32","role":"output"}],
            "nodes":[{"id":"n","opcode":"sum","inputs":["x"],"outputs":["y"]}]})");
        const QString far_end = dir_.filePath("far-end.csv");
        write(far_end, "id,lower,upper,size\na,0,18446744073709551615,8\n");
        const QString deep = dir_.filePath("deep-config.json");
        write(deep, R"({"model_type":"gpt2","n_embd":64,"n_layer":1000000,"n_head":4,)"
                    R"("vocab_size":100,"n_positions":64})");
        for (const QString& path : {huge_number, far_end, deep}) {
            expect(tmmu({"plan", path}), FailureCode::InvalidIrShapes);
            expect(tmmu({"validate", path}), FailureCode::InvalidIrShapes);
        }
    }
    void arenaTooSmall() {
        expect(tmmu({"plan", resource("resources/models/examples/residual_blocks.json"), "--arena",
                     "activations=1KiB"}),
               FailureCode::ArenaTooSmall);
    }
    // Seed 000's II.J: a plan over the memory budget is a quota failure, and nothing of it is
    // written. Residual blocks in training plan to 11.00 MiB over a lower bound of 10.50 MiB.
    void memoryBudgetExceeded() {
        const QString model = resource("resources/models/examples/residual_blocks.json");
        const QString ckpt = dir_.filePath("over-budget.ckpt");
        const QString json = dir_.filePath("over-budget.json");
        const test::ProgramRun over =
            tmmu({"plan", model, "--memory-budget", "8MiB", "--checkpoint", ckpt, "--json", json});
        expect(over, FailureCode::MemoryBudgetExceeded);
        QVERIFY2(over.err.contains("over the budget of 8.00 MiB (8388608 bytes)") &&
                     over.err.contains(
                         "no plan of these arenas fits: their lower bounds alone add up to"),
                 qPrintable(over.err));
        QVERIFY(!QFile::exists(ckpt) && !QFile::exists(json));
        const test::ProgramRun between = tmmu({"plan", model, "--memory-budget", "10.75MiB"});
        expect(between, FailureCode::MemoryBudgetExceeded);
        QVERIFY2(between.err.contains(
                     "their lower bounds add up to 10.50 MiB, so a tighter plan could fit"),
                 qPrintable(between.err));
        QCOMPARE(tmmu({"plan", model, "--memory-budget", "12MiB", "--checkpoint", ckpt}).code, 0);
        QVERIFY(QFile::exists(ckpt));
        // The budget covers what the arenas commit: activations in 4 MiB pages hold their
        // 5.00 MiB peak in 8.00 MiB, and the lower bound rounds up alike.
        const test::ProgramRun paged =
            tmmu({"plan", model, "--memory-budget", "12MiB", "--arena", "activations=::4MiB"});
        expect(paged, FailureCode::MemoryBudgetExceeded);
        QVERIFY2(paged.err.contains("the plan needs 14.00 MiB (14683136 bytes: parameters "
                                    "6.00 MiB, activations 8.00 MiB (a peak of 5.00 MiB in "
                                    "4.00 MiB pages))") &&
                     paged.err.contains("their lower bounds alone add up to 14.00 MiB"),
                 qPrintable(paged.err));
        // Padding no plan avoids counts: three 40 B buffers at alignment 64 need 168 B.
        const QString csv = dir_.filePath("padded.csv");
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("id,lower,upper,size\na,0,9,40\nb,0,9,40\nc,0,9,40\n");
        f.close();
        const test::ProgramRun padded =
            tmmu({"plan", csv, "--align", "64", "--memory-budget", "150", "--strategy", "optimal"});
        expect(padded, FailureCode::MemoryBudgetExceeded);
        QVERIFY2(padded.err.contains("no plan of these arenas fits: their lower bounds with the "
                                     "padding no plan avoids alone add up to 168 B"),
                 qPrintable(padded.err));
        expect(tmmu({"plan", model, "--memory-budget", "0"}), FailureCode::InvalidArgument);
    }
    void alignmentViolation() {
        expect(tmmu({"plan", "--align", "48"}), FailureCode::AlignmentViolation);
    }
    // Seed 000's II.H: a binding outside the envelope, and an iteration outgrowing the plan of
    // a model whose replan policy is ABORT; nothing is written.
    void shapeEnvelopeViolation() {
        const QString model = resource("resources/models/examples/dynamic_seq.json");
        expect(tmmu({"plan", model, "--dim", "seq=2049"}), FailureCode::ShapeEnvelopeViolation);
        QFile f(model);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString aborting = dir_.filePath("aborting.json");
        write(aborting, f.readAll().replace("REPLAN_AT_SAFEPOINT", "ABORT"));
        const QString ckpt = dir_.filePath("aborted.ckpt");
        const test::ProgramRun r = tmmu({"plan", aborting, "--dim", "seq=16", "--iteration",
                                         "seq=8", "--iteration", "seq=17", "--checkpoint", ckpt});
        expect(r, FailureCode::ShapeEnvelopeViolation);
        QVERIFY2(r.err.contains("at --iteration 1: seq=17 outgrows the plan made at batch=1, "
                                "seq=16, and the model's replan_policy is ABORT"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(ckpt));
    }
    void ioError() { expect(tmmu({"plan", dir_.filePath("absent.json")}), FailureCode::IoError); }
    void invalidArgument() {
        expect(tmmu({"plan", "--strategy", "magic"}), FailureCode::InvalidArgument);
    }
    void corruptCheckpoint() {
        const QString path = dir_.filePath("plan.ckpt");
        QCOMPARE(tmmu({"plan", resource("resources/models/examples/linear_chain.json"),
                       "--checkpoint", path})
                     .code,
                 0);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QByteArray bytes = f.readAll();
        bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
        f.seek(0);
        f.write(bytes);
        f.close();
        expect(tmmu({"validate", path}), FailureCode::CorruptCheckpoint);
    }
    // Runs tmmu with `args`, sends SIGINT once it has worked `ms` milliseconds, and expects the
    // command to stop at its next poll with CANCELLED.
    void interrupt(const QStringList& args, int ms) {
        QProcess p;
        p.start(TMMU_CLI, args);
        QVERIFY(p.waitForStarted(10000));
        QTest::qWait(ms);
        QCOMPARE(p.state(), QProcess::Running);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY2(p.waitForFinished(30000), qPrintable("SIGINT did not stop " + args.join(' ')));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        expect({p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())},
               FailureCode::Cancelled);
    }
    // Ctrl+C: the search stops at its next poll and the command ends with CANCELLED.
    void cancelled() {
        const QString csv = dir_.filePath("long.csv");
        write_long_problem(csv);
        // 1.5 s: loading and the first heuristics are done; the search runs.
        interrupt({"plan", csv, "--strategy", "optimal", "--budget", "2000000000"}, 1500);
        // A lazy program stops before its next statement (it ran to its end, minutes later).
        const QString program = dir_.filePath("long-lazy.json");
        QFile f(program);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "tmmu-lazy-program", "version": 1, "program": [
            {"let": "x", "tensor": {"shape": [64], "ones": true}},
            {"repeat": 1000000, "body": [{"let": "x", "op": "add", "args": ["x", 1]},
                                         {"mark_step": true}]}]})");
        f.close();
        interrupt({"lazy", "run", program}, 1000);
    }

    // The runtime's load-time contract: a compiled plan, broken three ways, read by validate.
    void runtimePlanContract() {
        const QString good = dir_.filePath("exec-plan.json");
        QCOMPARE(tmmu({"compile", "--json", good}).code, 0);
        QFile f(good);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json plan = nlohmann::json::parse(f.readAll().toStdString());
        QCOMPARE(tmmu({"validate", good}).code, 0);
        auto broken = [&](const char* name, auto change, FailureCode code) {
            nlohmann::json p = plan;
            change(p);
            const QString path = dir_.filePath(name);
            write(path, QByteArray::fromStdString(p.dump()));
            expect(tmmu({"validate", path}), code);
        };
        broken(
            "rank5.json",
            [](nlohmann::json& p) {
                p["registers"][1]["shape"] = {1, 1, 1, 1, 768};
                p["registers"][1]["strides"] = {768, 768, 768, 768, 1};
            },
            FailureCode::UnsupportedTensorRank);
        broken(
            "abi.json", [](nlohmann::json& p) { p["params"][0]["version"] = 7; },
            FailureCode::InvalidParamBlockAbi);
        broken(
            "dangling.json", [](nlohmann::json& p) { p["instructions"][3]["inputs"][0] = 70; },
            FailureCode::InvalidExecutionPlan);
    }

    // A device's refusal: attention over a million cached positions needs more shared memory
    // per block than any GPU gives. Runs where CUDA can run (tmmu devices says so).
    void deviceError() {
        const auto devices =
            nlohmann::json::parse(tmmu({"devices", "--json", "-"}).out.toStdString());
        // The first GPU backend that runs here (Vulkan on lavapipe in CI), with what its
        // device cannot take: Vulkan's attention holds at most 256 values per head on chip,
        // CUDA's a million positions of scores per block.
        std::string gpu, why_none;
        for (int b : {1, 2}) {
            const auto& s = devices["backends"][b];
            if (s["runnable"].get<bool>()) {
                if (gpu.empty()) gpu = s["name"].get<std::string>();
                continue;
            }
            why_none += s["name"].get<std::string>() + ": " +
                        s["not_runnable_reason"].get<std::string>() + "; ";
        }
        gpu_runs_ = !gpu.empty();
        if (!gpu_runs_) QSKIP(("no GPU backend can run here: " + why_none).c_str());
        const QString config = dir_.filePath("device-refuses.json");
        QStringList args = {"run",      config, "--backend", QString::fromStdString(gpu),
                            "--prompt", "4",    "--decode",  "2"};
        if (gpu == "vulkan") {
            write(config, R"({"model_type":"gpt2","n_embd":512,"n_layer":1,"n_head":1,
                "vocab_size":97,"n_positions":16})");
        } else {
            write(config, R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,
                "num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":96,
                "vocab_size":101,"max_position_embeddings":2000000})");
            args << "--max-seq"
                 << "1000000";
        }
        expect(tmmu(args), FailureCode::DeviceError);
    }

    // A lazy program that changes a tensor matmul saved for backward before backward runs: the
    // engine's named error (seed 004, 16.3), raised when mark_step forces backward.
    void lazyEngineError() {
        const QString path = dir_.filePath("saved-mutation.json");
        write(path, R"({"format": "tmmu-lazy-program", "version": 1, "program": [
            {"let": "x", "tensor": {"values": [[1, 2], [3, 4]]}},
            {"let": "w", "param": {"shape": [2, 2], "fill": 0.5}},
            {"let": "h", "op": "matmul", "args": ["x", "w"]},
            {"let": "loss", "op": "sum", "args": ["h"]},
            {"op": "mul_", "args": ["x", 2]},
            {"backward": "loss"},
            {"mark_step": true}]})");
        const test::ProgramRun r = tmmu({"lazy", "run", path});
        expect(r, FailureCode::LazyEngineError);
        QVERIFY2(r.err.contains("SavedTensorModifiedError"), qPrintable(r.err));
    }

    // An ONNX model whose window length is a value known only at run time: its dims stay
    // unbound until --dim names them.
    void unboundDimension() {
        const QString model = "/usr/share/libonnx-testdata/data/node/"
                              "test_blackmanwindow_expanded/model.onnx";
        if (!TMMU_ONNX_BUILT) QSKIP("this build has no ONNX loader (libonnx-dev not found)");
        if (!QFile::exists(model)) QSKIP("libonnx-testdata is not installed");
        onnx_corpus_ = true;
        const test::ProgramRun r = tmmu({"plan", model, "--mode", "inference"});
        expect(r, FailureCode::UnboundDimension);
        QVERIFY2(r.err.contains("'unk__0'"), qPrintable(r.err));
        QCOMPARE(tmmu({"plan", model, "--mode", "inference", "--dim", "unk__0=8"}).code, 0);
    }

    void cleanupTestCase() {
        // Raised only by a backend whose adapter table has a gap or whose adapters take fewer
        // slots per step than a plan runs. The CPU's has neither (its table covers every opcode,
        // a static_assert in cpu_adapters.cpp; it takes any batch) and so has CUDA's, so no
        // command can reach them yet: engine.test_runtime_plan raises both through
        // check_backend_supports, and the first backend with a cap brings their cases here.
        // DEVICE_ERROR needs a GPU backend that runs: without one, deviceError() skips saying
        // why.
        std::set<FailureCode> no_backend_raises_yet{FailureCode::UnsupportedOpcode,
                                                    FailureCode::BatchUnsupported};
        if (!gpu_runs_) no_backend_raises_yet.insert(FailureCode::DeviceError);
        if (!onnx_corpus_) no_backend_raises_yet.insert(FailureCode::UnboundDimension);
        for (FailureCode code : kAllFailureCodes) {
            if (no_backend_raises_yet.count(code)) continue;
            const QString name = QString::fromUtf8(failure_code_name(code).data());
            QVERIFY2(covered_.count(name), qPrintable(name + " has no end-to-end case"));
        }
    }
};

QTEST_GUILESS_MAIN(TestExitStatus)
#include "test_exit_status.moc"
