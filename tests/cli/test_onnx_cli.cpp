// `tmmu plan` on ONNX models (issue 15): the plan's notes say what aliased and why, and
// --no-aliasing turns aliasing off for ONNX models while other models refuse the flag.
#include "core/failure.h"
#include "test_support.h"

#include <QFile>
#include <QObject>
#include <QTest>

using namespace tmmu;

class TestOnnxCli : public QObject {
    Q_OBJECT
    const QString model_ = "/usr/share/libonnx-testdata/data/node/"
                           "test_layer_normalization_4d_axis1_expanded/model.onnx";

    test::ProgramRun tmmu(const QStringList& args) { return test::run_program(TMMU_CLI, args); }

  private slots:
    void initTestCase() {
        if (!QFile::exists(model_)) QSKIP("libonnx-testdata is not installed");
    }

    void notesSayWhatAliasedAndTheSwitchTurnsItOff() {
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
