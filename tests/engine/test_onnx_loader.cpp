// ONNX models as model IR (issue 15, first slice): the loader on Debian's libonnx-testdata corpus
// (every model plans with a valid plan or fails with a named error; counts printed), dimension
// bindings, unknown inputs, and mutated files that must never crash the loader.
#include "io/file_io.h"
#include "onnx/onnx_loader.h"
#include "plan/planner.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace tmmu;
namespace fs = std::filesystem;

namespace {

const char* kCorpus = "/usr/share/libonnx-testdata/data";

std::vector<std::string> corpus_files() {
    std::vector<std::string> files;
    if (!fs::is_directory(kCorpus)) return files;
    for (const auto& e : fs::recursive_directory_iterator(kCorpus))
        if (e.path().extension() == ".onnx") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

std::string node_model(const char* name) {
    return std::string(kCorpus) + "/node/" + name + "/model.onnx";
}

} // namespace

class TestOnnxLoader : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        if (corpus_files().empty())
            QSKIP("libonnx-testdata is not installed (/usr/share/libonnx-testdata): the README's "
                  "test command installs it");
    }

    void everyCorpusModelPlansOrFailsWithANamedError() {
        std::map<std::string, int> outcomes;
        const std::vector<std::string> files = corpus_files();
        for (const std::string& f : files) {
            try {
                const LoadedModel m = load_model(f, {});
                QCOMPARE(m.kind, ModelKind::Onnx);
                (void)plan_model(m, Mode::Inference, PlanOptions{}, Progress{}); // validated
                ++outcomes["planned"];
            } catch (const Failure& x) {
                QVERIFY2(!x.where().empty(), x.what());
                QVERIFY2(x.code() == FailureCode::UnboundDimension ||
                             x.code() == FailureCode::InvalidIrShapes,
                         x.what());
                ++outcomes[std::string(failure_code_name(x.code()))];
            } catch (const std::exception& x) {
                QFAIL(qPrintable(QString::fromStdString(f + ": not a named failure: " + x.what())));
            }
        }
        std::string counts;
        for (const auto& [what, n] : outcomes)
            counts += " " + what + " " + std::to_string(n);
        qInfo("%zu corpus models:%s", files.size(), counts.c_str());
        QVERIFY(outcomes["planned"] >= 900); // the corpus is small ops; most must plan
    }

    void graphCarriesOnnxNamesShapesAndRoles() {
        const LoadedModel m = load_model(node_model("test_conv_with_strides_padding"), {});
        const Graph& g = *m.graph;
        QCOMPARE(g.nodes.size(), size_t(1));
        QCOMPARE(g.nodes[0].opcode, std::string("Conv"));
        const TensorIndex y = g.find_tensor("y");
        QVERIFY(y != kNone);
        QCOMPARE(g.tensors[y].shape, (std::vector<int64_t>{1, 1, 4, 3}));
        QCOMPARE(g.tensors[y].role, Role::Output);
        QCOMPARE(g.tensors[g.find_tensor("x")].role, Role::Input);
        QCOMPARE(g.tensors[y].bytes, uint64_t(1 * 1 * 4 * 3 * 4));
    }

    void dimensionsAreBoundByNameOrWholeInput() {
        const std::string window = node_model("test_blackmanwindow_expanded");
        const auto unbound = test::capture_failure([&] { load_model(window, {}); });
        QVERIFY(unbound.has_value());
        QCOMPARE(unbound->code(), FailureCode::UnboundDimension);
        QVERIFY2(unbound->message().find("'unk__0' (used by") != std::string::npos,
                 unbound->what());
        ModelRequest bound;
        bound.dims["unk__0"] = 10;
        const LoadedModel m = load_model(window, bound);
        bool ten = false;
        for (const auto& t : m.graph->tensors)
            ten |= t.shape == std::vector<int64_t>{10};
        QVERIFY(ten);

        ModelRequest shaped;
        shaped.input_shapes["x"] = {2, 6};
        const LoadedModel relu = load_model(node_model("test_relu"), shaped);
        QCOMPARE(relu.graph->tensors[relu.graph->find_tensor("y")].shape,
                 (std::vector<int64_t>{2, 6}));
        ModelRequest wrong;
        wrong.input_shapes["nope"] = {1};
        const auto f = test::capture_failure([&] { load_model(node_model("test_relu"), wrong); });
        QVERIFY(f && f->code() == FailureCode::InvalidArgument);
    }

    void loopAndScanBodiesSizeTheirNodesWorkspace() {
        const LoadedModel scan = load_model(node_model("test_scan9_sum"), {});
        const TensorIndex ws = scan.graph->find_tensor("Scan#0/workspace");
        QVERIFY(ws != kNone);
        QCOMPARE(scan.graph->tensors[ws].role, Role::Workspace);
        QVERIFY(scan.graph->tensors[ws].bytes >= 2 * 4); // one iteration's float[2] sum
        // test_loop11 slices by the iteration count: its body cannot be sized, the model still
        // plans and the note names the value.
        const LoadedModel loop = load_model(node_model("test_loop11"), {});
        QCOMPARE(loop.graph->find_tensor("Loop#0/workspace"), kNone);
        bool noted = false;
        for (const std::string& n : loop.annotations.notes)
            noted |= n.find("'slice_out' in body 'loop_body'") != std::string::npos;
        QVERIFY(noted);
    }

    void mutatedModelsNeverCrashTheLoader() {
        const std::string scratch = (fs::temp_directory_path() / "tmmu-onnx-mutant.onnx").string();
        std::mt19937_64 rng(7);
        int accepted = 0, refused = 0;
        for (const char* name : {"test_conv_with_strides_padding", "test_gemm_default_no_bias",
                                 "test_blackmanwindow_expanded", "test_scan9_sum", "test_if"}) {
            const std::string original = read_text_file(node_model(name));
            QVERIFY(!original.empty());
            for (int i = 0; i < 600; ++i) {
                std::string bytes = original;
                const size_t at = rng() % bytes.size();
                if (i % 3 == 0)
                    bytes.resize(at); // truncated
                else
                    bytes[at] = char(rng()); // a byte flipped
                std::ofstream(scratch, std::ios::binary | std::ios::trunc) << bytes;
                try {
                    (void)load_model(scratch, {});
                    ++accepted;
                } catch (const Failure& x) {
                    QVERIFY2(!x.where().empty(), x.what());
                    ++refused;
                }
            }
        }
        qInfo("3000 mutated models: %d loaded, %d refused with a named error", accepted, refused);
        fs::remove(scratch);
    }
};

QTEST_GUILESS_MAIN(TestOnnxLoader)
#include "test_onnx_loader.moc"
