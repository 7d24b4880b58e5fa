// Golden traces (seed VII.C / E0): the reference `slots` strategy must reproduce the checked-in
// traces byte for byte. Regenerate only on purpose, saying why in the commit message:
//   TMMU_REGENERATE_GOLDEN=1 build/tests/engine_test_golden
#include "encoding/sha256.h"
#include "io/trace.h"
#include "plan/plan_summary.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <cstdlib>
#include <fstream>
#include <string_view>
#include <utility>

using namespace tmmu;

namespace {

// The trace without what the replay token decides: its prefix in the header and the plan hash.
// (std::regex trips GCC 12's -Wmaybe-uninitialized in the sanitized build.)
std::string without_token(std::string trace) {
    for (const auto& [key, length] :
         {std::pair<std::string_view, size_t>{"\"replay_token_prefix\":\"", 8},
          {"\"plan_hash\":\"", 64}})
        for (size_t at = trace.find(key); at != std::string::npos; at = trace.find(key, at + 1))
            trace.replace(at + key.size(), length, std::string(length, '-'));
    return trace;
}

} // namespace

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
        // Seed VII.B's Llama-scale vector: TinyLlama's shape (22 layers, grouped-query attention).
        QTest::newRow("llama inference") << "tinyllama-1.1b.json"
                                         << "inference"
                                         << "tinyllama_1.1b_b1_s128.inference";
    }

    // Seed VIII.C's matrix: every preset in every mode under ten replay tokens gives one slot map
    // and one set of logical addresses (the token enters the plan hash only), with every tensor
    // aligned, and the transformers reuse most of their slots in inference.
    void everyReplayTokenGivesOneSlotMap_data() {
        QTest::addColumn<QString>("model");
        for (const char* model :
             {"examples/linear_chain.json", "examples/residual_blocks.json",
              "examples/views_and_inplace.json", "gpt2-small.json", "tinyllama-1.1b.json"})
            QTest::newRow(model) << model;
    }
    void everyReplayTokenGivesOneSlotMap() {
        QFETCH(QString, model);
        const bool transformer = !model.startsWith("examples/");
        for (Mode mode : {Mode::Inference, Mode::Forward, Mode::Training}) {
            const LoadedModel m = load_model(
                TMMU_SOURCE_DIR "/resources/models/" + model.toStdString(), {mode, 1, 128});
            std::string first;
            for (uint32_t seed = 0; seed < test::property_cases(8) + 2; ++seed) {
                PlanOptions options;
                options.strategy = "slots";
                options.replay_token = sha256("replay token " + std::to_string(seed));
                const Plan plan = plan_model(m, mode, options, {});
                for (const PlannedTensor& t : plan.tensors)
                    QVERIFY2(t.offset % t.alignment == 0, t.id.c_str());
                const std::string trace = without_token(trace_jsonl(plan));
                if (seed == 0) first = trace;
                QVERIFY2(trace == first, qPrintable(QString("%1 %2 under token %3")
                                                        .arg(model)
                                                        .arg(mode_name(mode).data())
                                                        .arg(seed)));
                // Forward and training hold activations for the backward pass: little reuse.
                if (transformer && mode == Mode::Inference && seed == 0) {
                    const PlanTotals totals = plan_totals(plan);
                    const double reuse =
                        1.0 - double(totals.slot_count) / double(plan.tensors.size());
                    QVERIFY2(reuse > 0.5, qPrintable(QString("%1 %2: reuse %3")
                                                         .arg(model)
                                                         .arg(mode_name(mode).data())
                                                         .arg(reuse)));
                }
            }
        }
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
