// The CPU backend runs compiled plans (seed 002, "Correctness"): against an independent naive
// double-precision forward pass (NMSE <= 1e-6 and the same argmax at every step of a seeded
// greedy decode), planned registers against a buffer per register (bit-identical logits),
// batched slots against one slot at a time, and bad steps refused by name.
#include "backends/cpu/cpu_generate.h"
#include "backends/cpu/cpu_program.h"
#include "models/transformer_config.h"
#include "naive_transformer.h"
#include "runtime/generate.h"
#include "runtime/plan_compiler.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <cstring>
#include <set>

using namespace tmmu;
using namespace tmmu::runtime;
using namespace tmmu::cpu;

namespace {

// Small enough for the naive reference, shaped like the real families: GPT-2 with learned
// positions and a tied head; Llama with grouped-query attention (8 heads, 2 kv), RoPE, SwiGLU
// and its own head.
TransformerConfig tiny_gpt2() {
    return parse_transformer_config(R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,
        "vocab_size":97,"n_positions":80})",
                                    "tiny-gpt2");
}
// `rope_scaling`: a config.json rope_scaling object (test_support.h), or none.
TransformerConfig tiny_llama(const char* rope_scaling = nullptr) {
    const char* llama = R"({"model_type":"llama","hidden_size":64,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,
        "intermediate_size":96,"vocab_size":101,"max_position_embeddings":80,
        "rms_norm_eps":1e-5,"rope_theta":10000.0})";
    return parse_transformer_config(rope_scaling ? test::with_rope_scaling(llama, rope_scaling)
                                                 : std::string(llama),
                                    "tiny-llama");
}

int32_t argmax(std::span<const float> v) {
    return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}
int32_t argmax(const std::vector<double>& v) {
    return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

double nmse(std::span<const float> got, const std::vector<double>& want) {
    double err = 0, ref = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        ref += want[i] * want[i];
    }
    return err / ref;
}

// A model with prefill and decode programs sharing weights and per-slot state; the KV cache
// holds 80 positions, room for an 8-token prompt and 64 decode steps.
struct Runner {
    TransformerConfig config;
    CompiledPlan prefill_plan, decode_plan;
    WeightStore weights;
    SlotStates states;
    CpuProgram prefill, decode;

    Runner(const TransformerConfig& c, uint32_t prompt, uint32_t slot_count,
           RegisterLayout layout = RegisterLayout::Planned)
        : config(c), prefill_plan(compile_transformer(c, {PlanMode::Prefill, prompt, 80})),
          decode_plan(compile_transformer(c, {PlanMode::Decode, slot_count, 80})),
          weights(random_weights(decode_plan.plan, 7)), states(decode_plan.plan, slot_count),
          prefill(prefill_plan, weights, states, layout),
          decode(decode_plan, weights, states, layout) {}

    // Prefills `prompt` into `slot`, then decodes greedily; returns every step's logits.
    std::vector<std::vector<float>> generate(const std::vector<int32_t>& prompt, uint32_t steps,
                                             std::vector<int32_t>& sequence, uint32_t slot = 0) {
        std::vector<std::vector<float>> out;
        std::vector<uint32_t> row_slots(prompt.size(), slot), positions;
        for (uint32_t i = 0; i < prompt.size(); ++i)
            positions.push_back(i);
        std::span<const float> logits = prefill.run(prompt, row_slots, positions);
        const size_t vocab = logits.size() / prompt.size();
        logits = logits.subspan(logits.size() - vocab);
        sequence = prompt;
        for (uint32_t s = 0;; ++s) {
            out.emplace_back(logits.begin(), logits.end());
            if (s == steps) break;
            const int32_t next = argmax(logits);
            sequence.push_back(next);
            const uint32_t pos = uint32_t(sequence.size() - 1), one_slot = slot;
            logits = decode.run({&next, 1}, {&one_slot, 1}, {&pos, 1});
        }
        return out;
    }
};

} // namespace

