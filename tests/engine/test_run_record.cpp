// A run as data: the steps a CPU run records (phases, tokens, per-step dispatches), the
// tmmu-run JSON round trip, malformed documents refused by field, and replay comparisons that
// name the first step that differs.
#include "test_support.h"

#include "backends/cpu/cpu_generate.h"
#include "core/failure.h"
#include "runtime/run_record.h"

#include <QtTest>

#include <nlohmann/json.hpp>
#include <string>

using namespace tmmu;
using namespace tmmu::runtime;

namespace {

constexpr const char* kTinyGpt2 = R"({"model_type":"gpt2","n_embd":32,"n_layer":2,"n_head":2,
    "vocab_size":61,"n_positions":32})";

RunRecord tiny_run(bool counters) {
    RunRequest r;
    r.batch = 2;
    r.prompt_tokens = 4;
    r.decode_tokens = 5;
    r.seed = 11;
    r.counters = counters;
    return test::cpu_run(kTinyGpt2, r);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    if (at == std::string::npos) qFatal("'%s' not in the document", from.c_str());
    return text.replace(at, from.size(), to);
}

} // namespace

class TestRunRecord : public QObject {
    Q_OBJECT
  private slots:
    // Two prefill steps (one per sequence), then a decode step per generated token but the
    // last; each step's tokens are the ones generated, and the dispatches add up.
    void stepsRecordWhatTheRunDid() {
        const RunRecord rec = tiny_run(true);
        const RunResult& r = rec.result;
        QCOMPARE(r.steps.size(), size_t(2 + 4));
        QCOMPARE(r.steps[0].phase, StepPhase::Prefill);
        QCOMPARE(r.steps[1].phase, StepPhase::Prefill);
        QCOMPARE(r.steps[1].sequence, 1u);
        for (size_t s = 2; s < r.steps.size(); ++s)
            QCOMPARE(r.steps[s].phase, StepPhase::Decode);
        QCOMPARE(tokens_of_step(r, 1), std::vector<int32_t>{r.generated_ids[1][0]});
        QCOMPARE(tokens_of_step(r, 5),
                 (std::vector<int32_t>{r.generated_ids[0][4], r.generated_ids[1][4]}));
        DispatchCounters prefill, decode;
        for (const RunStep& s : r.steps)
            (s.phase == StepPhase::Prefill ? prefill : decode) += s.dispatches;
        QVERIFY(prefill == r.prefill_counters);
        QVERIFY(decode == r.decode_counters);
        QVERIFY(r.steps[2].dispatches.total > 0);
        QVERIFY(r.steps[2].dispatches == r.steps[5].dispatches); // every step runs the plan once
        QVERIFY(r.steps[0].logits_hash != r.steps[1].logits_hash);
        QCOMPARE(r.decode_step_seconds().size(), size_t(4));
    }

    // Counting off: no dispatches recorded anywhere, the same tokens and logits.
    void countingChangesNoResult() {
        const RunRecord on = tiny_run(true), off = tiny_run(false);
        QVERIFY(off.result.logits_hash == on.result.logits_hash);
        QCOMPARE(off.result.generated_ids, on.result.generated_ids);
        QCOMPARE(off.result.steps[3].dispatches.total, uint64_t(0));
    }

    // Written, read back and written again: the same bytes, the same fields.
    void jsonRoundTripIsExact() {
        RunRecord rec = tiny_run(true);
        rec.parity = RunParity{"a buffer per register", true, rec.result.logits_hash};
        rec.request.prompt_ids = {};
        const std::string json = run_record_json(rec);
        const RunRecord back = parse_run_record(json, "run.json");
        QCOMPARE(run_record_json(back), json);
        QCOMPARE(back.config_text, rec.config_text);
        QCOMPARE(back.request.batch, 2u);
        QCOMPARE(back.request.seed, uint64_t(11));
        QVERIFY(back.request.counters);
        QCOMPARE(back.result.generated_ids, rec.result.generated_ids);
        QCOMPARE(back.result.steps.size(), rec.result.steps.size());
        QVERIFY(back.result.steps[4].logits_hash == rec.result.steps[4].logits_hash);
        QVERIFY(back.result.steps[4].dispatches == rec.result.steps[4].dispatches);
        QVERIFY(back.parity && back.parity->identical);
    }

