// Golden traces of the bundled lazy programs (issue 14, item 2): the same program gives the
// same PlanLinearOrder, EventKeys and versions on every run and every machine. Each golden file
// holds the trace hash, the run's counters and every event of its first step; regenerate only
// on purpose, saying why in the commit message:
//   TMMU_REGENERATE_GOLDEN=1 build/tests/engine_test_lazy_golden
#include "lazy/program.h"

#include <QObject>
#include <QTest>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tmmu;
using namespace tmmu::lazy;

namespace {

// One line per event up to the end of the first mark_step: position, key, kind, op, tokens
// in -> out, values in -> out, loc and base versions, buffer.
std::string first_step_text(const Trace& trace) {
    std::string out;
    for (const TraceEvent& e : trace.events) {
        out += fmt::format("{:5} {:28} {:14} {:16} t[{}]->[{}] v[{}]->[{}]", e.index, e.key,
                           event_kind_name(e.kind), e.op, fmt::join(e.tokens_in, ","),
                           fmt::join(e.tokens_out, ","), fmt::join(e.values_in, ","),
                           fmt::join(e.values_out, ","));
        if (e.loc >= 0) out += fmt::format(" L{}@{}", e.loc, e.loc_version);
        if (e.base >= 0) out += fmt::format(" B{}@{}", e.base, e.base_commit);
        if (e.storage >= 0) out += fmt::format(" s{}:{}B", e.storage, e.bytes);
        out += "\n";
        if (e.op == "mark_step.5") break;
    }
    return out;
}

std::string golden_text(const std::string& program_path) {
    const LazyProgram program = load_lazy_program(program_path);
    const ProgramRun run = run_lazy_program_to_failure(program);
    std::string text =
        fmt::format("program {}\ntrace_hash {}\nevents {} plans {} steps {}\n", program.name,
                    to_hex(run.trace_hash), run.stats.events, run.stats.plans, run.stats.steps);
    if (!run.failure.empty()) text += "failure " + run.failure + "\n";
    return text + "first step:\n" + first_step_text(run.trace);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

class TestLazyGolden : public QObject {
    Q_OBJECT
  private slots:
    void traceMatchesGolden_data() {
        QTest::addColumn<QString>("program");
        for (const char* name :
             {"mlp-training", "view-mutation", "saved-tensor-mutation", "shared-base",
              "mlp-dropout", "checkpointed-mlp", "transformer-block", "compiled-mlp",
              "compiled-transformer-block", "compiled-checkpointed-mlp"})
            QTest::newRow(name) << QString(name);
    }

    void traceMatchesGolden() {
        QFETCH(QString, program);
        const std::string path =
            std::string(TMMU_SOURCE_DIR "/resources/programs/") + program.toStdString() + ".json";
        const std::string golden =
            std::string(TMMU_GOLDEN_DIR "/lazy/") + program.toStdString() + ".trace.txt";
        const std::string text = golden_text(path);
        QCOMPARE(golden_text(path), text); // twice in one process: no hidden state
        if (std::getenv("TMMU_REGENERATE_GOLDEN")) {
            std::ofstream(golden, std::ios::binary) << text;
            QSKIP("golden regenerated");
        }
        const std::string want = read_file(golden);
        QVERIFY2(!want.empty(), golden.c_str());
        QCOMPARE(text, want);
    }
};

QTEST_GUILESS_MAIN(TestLazyGolden)
#include "test_lazy_golden.moc"
