// Golden traces (seed VII.C / E0): the reference `slots` strategy must reproduce the checked-in
// traces byte for byte. Regenerate only on purpose, saying why in the commit message:
//   TMMU_REGENERATE_GOLDEN=1 build/tests/engine_test_golden
#include "io/trace.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <cstdlib>
#include <fstream>

using namespace tmmu;

class TestGolden : public QObject {
    Q_OBJECT
  private slots:
    void traceMatchesGolden_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("golden");
        QTest::newRow("linear chain") << "examples/linear_chain.json"
                                      << "inference"
                                      << "linear_chain.inference";
        QTest::newRow("residual inference") << "examples/residual_blocks.json"
                                            << "inference"
                                            << "residual_blocks.inference";
        QTest::newRow("residual training") << "examples/residual_blocks.json"
                                           << "training"
                                           << "residual_blocks.training";
        QTest::newRow("views and in-place") << "examples/views_and_inplace.json"
                                            << "training"
                                            << "views_and_inplace.training";
        for (const char* mode : {"inference", "forward", "training"})
            QTest::newRow(mode) << "gpt2-small.json" << mode
                                << QString("gpt2_small_b1_s128.%1").arg(mode);
    }
    void traceMatchesGolden() {
        QFETCH(QString, model);
        QFETCH(QString, mode);
        QFETCH(QString, golden);
        ModelRequest request{*parse_mode(mode.toStdString()), 1, 128};
        LoadedModel m =
            load_model(TMMU_SOURCE_DIR "/resources/models/" + model.toStdString(), request);
        PlanOptions options;
        options.strategy = "slots";
        Plan plan = plan_model(m, request.mode, options, {});
        plan.source = model.toStdString(); // the trace must not depend on the checkout path
        std::string trace = trace_jsonl(plan);
        std::string path = TMMU_GOLDEN_DIR "/" + golden.toStdString() + ".jsonl";
        if (std::getenv("TMMU_REGENERATE_GOLDEN")) {
            std::ofstream(path, std::ios::binary) << trace;
            // Writing the expected value checks nothing: the run must not read as a pass.
            QSKIP(qPrintable(
                QString("regenerated %1; nothing was compared").arg(QString::fromStdString(path))));
        }
        auto expected = test::read_file(path);
        QVERIFY2(expected.has_value(), ("missing golden " + path).c_str());
        if (*expected != trace) {
            size_t at = 0;
            while (at < trace.size() && at < expected->size() && trace[at] == (*expected)[at])
                ++at;
            size_t line = std::count(trace.begin(), trace.begin() + long(at), '\n') + 1;
            QFAIL(qPrintable(
                QString("%1 differs from the golden trace at line %2").arg(golden).arg(line)));
        }
    }
    void linearChainIsOneSlot() {
        LoadedModel m =
            load_model(TMMU_SOURCE_DIR "/resources/models/examples/linear_chain.json", {});
        PlanOptions options;
        options.strategy = "slots";
        Plan plan = plan_model(m, Mode::Inference, options, {});
        QCOMPARE(plan.arenas.size(), size_t(1));
        QCOMPARE(plan.arenas[0].metrics.slot_count, 1u);
        QCOMPARE(plan.arenas[0].metrics.peak_bytes, plan.arenas[0].metrics.lower_bound);
    }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "test_golden.moc"