class TestCpuBackend : public QObject {
    Q_OBJECT
  private slots:
    // A 64-step greedy decode after an 8-token prompt: at every step the logits match the
    // naive reference (NMSE <= 1e-6) and so does the chosen token. The reference is causal, so
    // one pass over the final sequence gives every step's logits: step s's are position 7 + s's.
    // Llama 3's and linear RoPE scaling (rope_scaling) too, against the reference's own formulas.
    void decodeMatchesTheNaiveReference_data() {
        QTest::addColumn<QString>("family");     // gpt2, llama or qwen2 (Llama's with q/k/v biases)
        QTest::addColumn<QByteArray>("scaling"); // empty: none
        QTest::newRow("gpt2") << "gpt2" << QByteArray();
        QTest::newRow("llama") << "llama" << QByteArray();
        QTest::newRow("llama, llama3 RoPE scaling")
            << "llama" << QByteArray(test::kLlama3RopeScaling);
        QTest::newRow("llama, linear RoPE scaling")
            << "llama" << QByteArray(test::kLinearRopeScaling);
        QTest::newRow("qwen2") << "qwen2" << QByteArray();
    }
    void decodeMatchesTheNaiveReference() {
        QFETCH(QString, family);
        QFETCH(QByteArray, scaling);
        Runner run(family == "gpt2" ? tiny_gpt2()
                   : family == "qwen2"
                       ? test::tiny_config(test::kTinyQwen2)
                       : tiny_llama(scaling.isEmpty() ? nullptr : scaling.constData()),
                   8, 1);
        std::vector<int32_t> sequence;
        const auto steps = run.generate(seeded_prompt(8, run.config.vocab, 3), 64, sequence);
        const auto ref =
            test::naive_logits(run.config, run.decode_plan.plan, run.weights, sequence);
        double worst = 0;
        for (size_t s = 0; s < steps.size(); ++s) {
            const double e = nmse(steps[s], ref[7 + s]);
            worst = std::max(worst, e);
            QVERIFY2(e <= 1e-6, qPrintable(QString("step %1: NMSE %2").arg(s).arg(e)));
            QCOMPARE(argmax(steps[s]), argmax(ref[7 + s]));
        }
        qInfo("worst NMSE over %zu steps: %.3g", steps.size(), worst);
        // Not a constant: the model must react to what it generated.
        QVERIFY(std::set<int32_t>(sequence.begin() + 8, sequence.end()).size() > 1);
    }

    // The planner's packing changes where registers live, never a bit of the result.
    void plannedRegistersAreBitIdenticalToSeparateOnes() {
        for (const TransformerConfig& c :
             {tiny_gpt2(), tiny_llama(), test::tiny_config(test::kTinyQwen2)}) {
            Runner planned(c, 8, 1), separate(c, 8, 1, RegisterLayout::Separate);
            QVERIFY(planned.decode.register_bytes() < separate.decode.register_bytes());
            std::vector<int32_t> a, b;
            const auto x = planned.generate(seeded_prompt(8, c.vocab, 5), 20, a);
            const auto y = separate.generate(seeded_prompt(8, c.vocab, 5), 20, b);
            QCOMPARE(a, b);
            for (size_t s = 0; s < x.size(); ++s)
                QVERIFY(std::memcmp(x[s].data(), y[s].data(), x[s].size() * sizeof(float)) == 0);
        }
    }

    // Rows of one decode step are independent: three slots decoded together give the bits
    // each gives alone, and running again gives the same bits (determinism).
    void batchedSlotsMatchOneAtATime() {
        const TransformerConfig c = tiny_llama();
        Runner batched(c, 8, 3), single(c, 8, 3);
        std::vector<std::vector<int32_t>> seqs(3);
        std::vector<int32_t> next(3);
        std::vector<uint32_t> row_slots{0, 1, 2}, positions(3, 8);
        for (uint32_t s = 0; s < 3; ++s) {
            std::vector<std::vector<float>> first =
                batched.generate(seeded_prompt(8, c.vocab, 10 + s), 0, seqs[s], s);
            next[s] = argmax(first.back());
            std::vector<int32_t> ignored;
            (void)single.generate(seeded_prompt(8, c.vocab, 10 + s), 0, ignored, s);
        }
        const std::span<const float> together = batched.decode.run(next, row_slots, positions);
        const std::vector<float> all(together.begin(), together.end());
        const size_t vocab = all.size() / 3;
        for (uint32_t s = 0; s < 3; ++s) {
            const std::span<const float> alone =
                single.decode.run({&next[s], 1}, {&row_slots[s], 1}, {&positions[s], 1});
            QVERIFY(std::memcmp(alone.data(), all.data() + s * vocab, vocab * sizeof(float)) == 0);
        }
    }

