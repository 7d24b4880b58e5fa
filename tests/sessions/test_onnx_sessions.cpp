// Sessions of ONNX models (issue 15, schema 6): a recorded session keeps the model file's
// SHA-256 and its bindings (dims, input shapes, aliasing), sealed with the row; a replay says
// whether the file is unchanged, changed or missing, and replays the stored graph either way;
// `tmmu session show` and `replay` print both. The model is a copy of a libonnx-testdata file in
// a temporary directory, so the test can change and remove it. Built only with the ONNX loader.
#include "replay.h"
#include "session_source.h"
#include "session_store.h"
#include "test_support.h"

#include "source/model_source.h"

#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::sessions;
namespace fs = std::filesystem;

namespace {

// Its window length is data-dependent: shape inference leaves the symbolic dim unk__0.
const char* kCorpusModel =
    "/usr/share/libonnx-testdata/data/node/test_blackmanwindow_expanded/model.onnx";

ModelRequest bound_request() {
    ModelRequest r;
    r.mode = Mode::Inference;
    r.dims = {{"unk__0", 16}};
    r.aliasing = false;
    return r;
}

NewSession onnx_session(const std::string& path) {
    const ModelRequest req = bound_request();
    LoadedModel m = load_model(path, req);
    PlanOptions o;
    Plan p = plan_model(m, req.mode, o, Progress{});
    return {input_from_model(m, req, o), p, "onnx", "", {}};
}

bool is_hex_sha256(const std::string& s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

tmmu::test::ProgramRun run_tmmu(const QStringList& args) {
    return tmmu::test::run_program(TMMU_CLI, args, 60000);
}

} // namespace

class TestOnnxSessions : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_; // the copy this test changes and removes
    std::string db_;

  private slots:
    void initTestCase() {
        if (!fs::exists(kCorpusModel))
            QSKIP("libonnx-testdata is not installed (/usr/share/libonnx-testdata): the README's "
                  "test command installs it");
    }

    void init() {
        model_ = dir_.filePath("model.onnx").toStdString();
        db_ = dir_.filePath(QString("sessions-%1.db").arg(QTest::currentTestFunction()))
                  .toStdString();
        fs::copy_file(kCorpusModel, model_, fs::copy_options::overwrite_existing);
    }

    void recordsTheFileHashAndBindings() {
        SessionStore store(db_);
        const int64_t id = store.record(onnx_session(model_));
        const Session s = store.load(id);
        QVERIFY2(!s.altered, s.altered_reason.c_str());
        QVERIFY(is_hex_sha256(s.input.source_sha256));
        QCOMPARE(s.input.source_sha256, file_sha256(kCorpusModel)); // the copy's bytes
        QVERIFY(s.input.onnx);
        QCOMPARE(s.input.request.dims, bound_request().dims);
        QVERIFY(s.input.request.input_shapes.empty());
        QVERIFY(!s.input.request.aliasing);
        QCOMPARE(bindings_text(s.input), std::string("dims unk__0=16; aliasing off"));
    }

    void replaySaysWhetherTheFileChanged() {
        SessionStore store(db_);
        const int64_t id = store.record(onnx_session(model_));
        ReplayResult r = replay_session(store.load(id));
        QVERIFY(r.comparison.identical);
        QCOMPARE(r.source.state, SourceCheck::State::Unchanged);
        QVERIFY2(r.source.line.find("unchanged") != std::string::npos, r.source.line.c_str());

        // A changed file: said, not a failure; the stored graph still replays to the same plan.
        std::ofstream(model_, std::ios::binary | std::ios::app) << '\0';
        r = replay_session(store.load(id));
        QVERIFY(r.comparison.identical);
        QCOMPARE(r.source.state, SourceCheck::State::Changed);
        QVERIFY2(r.source.line.find("CHANGED since recording") != std::string::npos &&
                     r.source.line.find(model_) != std::string::npos,
                 r.source.line.c_str());

        fs::remove(model_);
        r = replay_session(store.load(id));
        QVERIFY(r.comparison.identical);
        QCOMPARE(r.source.state, SourceCheck::State::Missing);
        QVERIFY2(r.source.line.find("MISSING") != std::string::npos, r.source.line.c_str());
    }

    // The new fields are sealed: blanking the hash or editing the bindings behind tmmu's back
    // shows as altered.
    void hashAndBindingsAreSealed() {
        int round = 0;
        for (const char* change :
             {"UPDATE sessions SET source_sha256 = ''",
              "UPDATE sessions SET bindings_json = replace(bindings_json, '16', '17')"}) {
            SessionStore store(db_ + std::to_string(++round));
            const int64_t id = store.record(onnx_session(model_));
            QVERIFY(!store.load(id).altered);
            QCOMPARE(sqlite3_exec(store.handle(), change, nullptr, nullptr, nullptr), SQLITE_OK);
            const Session s = store.load(id);
            QVERIFY2(s.altered, change);
            QVERIFY2(s.altered_reason.find("seal") != std::string::npos, s.altered_reason.c_str());
        }
    }

    // Other models keep no bindings, even when the request carried some.
    void otherModelsStoreNoBindings() {
        ModelRequest req = bound_request();
        const std::string ir = TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json";
        LoadedModel m = load_model(ir, req);
        const SessionInput in = input_from_model(m, req, PlanOptions{});
        QVERIFY(!in.onnx);
        QVERIFY(in.request.dims.empty());
        QVERIFY(in.request.aliasing);
        QCOMPARE(bindings_json(in), std::string());
        QCOMPARE(in.source_sha256, file_sha256(ir));
        SessionInput none;
        QCOMPARE(check_source(none).state, SourceCheck::State::NotRecorded);
    }

    void cliShowsAndReplaysTheSourceCheck() {
        const QString db = QString::fromStdString(db_);
        const QString model = QString::fromStdString(model_);
        auto r = run_tmmu({"plan", model, "--mode", "inference", "--dim", "unk__0=16", "--record",
                           "--quiet", "--sessions", db});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        r = run_tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("onnx       dims unk__0=16; aliasing on") &&
                     r.out.contains(QString::fromStdString("SHA-256 " + file_sha256(model_))),
                 qPrintable(r.out));
        r = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(r.code == 0 && r.out.contains("unchanged since recording"), qPrintable(r.out));
        QVERIFY(QFile::remove(model));
        r = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(r.code == 0 && r.out.contains("is MISSING") && r.out.contains("identical"),
                 qPrintable(r.out + r.err));
    }
};

QTEST_MAIN(TestOnnxSessions)
#include "test_onnx_sessions.moc"
