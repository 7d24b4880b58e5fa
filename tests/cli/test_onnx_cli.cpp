// `tmmu plan` on ONNX models (issue 15): the plan's notes say what aliased and why, and
// --no-aliasing turns aliasing off for ONNX models while other models refuse the flag.
#include "core/failure.h"
#include "onnx_models.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;

class TestOnnxCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    const QString model_ = "/usr/share/libonnx-testdata/data/node/"
                           "test_layer_normalization_4d_axis1_expanded/model.onnx";

    test::ProgramRun tmmu(const QStringList& args) { return test::run_program(TMMU_CLI, args); }

  private slots:
    void notesSayWhatAliasedAndTheSwitchTurnsItOff() {
        if (!QFile::exists(model_)) QSKIP("libonnx-testdata is not installed");
        const test::ProgramRun aliased = tmmu({"plan", model_, "--mode", "inference"});
        QCOMPARE(aliased.code, 0);
        QVERIFY2(aliased.out.contains("note: 'Y' is a view of "), qPrintable(aliased.out));
        QVERIFY(aliased.out.contains("may be written in place of"));
        const test::ProgramRun plain =
            tmmu({"plan", model_, "--mode", "inference", "--no-aliasing"});
        QCOMPARE(plain.code, 0);
        QVERIFY2(plain.out.contains("note: aliasing is off"), qPrintable(plain.out));
        QVERIFY(!plain.out.contains("is a view of"));
        QVERIFY(!plain.out.contains("in place of"));
    }

    // --iteration varies the symbolic dimensions --dim binds by name; without --dim there are
    // none to vary, and the refusal says how to bind them.
    void symbolicDimensionsRunOverIterations() {
        const QString model = dir_.filePath("relu.onnx");
        test::write_symbolic_relu(model.toStdString());
        const test::ProgramRun run =
            tmmu({"plan", model, "--mode", "inference", "--dim", "N=2", "--iteration", "N=1",
                  "--iteration", "N=8", "--json", "-"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject j = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonArray its = j["iterations"].toArray();
        QCOMPARE(its.size(), 2);
        QVERIFY(!its[0]["replanned"].toBool());
        QVERIFY(its[1]["replanned"].toBool());
        QCOMPARE(its[1]["plan_dims"].toObject(), QJsonObject({{"N", 8}}));
        // Recorded, the bindings line says which plan they were asked for.
        const QString db = dir_.filePath("iterations.db");
        const test::ProgramRun recorded =
            tmmu({"plan", model, "--mode", "inference", "--dim", "N=2", "--iteration", "N=8",
                  "--record", "--quiet", "--sessions", db});
        QVERIFY2(recorded.code == 0, qPrintable(recorded.err));
        const test::ProgramRun show = tmmu({"session", "show", "1", "--sessions", db});
        QVERIFY2(show.out.contains("onnx       first plan at dims N=2; aliasing on\n"),
                 qPrintable(show.out));
        QVERIFY2(show.out.contains("dims       N=8 of [1, 8]"), qPrintable(show.out));
        const test::ProgramRun unbound =
            tmmu({"plan", model, "--input-shape", "x=2x64", "--iteration", "N=8"});
        QCOMPARE(unbound.code, failure_exit_status(FailureCode::InvalidArgument));
        QVERIFY2(unbound.err.contains("when --dim binds them by name"), qPrintable(unbound.err));
        // A model without symbolic dimensions is not told to bind some.
        const QString fixed = dir_.filePath("fixed-relu.onnx");
        test::OnnxModelBuilder b(13, "fixed-relu");
        b.input("x", {"2", "64"});
        b.node("Relu", {"x"}, {"y"});
        b.output("y", {"2", "64"});
        b.save(fixed.toStdString());
        const test::ProgramRun none = tmmu({"plan", fixed, "--iteration", "N=8"});
        QCOMPARE(none.code, failure_exit_status(FailureCode::InvalidArgument));
        QVERIFY2(none.err.contains("this one declares none: its shapes are fixed"),
                 qPrintable(none.err));
        QVERIFY(!none.err.contains("--dim"));
        const test::ProgramRun batch = tmmu({"plan", fixed, "--batch", "4"});
        QCOMPARE(batch.code, failure_exit_status(FailureCode::InvalidArgument));
        QVERIFY2(batch.err.contains("an ONNX model without symbolic dimensions, whose shapes are "
                                    "fixed"),
                 qPrintable(batch.err));
    }

    // A replan plans the graph alone; the plan in force after it still carries the loader's
    // notes (here: the second Relu written in place of the first), as the first plan did.
    void loaderNotesOutliveAReplan() {
        const QString model = dir_.filePath("relu-relu.onnx");
        test::OnnxModelBuilder b(13, "relu-relu");
        b.input("x", {"N", "64"});
        b.node("Relu", {"x"}, {"h"});
        b.node("Relu", {"h"}, {"y"});
        b.output("y", {"N", "64"});
        b.save(model.toStdString());
        const QStringList args = {"plan", model, "--mode", "inference", "--dim", "N=2"};
        const test::ProgramRun first = tmmu(args);
        QVERIFY2(first.code == 0, qPrintable(first.err));
        QVERIFY2(first.out.contains("note: 'y' may be written in place of 'h'"),
                 qPrintable(first.out));
        const test::ProgramRun run = tmmu(args + QStringList{"--iteration", "N=8"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains("replanned"), qPrintable(run.out));
        QVERIFY2(run.out.contains("note: 'y' may be written in place of 'h'"), qPrintable(run.out));
        const test::ProgramRun json = tmmu(args + QStringList{"--iteration", "N=8", "--json", "-"});
        QVERIFY2(json.code == 0, qPrintable(json.err));
        const QJsonArray notes =
            QJsonDocument::fromJson(json.out.toUtf8()).object()["notes"].toArray();
        QVERIFY(!notes.isEmpty());
        QVERIFY2(notes.first().toString().startsWith("'y' may be written in place of 'h'"),
                 qPrintable(notes.first().toString()));
    }

    void otherModelsRefuseTheSwitch() {
        const test::ProgramRun r =
            tmmu({"plan", QString(TMMU_SOURCE_DIR) + "/resources/models/examples/linear_chain.json",
                  "--no-aliasing"});
        QCOMPARE(r.code, failure_exit_status(FailureCode::InvalidArgument));
        QVERIFY2(r.err.contains("--no-aliasing"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestOnnxCli)
#include "test_onnx_cli.moc"