    // Memory checks on a correct plan find nothing and change no bit of the result.
    void checkedRunsMatchUncheckedOnes() {
        const TransformerConfig c = tiny_gpt2();
        const CompiledPlan plan = compile_transformer(c, {PlanMode::Prefill, 8, 64});
        const WeightStore w = random_weights(plan.plan, 7);
        SlotStates s1(plan.plan, 1), s2(plan.plan, 1);
        CpuProgram plain(plan, w, s1), checked(plan, w, s2, RegisterLayout::Planned, true);
        const std::vector<int32_t> prompt = seeded_prompt(8, c.vocab, 3);
        const std::vector<uint32_t> slot(8, 0), pos{0, 1, 2, 3, 4, 5, 6, 7};
        const std::span<const float> a = plain.run(prompt, slot, pos);
        const std::vector<float> x(a.begin(), a.end());
        const std::span<const float> b = checked.run(prompt, slot, pos);
        QVERIFY(std::memcmp(x.data(), b.data(), x.size() * sizeof(float)) == 0);
    }

    // A liveness that ends a register too early lets the planner put a later register on its
    // bytes. Unchecked, the run just gives other numbers; checked, it stops at the reader and
    // names the register, its bytes, and what changed them: the instruction that overwrote
    // them, or (when the early end also poisoned it) the liveness itself.
    void aPlanOverlappingLiveDataIsCaught_data() { test::add_overlap_rows(); }
    void aPlanOverlappingLiveDataIsCaught() {
        QFETCH(bool, poisoned);
        QFETCH(QString, reader);
        QFETCH(QString, cause);
        const CompiledPlan plan = test::overlapping_prefill(poisoned);
        const WeightStore w = random_weights(plan.plan, 7);
        SlotStates s1(plan.plan, 1), s2(plan.plan, 1);
        const std::vector<int32_t> prompt = seeded_prompt(8, 97, 3);
        const std::vector<uint32_t> slot(8, 0), pos{0, 1, 2, 3, 4, 5, 6, 7};
        auto f = test::capture_failure(
            [&] { CpuProgram(plan, w, s2, RegisterLayout::Planned, true).run(prompt, slot, pos); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AddressCollision);
        qInfo("%s", f->what());
        const QString what = QString::fromUtf8(f->what());
        QVERIFY2(what.contains(reader) && what.contains(cause), f->what());
        (void)CpuProgram(plan, w, s1).run(prompt, slot, pos); // unchecked: no complaint
    }

    // An adapter that writes past its output (here: an output register declared half as wide
    // as the layernorm writes) hits the guard bytes and is named at that instruction.
    void anAdapterWritingPastItsOutputIsCaught() {
        const CompiledPlan plan = test::narrow_norm_decode();
        const WeightStore w = random_weights(plan.plan, 7);
        SlotStates states(plan.plan, 1);
        CpuProgram program(plan, w, states, RegisterLayout::Planned, true);
        const int32_t token = 5;
        const uint32_t zero = 0;
        auto f = test::capture_failure([&] { program.run({&token, 1}, {&zero, 1}, {&zero, 1}); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AddressCollision);
        QVERIFY2(std::string(f->what()).find(test::kNarrowNormFinding) != std::string::npos,
                 f->what());
    }

    void badStepsAreRefusedByName() {
        Runner run(tiny_gpt2(), 8, 2);
        const int32_t bad_token = 97, token = 1;
        const uint32_t slot = 0, bad_slot = 2, pos = 0, bad_pos = 80;
        auto says = [](auto fn, const char* text) {
            auto f = test::capture_failure(fn);
            QVERIFY2(f && f->code() == FailureCode::InvalidArgument &&
                         std::string(f->what()).find(text) != std::string::npos,
                     f ? f->what() : "no failure");
        };
        says(
            [&] {
                run.decode.run({&bad_token, 1}, {&slot, 1}, {&pos, 1});
            },
            "token 97 is outside the vocabulary of 97");
        says(
            [&] {
                run.decode.run({&token, 1}, {&bad_slot, 1}, {&pos, 1});
            },
            "slot 2 does not exist");
        says(
            [&] {
                run.decode.run({&token, 1}, {&slot, 1}, {&bad_pos, 1});
            },
            "position 80 is past the KV cache's 80 positions");
        const std::vector<int32_t> three(3, 1);
        const std::vector<uint32_t> zeros(3, 0);
        says([&] { run.decode.run(three, zeros, zeros); }, "a step of 3 rows");
    }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
