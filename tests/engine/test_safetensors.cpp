// Weights from safetensors files (issue 12, item 5): what the tests write in the format's own
// layout is read back exactly (F32) or converted exactly (F16, BF16 values that fit), runs on it
// match the same weights given directly, and broken files are refused naming the tensor.
#include "backends/cpu/cpu_generate.h"
#include "models/transformer_config.h"
#include "runtime/plan_compiler.h"
#include "runtime/safetensors.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace tmmu;
using namespace tmmu::runtime;

namespace {

TransformerConfig tiny_gpt2() {
    return parse_transformer_config(R"({"model_type":"gpt2","n_embd":32,"n_layer":1,"n_head":2,
        "vocab_size":50,"n_positions":16})",
                                    "tiny-gpt2");
}

// A safetensors file of `store`'s weights: 8-byte header length, JSON header, data. `dtype`
// F32, F16 (values must fit) or BF16 (the high half of each f32); every name gets `prefix`,
// and the weight named `left_out` is not written.
std::string safetensors_bytes(const ExecutionPlan& plan, const WeightStore& store,
                              const std::string& dtype, const std::string& prefix = "",
                              const std::string& left_out = "") {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    std::string data;
    for (size_t i = 0; i < plan.weights.size(); ++i) {
        const WeightDesc& d = plan.weights[i];
        if (d.name == left_out) continue;
        const size_t begin = data.size();
        for (uint64_t e = 0; e < d.view.elements(); ++e) {
            const float f = store.data[store.offset[i] + e];
            const uint32_t bits = std::bit_cast<uint32_t>(f);
            if (dtype == "F32") {
                data.append(reinterpret_cast<const char*>(&f), 4);
            } else {
                uint16_t h = uint16_t(bits >> 16); // BF16: truncation
                if (dtype == "F16") // normal values only: exponent rebias, mantissa cut
                    h = uint16_t(((bits >> 16) & 0x8000) | ((((bits >> 23) & 0xff) - 112) << 10) |
                                 ((bits >> 13) & 0x3ff));
                data.append(reinterpret_cast<const char*>(&h), 2);
            }
        }
        std::vector<uint64_t> shape(d.view.shape.begin(), d.view.shape.begin() + d.view.rank);
        header[prefix + d.name] = {
            {"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
    }
    const std::string text = header.dump();
    const uint64_t n = text.size();
    return std::string(reinterpret_cast<const char*>(&n), 8) + text + data;
}

void write(const QString& path, const std::string& bytes) {
    std::ofstream(path.toStdString(), std::ios::binary) << bytes;
}

// Values every dtype holds exactly: multiples of 1/64 between -2 and 2.
WeightStore exact_weights(const ExecutionPlan& plan) {
    WeightStore w = random_weights(plan, 3);
    for (float& f : w.data)
        f = std::round(f * 64.0f) / 64.0f + 0.5f;
    return w;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void everyDtypeReadsBackExactly() {
        const ExecutionPlan plan = compile_transformer(tiny_gpt2(), {}).plan;
        const WeightStore w = exact_weights(plan);
        for (const char* dtype : {"F32", "F16", "BF16"}) {
            const QString path = dir_.filePath(QString("w-%1.safetensors").arg(dtype));
            write(path, safetensors_bytes(plan, w, dtype));
            const WeightStore back = load_safetensors(plan, path.toStdString());
            QVERIFY2(back.data == w.data, dtype);
        }
        // Checkpoints saved from GPT2LMHeadModel prefix the names.
        const QString prefixed = dir_.filePath("prefixed.safetensors");
        write(prefixed, safetensors_bytes(plan, w, "F32", "transformer."));
        QVERIFY(load_safetensors(plan, prefixed.toStdString()).data == w.data);
    }

    // A run on weights read from a file is bit-identical to one on the same weights in memory.
    void runsOnFileWeightsMatchSeededOnes() {
        const TransformerConfig c = tiny_gpt2();
        const ExecutionPlan plan = compile_transformer(c, {PlanMode::Decode, 1, 12}).plan;
        const QString path = dir_.filePath("seeded.safetensors");
        write(path, safetensors_bytes(plan, random_weights(plan, 9), "F32"));
        runtime::RunRequest r;
        r.prompt_tokens = 4;
        r.decode_tokens = 8;
        r.seed = 9;
        const runtime::RunResult seeded = cpu::generate(c, r, Progress{});
        r.weights_path = path.toStdString();
        const runtime::RunResult from_file = cpu::generate(c, r, Progress{});
        QVERIFY(from_file.logits_hash == seeded.logits_hash);
        QVERIFY(from_file.generated_ids == seeded.generated_ids);
    }

    void brokenFilesAreRefusedNamingTheTensor() {
        const ExecutionPlan plan = compile_transformer(tiny_gpt2(), {}).plan;
        const WeightStore w = random_weights(plan, 3);
        const std::string good = safetensors_bytes(plan, w, "F32");
        auto refused = [&](const char* name, const std::string& bytes, FailureCode code,
                           const char* says) {
            const QString path = dir_.filePath(name);
            write(path, bytes);
            auto f =
                test::capture_failure([&] { (void)load_safetensors(plan, path.toStdString()); });
            QVERIFY2(f.has_value(), name);
            QCOMPARE(f->code(), code);
            QVERIFY2(std::string(f->what()).find(says) != std::string::npos, f->what());
        };
        refused("truncated.safetensors", good.substr(0, 40), FailureCode::InvalidIrShapes,
                "not a safetensors file");
        refused("missing.safetensors", safetensors_bytes(plan, w, "F32", "", "ln_f.bias"),
                FailureCode::InvalidIrShapes, "tensor 'ln_f.bias': missing");
        std::string wrong_shape = good;
        const size_t at = wrong_shape.find("\"shape\":[50,32]");
        wrong_shape.replace(at, 15, "\"shape\":[32,50]");
        refused("shape.safetensors", wrong_shape, FailureCode::InvalidIrShapes,
                "tensor 'wte.weight': shape [32, 50], the model needs [50, 32]");
        std::string int8 = good;
        int8.replace(int8.find("\"F32\""), 5, "\"I8\" ");
        refused("dtype.safetensors", int8, FailureCode::InvalidIrShapes, "dtype I8 is not read");
        refused("short.safetensors", good.substr(0, good.size() - 4), FailureCode::InvalidIrShapes,
                "lie outside the");
        TMMU_EXPECT_FAILURE(load_safetensors(plan, dir_.filePath("absent").toStdString()),
                            FailureCode::IoError);
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
