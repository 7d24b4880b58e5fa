// End to end: tmmu plan --apply binds a plan to host memory, fills and reads back every tensor,
// and prints the committed state hash, the same in every run of the same plan and fill.
#include "test_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTest>

namespace {

using Result = tmmu::test::ProgramRun;

const QString kModel =
    QStringLiteral(TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json");

Result run_tmmu(const QStringList& args) {
    return tmmu::test::run_program(TMMU_CLI, args);
}

// The plan JSON's "applied" object; a run that fails gives an empty one, whose state hash
// compares unequal to every real one, so each test checks the hash's length first.
QJsonObject applied(const QStringList& args) {
    const Result r = run_tmmu(QStringList{"plan", kModel, "--json", "-"} + args);
    if (r.code != 0) return {};
    return QJsonDocument::fromJson(r.out.toUtf8())["applied"].toObject();
}

QString state_of(const QStringList& args) {
    const QString state = applied(args)["state_hash"].toString();
    return state.size() == 64 ? state : QStringLiteral("run failed: ") + args.join(' ');
}

} // namespace

class TestApplyCli : public QObject {
    Q_OBJECT
  private slots:
    void summaryNamesWhatWasWrittenAndTheState() {
        const Result r = run_tmmu({"plan", kModel, "--mode", "inference", "--apply", "zero"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("applied    zero fill, data policy standard: 25 tensors bound in "
                                "2 arenas (11.00 MiB of host memory)\n           23.00 MiB "
                                "written in "),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains("ms; every tensor read back as written\nstate      "),
                 qPrintable(r.out));
    }

    void stateIsDeterministicAndNamesTheFill() {
        const QJsonObject zero = applied({"--apply", "zero"});
        QCOMPARE(zero["fill"].toString(), QStringLiteral("zero"));
        QVERIFY(zero["seed"].isNull());
        QCOMPARE(zero["data_policy"].toString(), QStringLiteral("standard"));
        QCOMPARE(zero["verified"].toBool(), true);
        QVERIFY(zero["filled_bytes"].toInteger() >= zero["host_bytes"].toInteger());
        QCOMPARE(zero["state_hash"].toString().size(), 64);
        const QString zero_state = zero["state_hash"].toString();
        QCOMPARE(state_of({"--apply", "zero"}), zero_state);
        const QJsonObject seven = applied({"--apply", "debug:7"});
        QCOMPARE(seven["seed"].toInteger(), 7);
        const QString seven_state = state_of({"--apply", "debug:7"});
        QCOMPARE(seven_state.size(), 64);
        QCOMPARE(seven["state_hash"].toString(), seven_state);
        QVERIFY(seven_state != zero_state);
        const QString eight_state = state_of({"--apply", "debug:8"});
        QCOMPARE(eight_state.size(), 64);
        QVERIFY(eight_state != seven_state);
        const QString regulated = state_of({"--apply", "zero", "--data-policy", "regulated"});
        QCOMPARE(regulated.size(), 64);
        QVERIFY(regulated != zero_state);
        // Without --apply the plan JSON has no "applied".
        const Result plain = run_tmmu({"plan", kModel, "--json", "-"});
        QVERIFY(QJsonDocument::fromJson(plain.out.toUtf8())["applied"].isUndefined());
    }

    void refusals() {
        const Result confidential =
            run_tmmu({"plan", kModel, "--apply", "debug", "--data-policy", "confidential"});
        QCOMPARE(confidential.code, 2);
        QVERIFY2(confidential.err.contains("INVALID_ARGUMENT at fill: a debug fill is forbidden "
                                           "under the confidential data policy"),
                 qPrintable(confidential.err));
        const Result alone = run_tmmu({"plan", kModel, "--data-policy", "regulated"});
        QCOMPARE(alone.code, 2);
        QVERIFY2(alone.err.contains("INVALID_ARGUMENT at --data-policy: governs what --apply "
                                    "writes"),
                 qPrintable(alone.err));
        const Result huge = run_tmmu({"plan", kModel, "--apply", "debug:18446744073709551616"});
        QCOMPARE(huge.code, 2);
        QVERIFY2(huge.err.contains("the seed 18446744073709551616 is larger than 2^64 - 1"),
                 qPrintable(huge.err));
        for (const char* bad : {"ones", "debug:", "debug:x", "debug:-1"}) {
            const Result r = run_tmmu({"plan", kModel, "--apply", bad});
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains("INVALID_ARGUMENT at --apply: expects zero, debug or "
                                    "debug:SEED"),
                     qPrintable(r.err));
        }
        const Result policy =
            run_tmmu({"plan", kModel, "--apply", "zero", "--data-policy", "secret"});
        QCOMPARE(policy.code, 2);
        QVERIFY2(policy.err.contains("expects standard, confidential or regulated, got 'secret'"),
                 qPrintable(policy.err));
    }
};

QTEST_GUILESS_MAIN(TestApplyCli)
#include "test_apply_cli.moc"