    void malformedDocumentsAreRefusedNamingTheField() {
        const std::string good = run_record_json(tiny_run(false));
        auto refused = [](const std::string& text, const char* says) {
            const auto f = test::capture_failure([&] { (void)parse_run_record(text, "run.json"); });
            QVERIFY2(f.has_value(), says);
            QCOMPARE(f->code(), FailureCode::InvalidArgument);
            QVERIFY2(std::string(f->what()).find(says) != std::string::npos, f->what());
        };
        refused("{", "not valid JSON");
        refused(replaced(good, "\"tmmu-run\"", "\"tmmu-plan\""), "not a tmmu-run document");
        refused(replaced(good, "\"layout\": \"planned\"", "\"layout\": \"diagonal\""),
                "request: layout 'diagonal'");
        refused(replaced(good, "\"phase\": \"decode\"", "\"phase\": \"verify\""),
                "steps[2]: phase 'verify'");
        refused(replaced(good, "\"batch\": 2,", ""), "'batch' is missing");
        refused(replaced(good, "\"decode_tokens\": 5", "\"decode_tokens\": \"five\""),
                "request: 'decode_tokens' has the wrong type");
        // Steps that do not fit the generated ids (a replay would compare past their end).
        refused(replaced(good, "\"phase\": \"prefill\"", "\"phase\": \"decode\""),
                "steps[0]: expected the prefill of sequence 0");
        nlohmann::json doc = nlohmann::json::parse(good);
        doc["generated_ids"][1].erase(doc["generated_ids"][1].begin());
        refused(doc.dump(), "generated_ids[1]: 4 tokens, expected 5");
    }

    // Replaying a recorded run (from its stored config text) gives the same steps bit for bit.
    void replayOfARecordedRunIsIdentical() {
        const RunRecord rec = parse_run_record(run_record_json(tiny_run(true)), "run.json");
        const RunResult again = cpu::replay(rec, {});
        const RunComparison c = compare_runs(rec.result, again);
        QVERIFY2(c.identical, c.difference.c_str());
        QVERIFY(!c.first_step);
    }

    void comparisonNamesTheFirstStepThatDiffers() {
        const RunResult recorded = tiny_run(false).result;
        RunResult token = recorded; // decode step 2 (step index 4) chose another token
        token.generated_ids[1][3] = (token.generated_ids[1][3] + 1) % 61;
        RunComparison c = compare_runs(recorded, token);
        QVERIFY(!c.identical);
        QCOMPARE(c.first_step, std::optional<size_t>(4));
        QVERIFY2(c.difference.find("step 4 (decode): tokens") != std::string::npos,
                 c.difference.c_str());

        RunResult logits = recorded; // the same tokens from different logits
        logits.steps[1].logits_hash[0] ^= 1;
        c = compare_runs(recorded, logits);
        QCOMPARE(c.first_step, std::optional<size_t>(1));
        QVERIFY2(c.difference.find("prefill of sequence 1): logits differ") != std::string::npos,
                 c.difference.c_str());

        RunResult shorter = recorded;
        shorter.steps.pop_back();
        c = compare_runs(recorded, shorter);
        QCOMPARE(c.first_step, std::optional<size_t>(5));
        QVERIFY2(c.difference.find("ran 5 steps, the recording 6") != std::string::npos,
                 c.difference.c_str());

        QVERIFY(compare_runs(recorded, recorded).identical);
    }

    // The prefill's logits give the first token: a run of no tokens is a mistake, not a run.
    void aRunGeneratesAtLeastOneToken() {
        RunRequest r;
        r.decode_tokens = 0;
        TMMU_EXPECT_FAILURE(test::cpu_run(kTinyGpt2, r), FailureCode::InvalidArgument);
    }

    void foreignBackendsAreNotReplayedHere() {
        RunRecord rec = tiny_run(false);
        rec.backend = "cuda";
        TMMU_EXPECT_FAILURE((void)cpu::replay(rec, {}), FailureCode::InvalidArgument);
    }
};

QTEST_GUILESS_MAIN(TestRunRecord)
#include "test_run_record.moc"
