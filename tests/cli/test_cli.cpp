// End-to-end: runs the real tmmu binary and checks exit codes, output and files.
#include "test_support.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

namespace {

using Result = tmmu::test::ProgramRun;

Result run_tmmu(const QStringList& args) {
    return tmmu::test::run_program(TMMU_CLI, args);
}

QString resource(const char* rel) {
    return QStringLiteral(TMMU_SOURCE_DIR "/resources/") + rel;
}

QString hash_line(const QString& summary, const char* label) {
    for (const QString& line : summary.split('\n'))
        if (line.startsWith(label)) return line.section(' ', -1);
    return {};
}

void write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// A small Llama-shaped config.json in `dir` (GQA 8/2 heads, 101 tokens, 64 positions).
QString write_tiny_llama(const QTemporaryDir& dir) {
    const QString config = dir.filePath("tiny-llama.json");
    write(config, R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":96,
        "vocab_size":101,"max_position_embeddings":64})");
    return config;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
  private slots:
    void defaultModelPlansAndPrintsSummary() {
        Result r = run_tmmu({"plan"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("gpt2-small") && r.out.contains("batch 8, seq 1024"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("mode       training"));
        for (const char* arena : {"parameters", "activations", "gradients", "optimizer"})
            QVERIFY2(r.out.contains(arena), arena);
        QCOMPARE(hash_line(r.out, "plan hash").size(), 64);
        QVERIFY2(r.out.contains(QRegularExpression(
                     "\nreuse +saves [0-9.]+ [KMG]iB \\([0-9.]+%\\) of [0-9.]+ GiB without "
                     "reuse; [0-9]+ buffer pairs share bytes\n")),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(
                     "\nretention  [0-9.]+ [KMG]iB \\([0-9.]+%\\) of the [0-9.]+ GiB the forward "
                     "pass writes is held into the backward pass at step [0-9]+ \\([0-9]+ of "
                     "[0-9]+ buffers\\)\n")),
                 qPrintable(r.out));
    }
    // Seed 000 I.B's page_size: residual_blocks' activations peak at 5 MiB in training, which
    // 4 MiB pages hold in 8 MiB; a 7 MiB capacity has one whole page, too few.
    void pagedArenasHoldWholePages() {
        const QString model = resource("models/examples/residual_blocks.json");
        QTemporaryDir dir;
        const QString trace = dir.filePath("t.jsonl");
        Result r = run_tmmu({"plan", model, "--mode", "training", "--arena", "activations=::4MiB",
                             "--json", "-", "--trace", trace});
        QCOMPARE(r.code, 0);
        const QJsonObject root = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray arenas = root["arenas"].toArray();
        const QJsonObject acts = arenas[1].toObject();
        QCOMPARE(acts["peak_bytes"].toInteger(), qint64(5) << 20);
        QCOMPARE(acts["page_size"].toInteger(), qint64(4) << 20);
        QCOMPARE(acts["committed_bytes"].toInteger(), qint64(8) << 20);
        QVERIFY(!arenas[0].toObject().contains("page_size")); // unpaged arenas as before
        const std::optional<std::string> lines = tmmu::test::read_file(trace.toStdString());
        QVERIFY(lines);
        const auto header = nlohmann::json::parse(lines->substr(0, lines->find('\n')));
        QCOMPARE(header["arenas"][1]["page_size"].get<uint64_t>(), uint64_t(4) << 20);
        QVERIFY(!header["arenas"][0].contains("page_size"));
        Result text =
            run_tmmu({"plan", model, "--mode", "training", "--arena", "activations=::4MiB"});
        QVERIFY2(text.out.contains("pages      activations: 8.00 MiB in pages of 4.00 MiB for its "
                                   "peak of 5.00 MiB\n"),
                 qPrintable(text.out));
        Result plain = run_tmmu({"plan", model, "--mode", "training"});
        QVERIFY(!plain.out.contains("pages "));
        QVERIFY(hash_line(plain.out, "plan hash") != hash_line(text.out, "plan hash"));
        Result small =
            run_tmmu({"plan", model, "--mode", "training", "--arena", "activations=7MiB::4MiB"});
        QCOMPARE(small.code, 14); // ARENA_TOO_SMALL, though 5 MiB < 7 MiB
        QVERIFY2(small.err.contains("in whole pages of 4194304 bytes"), qPrintable(small.err));
        // A recorded session keeps the page size, so its replay plans the same.
        const QString db = dir.filePath("s.db");
        QCOMPARE(run_tmmu({"plan", model, "--mode", "training", "--arena", "activations=8MiB::4MiB",
                           "--record", "--sessions", db})
                     .code,
                 0);
        Result replay = run_tmmu({"session", "replay", "1", "--sessions", db});
        QVERIFY2(replay.code == 0 && replay.out.contains("identical"),
                 qPrintable(replay.out + replay.err));
        Result odd = run_tmmu({"plan", model, "--arena", "activations=::3MiB"});
        QCOMPARE(odd.code, 2);
        QVERIFY2(odd.err.contains("page size 3145728 is not a power of two"), qPrintable(odd.err));
    }
    void jsonOutputHasDocumentedFields() {
        Result r = run_tmmu({"plan", resource("models/examples/residual_blocks.json"), "--mode",
                             "inference", "--json", "-", "--tensors"});
        QCOMPARE(r.code, 0);
        QJsonParseError error;
        QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
        QVERIFY2(!doc.isNull(), qPrintable(error.errorString()));
        QJsonObject root = doc.object();
        for (const char* key : {"source", "mode", "strategy", "ir_hash", "plan_hash", "arenas",
                                "totals", "series", "tensors"})
            QVERIFY2(root.contains(key), key);
        QCOMPARE(root["mode"].toString(), QString("inference"));
        // Inference holds nothing for a backward pass it does not have.
        const QJsonObject retention = root["activation_retention"].toObject();
        QVERIFY(retention["forward_bytes"].toDouble() > 0);
        QCOMPARE(retention["retained_bytes"].toDouble(), 0.0);
        QCOMPARE(retention["ratio"].toDouble(), 0.0);
        QVERIFY(retention["backward_start"].isNull());
        QJsonObject arena = root["arenas"].toArray().first().toObject();
        for (const char* key : {"name", "peak_bytes", "lower_bound", "slots", "max_live"})
            QVERIFY2(arena.contains(key), key);
        QVERIFY(arena["peak_bytes"].toDouble() >= arena["lower_bound"].toDouble());
        QVERIFY(!root["tensors"].toArray().isEmpty());
        // Seed 003's figures: activations reuse bytes, parameters (all live throughout) cannot.
        const QJsonObject acts = root["arenas"].toArray()[1].toObject();
        QCOMPARE(acts["name"].toString(), QString("activations"));
        QCOMPARE(acts["saved_bytes"].toInteger(),
                 acts["isolated_bytes"].toInteger() - acts["peak_bytes"].toInteger());
        QVERIFY(acts["saved_bytes"].toInteger() > 0 && acts["sharing_pairs"].toInteger() > 0);
        QCOMPARE(arena["saved_bytes"].toInteger(), 0);
        QCOMPARE(arena["sharing_pairs"].toInteger(), 0);
        QCOMPARE(root["totals"].toObject()["saved_bytes"].toInteger(),
                 acts["saved_bytes"].toInteger());
        // --tensors lists the pairs the arenas count, each of two tensors of the plan whose
        // bytes overlap at different times.
        const QJsonObject pairs = root["sharing_pairs"].toObject();
        QVERIFY(pairs["parameters"]["pairs"].toArray().isEmpty());
        const QJsonArray actPairs = pairs["activations"]["pairs"].toArray();
        QCOMPARE(actPairs.size(), acts["sharing_pairs"].toInteger());
        QCOMPARE(pairs["activations"]["count"].toInteger(), acts["sharing_pairs"].toInteger());
        QMap<QString, QJsonObject> tensors;
        for (const QJsonValue& t : root["tensors"].toArray())
            tensors[t["id"].toString()] = t.toObject();
        for (const QJsonValue& pair : actPairs) {
            const QJsonObject a = tensors.value(pair[0].toString()),
                              b = tensors.value(pair[1].toString());
            QVERIFY2(!a.isEmpty() && !b.isEmpty(), qPrintable(pair[0].toString()));
            const auto at = [](const QJsonObject& t, const char* key) {
                return t[key].toInteger();
            };
            QVERIFY(at(a, "offset") < at(b, "offset") + at(b, "size") &&
                    at(b, "offset") < at(a, "offset") + at(a, "size"));
            QVERIFY(at(a, "end") <= at(b, "begin") || at(b, "end") <= at(a, "begin"));
        }
    }
    void generatedIrPlansLikeTheConfig() {
        QTemporaryDir dir;
        QString ir = dir.filePath("gpt2.json");
        Result gen = run_tmmu({"gen", "gpt2", resource("models/gpt2-small.json"), "--batch", "2",
                               "--seq", "64", "--mode", "training", "--out", ir});
        QCOMPARE(gen.code, 0);
        Result a =
            run_tmmu({"plan", resource("models/gpt2-small.json"), "--batch", "2", "--seq", "64"});
        Result b = run_tmmu({"plan", ir});
        QCOMPARE(a.code, 0);
        QCOMPARE(b.code, 0);
        QCOMPARE(hash_line(b.out, "ir hash"), hash_line(a.out, "ir hash"));
        QCOMPARE(hash_line(b.out, "plan hash"), hash_line(a.out, "plan hash"));
    }
    void checkpointValidatesWithTheSameHash() {
        QTemporaryDir dir;
        QString ckpt = dir.filePath("plan.cbor");
        QString trace = dir.filePath("plan.jsonl");
        Result r = run_tmmu({"plan", resource("models/examples/views_and_inplace.json"),
                             "--checkpoint", ckpt, "--trace", trace});
        QCOMPARE(r.code, 0);
        Result v = run_tmmu({"validate", ckpt});
        QCOMPARE(v.code, 0);
        QVERIFY2(v.out.contains(hash_line(r.out, "plan hash")), qPrintable(v.out));
        // Planning a checkpoint says what it is and what reads it.
        Result again = run_tmmu({"plan", ckpt});
        QCOMPARE(again.code, 10);
        QVERIFY2(again.err.contains("a plan checkpoint, not a model: `tmmu validate` checks it"),
                 qPrintable(again.err));
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        QVERIFY(t.readLine().startsWith("{\"record\":\"allocation_header\""));
    }
    // tmmu compile: the summary a person reads, the registers as a CSV that plan (and the
    // studio) open with the same arena size, and configs only.
    void compileShowsThePlanAndItsRegisters() {
        Result r = run_tmmu({"compile", resource("models/tinyllama-1.1b.json"), "--mode", "prefill",
                             "--prompt", "64"});
        QCOMPARE(r.code, 0);
        for (const char* line : {"135 instructions, 136 registers, at most 3 live at once",
                                 "22 KV-cache blocks", "swiglu 22", "rmsnorm 45"})
            QVERIFY2(r.out.contains(line), qPrintable(r.out));
        Result csv = run_tmmu({"compile", "--registers", "-"});
        QCOMPARE(csv.code, 0);
        QVERIFY(csv.out.startsWith("id,lower,upper,size,alignment,offset\ntokens,0,1,4,64,"));
        const QString path = QDir::temp().filePath("tmmu-test-registers.csv");
        write(path, csv.out.toUtf8());
        Result planned = run_tmmu({"plan", path});
        QFile::remove(path);
        QCOMPARE(planned.code, 0);
        QVERIFY2(planned.out.contains("76 buffers"), qPrintable(planned.out));
        Result ir = run_tmmu({"compile", resource("models/examples/residual_blocks.json")});
        QCOMPARE(ir.code, 2);
        QVERIFY2(ir.err.contains("GPT-2, Llama, Mistral or Qwen2 config"), qPrintable(ir.err));
        QCOMPARE(run_tmmu({"compile", "--mode", "decode", "--prompt", "8"}).code, 2);
    }

    // tmmu run end to end on a small Llama-shaped config: ids, parity, counters, determinism.
    void runGeneratesDeterministicallyWithParity() {
        QTemporaryDir dir;
        const QString config = write_tiny_llama(dir);
        const QStringList args{"run",          config,       "--batch",  "2",
                               "--prompt-ids", "5,17,42",    "--decode", "6",
                               "--verify",     "--counters", "--json",   "-"};
        Result r = run_tmmu(args);
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["prompt_ids"].size(), size_t(2));
        QCOMPARE(j["prompt_ids"][1].get<std::vector<int>>(), (std::vector<int>{5, 17, 42}));
        QCOMPARE(j["generated_ids"][0].size(), size_t(6));
        QVERIFY(j["generated_ids"][0] == j["generated_ids"][1]); // same prompt, same tokens
        QVERIFY(j["parity"]["identical"].get<bool>());
        // Five decode steps (the first token comes from the prefill), 2 layers: 2 attention
        // dispatches per step, each covering both sequences.
        QCOMPARE(j["counters"]["decode"]["per_opcode"]["multihead_attention"].get<int>(), 10);
        QCOMPARE(j["counters"]["decode"]["total"].get<int>(), 5 * (1 + 2 * 6 + 2));
        const auto again = nlohmann::json::parse(run_tmmu(args).out.toStdString());
        QCOMPARE(again["logits_sha256"].get<std::string>(), j["logits_sha256"].get<std::string>());
        // Each GPU backend runs where the build has it and the machine a device (tmmu devices
        // says which), with the same tokens as the CPU's and one submission (Vulkan) or graph
        // launch (CUDA) per decode step; elsewhere it is refused, saying why. CTest pins
        // Vulkan to lavapipe, so it runs here wherever Mesa is installed.
        const auto devices =
            nlohmann::json::parse(run_tmmu({"devices", "--json", "-"}).out.toStdString());
        QStringList on_vulkan = args;
        on_vulkan << "--backend"
                  << "vulkan";
        Result vk = run_tmmu(on_vulkan);
        if (devices["backends"][1]["runnable"].get<bool>()) {
            QCOMPARE(vk.code, 0);
            const auto v = nlohmann::json::parse(vk.out.toStdString());
            QCOMPARE(v["backend"].get<std::string>(), std::string("vulkan"));
            QVERIFY(v["generated_ids"] == j["generated_ids"]);
            QVERIFY(v["counters"]["decode"]["total"] == j["counters"]["decode"]["total"]);
            QCOMPARE(v["counters"]["decode"]["launches"].get<int>(), 5);
            QVERIFY(v["memory"]["device_measured_bytes"].get<uint64_t>() >=
                    v["memory"]["device_planned_bytes"].get<uint64_t>());
            QCOMPARE(v["request"]["weight_precision"].get<std::string>(), std::string("f32"));
            // f16 weights: half the weight bytes, within the f16 gate of the CPU's f32.
            QStringList half = on_vulkan;
            half << "--weight-precision"
                 << "f16"
                 << "--compare-cpu";
            Result h = run_tmmu(half);
            QCOMPARE(h.code, 0);
            QVERIFY2(h.err.contains("-> passes (NMSE <= 0.001 with f16 weights"),
                     qPrintable(h.err));
            const auto hj = nlohmann::json::parse(h.out.toStdString());
            QCOMPARE(hj["request"]["weight_precision"].get<std::string>(), std::string("f16"));
            QVERIFY(hj["memory"]["weight_bytes"].get<uint64_t>() <
                    v["memory"]["weight_bytes"].get<uint64_t>() * 0.55);
        } else {
            QCOMPARE(vk.code, 2);
            QVERIFY2(vk.err.contains("'vulkan' cannot run here: "), qPrintable(vk.err));
        }
        QStringList on_gpu = args;
        on_gpu << "--backend"
               << "cuda";
        Result gpu = run_tmmu(on_gpu);
        if (devices["backends"][2]["runnable"].get<bool>()) {
            QCOMPARE(gpu.code, 0);
            const auto g = nlohmann::json::parse(gpu.out.toStdString());
            QCOMPARE(g["backend"].get<std::string>(), std::string("cuda"));
            QVERIFY(g["generated_ids"] == j["generated_ids"]);
            QVERIFY(g["counters"]["decode"]["total"] == j["counters"]["decode"]["total"]);
            QCOMPARE(g["counters"]["decode"]["launches"].get<int>(), 5); // a graph per step
        } else {
            QCOMPARE(gpu.code, 2);
            QVERIFY2(gpu.err.contains("--backend") && gpu.err.contains("'cuda' cannot run here: "),
                     qPrintable(gpu.err));
        }
        QCOMPARE(j["counters"]["decode"]["launches"].get<int>(), 0); // the CPU launches nothing
        // Options for another backend are refused, naming themselves.
        Result graph = run_tmmu({"run", config, "--no-graph"});
        QCOMPARE(graph.code, 2);
        QVERIFY2(graph.err.contains("--no-graph"), qPrintable(graph.err));
        Result cpu_half = run_tmmu({"run", config, "--weight-precision", "f16"});
        QCOMPARE(cpu_half.code, 2);
        QVERIFY2(cpu_half.err.contains("the CPU backend is the f32 reference"),
                 qPrintable(cpu_half.err));
        QCOMPARE(run_tmmu({"run", config, "--weight-precision", "f8"}).code, 2);
        Result compare = run_tmmu({"run", config, "--compare-cpu"});
        QCOMPARE(compare.code, 2);
        QVERIFY2(compare.err.contains("--compare-cpu"), qPrintable(compare.err));
        QCOMPARE(run_tmmu({"run", config, "--backend", "opencl"}).code, 2);   // no such backend
        QCOMPARE(run_tmmu({"run", config, "--prompt-ids", "5,101"}).code, 2); // vocab is 101
    }

    // A CPU run asks no GPU anything: with the Vulkan loader's debug output on, `tmmu devices`
    // shows the loader at work on stderr and `tmmu run --backend cpu` prints nothing there.
    void cpuRunsProbeNoGpu() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VK_LOADER_DEBUG", "all");
        const Result devices = tmmu::test::run_program(TMMU_CLI, {"devices"}, 120000, env);
        QCOMPARE(devices.code, 0);
        const auto j =
            nlohmann::json::parse(run_tmmu({"devices", "--json", "-"}).out.toStdString());
        if (j["backends"][1]["available"].get<bool>()) // the loader found a device
            QVERIFY2(devices.err.contains("Vulkan Loader"), qPrintable(devices.err));
        const Result run = tmmu::test::run_program(
            TMMU_CLI, {"run", "--prompt", "2", "--decode", "2"}, 120000, env);
        QCOMPARE(run.code, 0);
        QCOMPARE(run.err, QString());
    }

    // tmmu bench-run prints each figure beside the device's measured rate; a baseline that
    // is no JSON is refused naming the file.
    void benchRunMeasuresAgainstTheDevice() {
        QTemporaryDir dir;
        const QString config = write_tiny_llama(dir);
        const QStringList args{"bench-run", config,      "--backend", "cpu",     "--decode",
                               "6",         "--prefill", "16",        "--batch", "2"};
        Result r = run_tmmu(args);
        QCOMPARE(r.code, 0);
        for (const char* line : {"device    copy ", "decode    batch 1: ", "% of copy",
                                 "batch     batch 2: ", "x batch 1", "prefill   16 tokens: "})
            QVERIFY2(r.out.contains(line), qPrintable(r.out));
        const QString bad = dir.filePath("baseline.json");
        write(bad, "{not json");
        Result refused = run_tmmu(QStringList(args) << "--baseline" << bad);
        QCOMPARE(refused.code, 2);
        QVERIFY2(refused.err.contains(bad), qPrintable(refused.err));

        QVERIFY2(!r.out.contains("timed per instruction"), qPrintable(r.out)); // CPU: no timer

        // On Vulkan (lavapipe here): the device's own copy and matrix rates, where a token's
        // device time goes, one submission per token, and the anti-regression gate: a
        // baseline below 1/1.1 of that fails.
        const auto devices =
            nlohmann::json::parse(run_tmmu({"devices", "--json", "-"}).out.toStdString());
        if (!devices["backends"][1]["runnable"].get<bool>()) return;
        QStringList on_vulkan = args;
        on_vulkan[3] = "vulkan";
        Result vk = run_tmmu(on_vulkan);
        QCOMPARE(vk.code, 0);
        for (const char* line :
             {"256 MiB device-to-device copy", "matrix kernel ", "launches  submit: 1 per token",
              "timed per instruction: ", "device ms per token: ", "swiglu "})
            QVERIFY2(vk.out.contains(line), qPrintable(vk.out));
        const QString tight = dir.filePath("tight.json");
        write(tight, R"({"vulkan": {"tiny-llama": {"submit": 0.5}}})");
        Result above = run_tmmu(QStringList(on_vulkan) << "--baseline" << tight);
        QCOMPARE(above.code, 1);
        QVERIFY2(above.out.contains("submit: 1 per token (baseline 0.5: ABOVE 1.1x)"),
                 qPrintable(above.out));
    }

    // A recorded run is listed, shown and replayed step by step to the same logits.
    void runsAreRecordedAndReplayed() {
        QTemporaryDir dir;
        const QString config = dir.filePath("tiny-gpt2.json"), db = dir.filePath("s.db");
        write(config, R"({"model_type":"gpt2","n_embd":32,"n_layer":1,"n_head":2,
            "vocab_size":41,"n_positions":32})");
        Result r = run_tmmu({"run", config, "--prompt", "3", "--decode", "4", "--counters",
                             "--record", "--title", "first", "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("recorded run 1 in "), qPrintable(r.out));
        Result list = run_tmmu({"session", "runs", "--sessions", db});
        QCOMPARE(list.code, 0);
        QVERIFY2(list.out.contains("cpu") && list.out.contains("first"), qPrintable(list.out));
        Result show = run_tmmu({"session", "run", "1", "--sessions", db});
        QCOMPARE(show.code, 0);
        QVERIFY2(show.out.contains("integrity  ok") && show.out.contains("dispatches prefill"),
                 qPrintable(show.out));
        Result replay = run_tmmu({"session", "replay-run", "1", "--sessions", db});
        QCOMPARE(replay.code, 0);
        QVERIFY2(replay.out.contains("identical: 4 steps"), qPrintable(replay.out));
        QCOMPARE(run_tmmu({"session", "replay-run", "7", "--sessions", db}).code, 2);
        QCOMPARE(run_tmmu({"run", config, "--title", "no record"}).code, 2);
    }

    void corruptCheckpointIsRejected() {
        QTemporaryDir dir;
        QString ckpt = dir.filePath("plan.cbor");
        QCOMPARE(run_tmmu({"plan", resource("models/examples/residual_blocks.json"), "--checkpoint",
                           ckpt})
                     .code,
                 0);
        QFile f(ckpt);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray bytes = f.readAll();
        f.close();
        bytes.chop(7);
        write(ckpt, bytes);
        Result v = run_tmmu({"validate", ckpt});
        QCOMPARE(v.code, 18);
        QVERIFY2(v.err.startsWith("tmmu: CORRUPT_CHECKPOINT at "), qPrintable(v.err));
    }
    void csvProblemsPlanWithEveryStrategy() {
        QTemporaryDir dir;
        QString csv = dir.filePath("p.csv");
        write(csv, "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n");
        for (const char* s : {"slots", "ffd", "greedy-size", "best-fit", "multi-order", "auto"}) {
            Result r = run_tmmu({"plan", csv, "--strategy", s, "--json", "-"});
            QCOMPARE(r.code, 0);
            QJsonObject arena = QJsonDocument::fromJson(r.out.toUtf8())["arenas"][0].toObject();
            QCOMPARE(arena["lower_bound"].toInt(), 12);
            QVERIFY(arena["peak_bytes"].toInt() >= 12);
        }
    }
    // 500 buffers one after another over the same bytes: every pair shares them (124,750), and
    // the JSON lists the first 100,000 with the whole count.
    void sharingPairsListIsBounded() {
        QTemporaryDir dir;
        QString csv = dir.filePath("p.csv");
        QString text = "id,lower,upper,size\n";
        for (int i = 0; i < 500; ++i)
            text += QString("b%1,%1,%2,64\n").arg(i).arg(i + 1);
        write(csv, text.toUtf8());
        Result r = run_tmmu({"plan", csv, "--tensors", "--json", "-"});
        QCOMPARE(r.code, 0);
        const QJsonObject listed =
            QJsonDocument::fromJson(r.out.toUtf8())["sharing_pairs"]["arena"].toObject();
        QCOMPARE(listed["count"].toInteger(), 124750);
        QCOMPARE(listed["pairs"].toArray().size(), 100000);
    }
    // CSV problems take the options that apply to their one arena and refuse the others, by the
    // same rules as the studio (app/common).
    void csvOptionsApplyOrAreRefused() {
        QTemporaryDir dir;
        QString csv = dir.filePath("p.csv");
        write(csv, "id,lower,upper,size\nb1,0,3,40\nb2,1,9,40\nb3,0,9,40\n");
        auto arena = [](const Result& r) {
            return QJsonDocument::fromJson(r.out.toUtf8())["arenas"][0].toObject();
        };
        Result packed = run_tmmu({"plan", csv, "--json", "-"});
        QCOMPARE(packed.code, 0);
        QCOMPARE(arena(packed)["alignment"].toInt(), 1);
        QCOMPARE(arena(packed)["peak_bytes"].toInt(), 120);
        Result aligned = run_tmmu({"plan", csv, "--align", "64", "--json", "-"});
        QCOMPARE(aligned.code, 0);
        QCOMPARE(arena(aligned)["alignment"].toInt(), 64);
        QCOMPARE(arena(aligned)["peak_bytes"].toInt(), 168); // 0, 64 and 128 plus 40
        // Above the lower bound (120) by the padding no plan avoids, which the summary says.
        const Result text = run_tmmu({"plan", csv, "--align", "64"});
        QVERIFY2(text.out.contains("aligned    arena: no plan is below 168 B once its buffers are "
                                   "aligned (the lower bound counts no padding); this plan is at "
                                   "it\n"),
                 qPrintable(text.out));
        QVERIFY(!run_tmmu({"plan", csv}).out.contains("aligned "));
        Result capped = run_tmmu({"plan", csv, "--arena", "arena=1KiB", "--json", "-"});
        QCOMPARE(capped.code, 0);
        QCOMPARE(arena(capped)["alignment"].toInt(), 1); // a capacity leaves alignment alone
        Result routed = run_tmmu({"plan", csv, "--route", "workspace=scratch"});
        QCOMPARE(routed.code, 2);
        QVERIFY2(routed.err.contains("routes apply to model graphs"), qPrintable(routed.err));
        Result zero = run_tmmu({"plan", csv, "--align", "0"});
        QCOMPARE(zero.code, 2);
        QVERIFY(zero.err.contains("--align"));
    }
    // --help and --version need no display, and usage errors exit 2 before one is opened.
    void studioAnswersWithoutADisplay() {
        if (QString(TMMU_STUDIO).isEmpty()) QSKIP("built without the GUI (TMMU_BUILD_GUI=OFF)");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        env.remove("QT_QPA_PLATFORM");
        auto studio = [&](const QStringList& args) {
            return tmmu::test::run_program(TMMU_STUDIO, args, 60000, env);
        };
        Result help = studio({"--help"});
        QCOMPARE(help.code, 0);
        QVERIFY2(help.out.startsWith("usage: tmmu-studio"), qPrintable(help.out));
        QVERIFY(help.out.contains("--open-session"));
        Result version = studio({"--version"});
        QCOMPARE(version.code, 0);
        QVERIFY(version.out.startsWith("tmmu-studio "));
        Result bad = studio({"--batch", "0"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("INVALID_ARGUMENT at --batch"), qPrintable(bad.err));
    }
    void failuresPrintOneLineWithCodeAndPlace() {
        QTemporaryDir dir;
        QString cyclic = dir.filePath("cycle.json");
        write(cyclic, R"({"format":"tmmu-ir","version":1,"tensors":[
            {"id":"a","shape":[4],"dtype":"f32","role":"activation"},
            {"id":"b","shape":[4],"dtype":"f32","role":"activation"}],
            "nodes":[{"id":"n1","opcode":"relu","inputs":["b"],"outputs":["a"]},
                     {"id":"n2","opcode":"relu","inputs":["a"],"outputs":["b"]}]})");
        Result r = run_tmmu({"plan", cyclic});
        QCOMPARE(r.code, 11);
        QVERIFY2(r.err.startsWith("tmmu: LIVENESS_CYCLE at "), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(r.out.isEmpty());

        Result small = run_tmmu({"plan", resource("models/examples/residual_blocks.json"),
                                 "--arena", "activations=1KiB"});
        QCOMPARE(small.code, 14);
        QVERIFY2(small.err.contains("ARENA_TOO_SMALL") && small.err.contains("activations"),
                 qPrintable(small.err));
        // The failed run's trace: its failure record alone, the same exit status and message.
        const QString failed_trace = dir.filePath("failed.jsonl");
        Result traced = run_tmmu({"plan", resource("models/examples/residual_blocks.json"),
                                  "--arena", "activations=1KiB", "--trace", failed_trace});
        QCOMPARE(traced.code, 14);
        QCOMPARE(traced.err, small.err);
        const auto text = tmmu::test::read_file(failed_trace.toStdString());
        QVERIFY(text && std::count(text->begin(), text->end(), '\n') == 1);
        const auto record = nlohmann::json::parse(*text);
        const auto text_of = [&](const char* key) { return record.at(key).get<std::string>(); };
        QCOMPARE(text_of("record"), "failure");
        QCOMPARE(text_of("failure_code"), "ARENA_TOO_SMALL");
        QCOMPARE(text_of("failure_operator"), "UML_OS.TMMU.MapToVirtualAddresses_v1");
        QVERIFY(record.at("t").is_number_unsigned());
        const uint64_t step = record.at("t");
        QVERIFY2(small.err.contains(QString("first at time step ") + QString::number(step) + ","),
                 qPrintable(small.err));
        QCOMPARE(text_of("where"), "arena 'activations'");
        // A planned run whose --json cannot be written has failed too: its trace says so
        // (IO_ERROR, outside any planning operator) rather than describing the plan.
        Result unwritten =
            run_tmmu({"plan", resource("models/examples/residual_blocks.json"), "--json",
                      dir.filePath("no/such/dir/plan.json"), "--trace", failed_trace});
        QCOMPARE(unwritten.code, 16);
        const auto io = nlohmann::json::parse(*tmmu::test::read_file(failed_trace.toStdString()));
        QCOMPARE(io.at("failure_code").get<std::string>(), "IO_ERROR");
        QVERIFY(io.at("failure_operator").is_null());
        QVERIFY(io.at("t").is_null());

        Result missing = run_tmmu({"plan", dir.filePath("nope.json")});
        QCOMPARE(missing.code, 16);
        QVERIFY(missing.err.contains("nope.json"));

        Result usage = run_tmmu({"plan", "--strateg", "slots"});
        QCOMPARE(usage.code, 2);
        QVERIFY(usage.err.contains("--strateg"));

        Result badsize = run_tmmu({"plan", "--arena", "activations=lots"});
        QCOMPARE(badsize.code, 2);
        QVERIFY(badsize.err.contains("lots"));
    }
    void routeMovesRolesBetweenArenas() {
        Result r =
            run_tmmu({"plan", "--batch", "1", "--seq", "64", "--route", "gradient=activations",
                      "--route", "optimizer_state=parameters", "--json", "-"});
        QCOMPARE(r.code, 0);
        QStringList names;
        for (const auto& a : QJsonDocument::fromJson(r.out.toUtf8())["arenas"].toArray())
            names << a.toObject()["name"].toString();
        QCOMPARE(names, QStringList({"parameters", "activations"}));
        Result unused = run_tmmu({"plan", "--arena", "scratch=1GiB"});
        QCOMPARE(unused.code, 2);
        QVERIFY(unused.err.contains("scratch"));
        Result twice = run_tmmu({"plan", "--mode", "inference", "--mode", "training"});
        QCOMPARE(twice.code, 2);
        QVERIFY(twice.err.contains("more than once"));
    }
    // --arena NAME=CAPACITY:ALIGNMENT (seed 000 I.B): an arena's alignment overrides --align
    // there, and every tensor in it is placed on it.
    void arenasTakeTheirOwnAlignment() {
        Result r = run_tmmu({"plan", "--batch", "1", "--seq", "64", "--align", "64", "--arena",
                             "parameters=:4KiB", "--arena", "activations=1GiB:256", "--json", "-",
                             "--tensors"});
        QCOMPARE(r.code, 0);
        const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8());
        QMap<QString, qint64> alignment;
        for (const auto& a : doc["arenas"].toArray())
            alignment[a.toObject()["name"].toString()] = a.toObject()["alignment"].toInteger();
        QCOMPARE(
            alignment,
            (QMap<QString, qint64>{
                {"parameters", 4096}, {"activations", 256}, {"gradients", 64}, {"optimizer", 64}}));
        QCOMPARE(doc["arenas"][1]["capacity"].toInteger(), qint64(1) << 30);
        QVERIFY(doc["arenas"][0]["capacity"].isNull());
        int parameters = 0;
        for (const auto& t : doc["tensors"].toArray()) {
            const QJsonObject o = t.toObject();
            const qint64 a = alignment[o["arena"].toString()];
            QVERIFY2(o["offset"].toInteger() % a == 0, qPrintable(o["id"].toString()));
            parameters += o["arena"].toString() == "parameters";
        }
        QVERIFY(parameters > 100);
        Result odd = run_tmmu({"plan", "--arena", "activations=8GiB:48"});
        QCOMPARE(odd.code, 15);
        QVERIFY2(odd.err.contains("ALIGNMENT_VIOLATION at --arena activations"),
                 qPrintable(odd.err));
        Result twice =
            run_tmmu({"plan", "--arena", "activations=8GiB", "--arena", "activations=:256"});
        QCOMPARE(twice.code, 2);
        QVERIFY2(twice.err.contains("given twice"), qPrintable(twice.err));
    }
    // Seed 000 II.I: a plan for one rank, its sharded roles cut to a quarter, the parameters
    // gathered whole before their readers, and the rank named in every output.
    void shardingPlansOneRank() {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath("rank1.ckpt"), trace = dir.filePath("rank1.jsonl");
        const QStringList model{"plan", "--batch", "1", "--seq", "64", "--json", "-"};
        Result whole = run_tmmu(model);
        Result rank = run_tmmu(model + QStringList{"--world-size", "4", "--rank", "1", "--shard",
                                                   "optimizer_state,parameter", "--tensors",
                                                   "--checkpoint", ckpt, "--trace", trace});
        QCOMPARE(whole.code, 0);
        QCOMPARE(rank.code, 0);
        const QJsonDocument a = QJsonDocument::fromJson(whole.out.toUtf8());
        const QJsonDocument b = QJsonDocument::fromJson(rank.out.toUtf8());
        QVERIFY(a["shard"].isUndefined());
        QCOMPARE(b["shard"]["rank"].toInt(), 1);
        QCOMPARE(b["shard"]["world_size"].toInt(), 4);
        QCOMPARE(b["shard"]["roles"].toArray(), QJsonArray({"parameter", "optimizer_state"}));
        QCOMPARE(b["ir_hash"], a["ir_hash"]);
        QVERIFY(b["plan_hash"] != a["plan_hash"]);
        // A quarter of each sharded arena, give or take each buffer's alignment padding.
        for (int arena : {0, 3}) {
            const qint64 full = a["arenas"][arena]["peak_bytes"].toInteger();
            const qint64 quarter = b["arenas"][arena]["peak_bytes"].toInteger();
            QVERIFY2(quarter >= full / 4 && quarter <= full / 4 + 296 * 128,
                     qPrintable(QString("%1 of %2").arg(quarter).arg(full)));
        }
        QCOMPARE(b["arenas"][2]["peak_bytes"], a["arenas"][2]["peak_bytes"]); // gradients
        int gathered = 0;
        for (const auto& t : b["tensors"].toArray())
            if (t.toObject()["id"].toString().contains("@gathered:")) {
                QCOMPARE(t.toObject()["role"].toString(), QString("workspace"));
                ++gathered;
            }
        QVERIFY2(gathered > 148, qPrintable(QString::number(gathered))); // forward and backward
        // ZeRO-2: each of the 148 parameter gradients reduce-scattered into a shard the
        // optimizer reads; the activation gradients stay whole.
        Result zero2 =
            run_tmmu(model + QStringList{"--world-size", "4", "--shard", "gradient", "--tensors"});
        QCOMPARE(zero2.code, 0);
        const QJsonDocument c = QJsonDocument::fromJson(zero2.out.toUtf8());
        QVERIFY(c["arenas"][2]["peak_bytes"].toInteger() <
                a["arenas"][2]["peak_bytes"].toInteger());
        QCOMPARE(c["arenas"][0]["peak_bytes"], a["arenas"][0]["peak_bytes"]); // parameters
        int shards = 0;
        for (const auto& t : c["tensors"].toArray())
            shards += t.toObject()["id"].toString().endsWith("@shard") &&
                      t.toObject()["role"].toString() == "gradient";
        QCOMPARE(shards, 148);
        Result summary = run_tmmu({"plan", "--batch", "1", "--seq", "64", "--world-size", "4",
                                   "--rank", "1", "--shard", "parameter,optimizer_state"});
        QVERIFY2(summary.out.contains(
                     "shard      rank 1 of 4, sharding parameter and optimizer_state\n"),
                 qPrintable(summary.out));
        Result v = run_tmmu({"validate", ckpt});
        QCOMPARE(v.code, 0);
        QVERIFY2(v.out.contains(b["plan_hash"].toString()), qPrintable(v.out));
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QJsonDocument header = QJsonDocument::fromJson(t.readLine());
        QCOMPARE(header["shard"].toObject(), b["shard"].toObject());
        const auto refused = [](const QStringList& args, const char* says) {
            Result r = run_tmmu(QStringList{"plan"} + args);
            QVERIFY2(r.code == 2 && r.err.contains(says), qPrintable(r.err));
        };
        refused({"--world-size", "4", "--rank", "4"},
                "INVALID_ARGUMENT at --rank: rank 4 is outside a world of 4 (ranks 0 to 3)");
        refused({"--world-size", "4", "--shard", "workspace"},
                "'workspace' is not a role that can be sharded");
        refused({"--shard", "parameter"}, "sharding over a single rank changes nothing");
        refused({"--world-size", "0"}, "--world-size");
        refused({TMMU_DSA_DIR "/minimalloc/A.1048576.csv", "--world-size", "2"},
                "INVALID_ARGUMENT at --world-size: offset-assignment problems have no roles");
        refused({TMMU_DSA_DIR "/minimalloc/A.1048576.csv", "--rank", "1"},
                "INVALID_ARGUMENT at --rank");
    }
    void dynamicShapesBindAndReplanOverIterations() {
        QTemporaryDir dir;
        const QString model = resource("models/examples/dynamic_seq.json");
        const QString ckpt = dir.filePath("last.ckpt"), trace = dir.filePath("run.jsonl");
        Result bound = run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=512", "--dim",
                                 "batch=2", "--json", "-"});
        QCOMPARE(bound.code, 0);
        const QJsonDocument at512 = QJsonDocument::fromJson(bound.out.toUtf8());
        QCOMPARE(at512["dims"].toObject(), QJsonObject({{"batch", 2}, {"seq", 512}}));
        Result run = run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=128",
                               "--iteration", "seq=64", "--iteration", "seq=512,batch=2",
                               "--iteration", "seq=256", "--trace", trace, "--checkpoint", ckpt});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.contains("iterations replan_policy REPLAN_AT_SAFEPOINT, replan key "),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains("; first plan at batch=1, seq=128: "), qPrintable(run.out));
        const QStringList rows = run.out.split('\n').filter(QRegularExpression("^ +[0-9]+  "));
        QCOMPARE(rows.size(), 3);
        QVERIFY2(rows[0].contains("seq=64") && rows[0].contains(" fits "), qPrintable(rows[0]));
        const QString last = at512["plan_hash"].toString();
        QVERIFY2(rows[1].contains(" replanned  " + last.left(16)) &&
                     rows[1].contains("planned at batch=2, seq=512)"),
                 qPrintable(rows[1]));
        QVERIFY2(rows[2].contains(" fits       " + last.left(16)), qPrintable(rows[2]));
        QVERIFY2(run.out.contains("dims       batch=2 of [1, 8], seq=512 of [1, 2048]; "
                                  "replan_policy REPLAN_AT_SAFEPOINT\n"),
                 qPrintable(run.out));
        QCOMPARE(hash_line(run.out, "plan hash"), last);
        // The checkpoint holds the last plan; the trace ends in the replan record.
        Result v = run_tmmu({"validate", ckpt});
        QVERIFY2(v.code == 0 && v.out.contains(last), qPrintable(v.out + v.err));
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = t.readAll().trimmed().split('\n');
        const QJsonDocument replan = QJsonDocument::fromJson(lines.last());
        QCOMPARE(replan["record"].toString(), QString("replan"));
        QCOMPARE(replan["iteration"].toInt(), 1);
        QCOMPARE(replan["new_plan_hash"].toString(), last);
        const QString key = replan["replan_key"].toString();
        QCOMPARE(key.size(), 64);
        QVERIFY2(run.out.contains("replan key " + key.left(16) + ";"), qPrintable(run.out));
        QCOMPARE(QJsonDocument::fromJson(lines.first())["dims"].toObject(),
                 QJsonObject({{"batch", 2}, {"seq", 512}}));

        // --json lists the iterations beside the last plan.
        Result json =
            run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=128", "--iteration",
                      "seq=64", "--iteration", "seq=512,batch=2", "--json", "-"});
        QCOMPARE(json.code, 0);
        const QJsonDocument j = QJsonDocument::fromJson(json.out.toUtf8());
        QCOMPARE(j["plan_hash"].toString(), last);
        const QJsonArray its = j["iterations"].toArray();
        QCOMPARE(its.size(), 2);
        QCOMPARE(its[0]["replanned"].toBool(), false);
        QVERIFY(its[0]["old_plan_hash"].isUndefined());
        QCOMPARE(its[1]["replanned"].toBool(), true);
        QCOMPARE(its[1]["old_plan_hash"], its[0]["plan_hash"]);
        QCOMPARE(its[1]["plan_hash"].toString(), last);
        QCOMPARE(its[1]["dims"].toObject(), QJsonObject({{"batch", 2}, {"seq", 512}}));
        QCOMPARE(its[0]["plan_dims"].toObject(), QJsonObject({{"batch", 1}, {"seq", 128}}));
        QCOMPARE(its[1]["peak_bytes"].toInteger(), j["totals"]["peak_bytes"].toInteger());
        // One model, mode and arena config: one replan key, whatever the binding.
        QCOMPARE(its[0]["replan_key"].toString(), key);
        QCOMPARE(its[1]["replan_key"].toString(), key);
        QVERIFY(at512["iterations"].isUndefined());

        // Refusals: outside the envelope (exit 29), unknown names, fixed models.
        Result outside = run_tmmu({"plan", model, "--iteration", "seq=4096"});
        QCOMPARE(outside.code, 29);
        QVERIFY2(outside.err.contains("SHAPE_ENVELOPE_VIOLATION at --iteration 0: seq=4096 is "
                                      "outside the model's shape envelope [1, 2048]"),
                 qPrintable(outside.err));
        // A run that fails after a replan keeps that replan's record before the failure record.
        const QString failed = dir.filePath("failed.jsonl");
        Result later =
            run_tmmu({"plan", model, "--mode", "inference", "--dim", "seq=128", "--iteration",
                      "seq=512,batch=2", "--iteration", "seq=4096", "--trace", failed});
        QCOMPARE(later.code, 29);
        QFile f(failed);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> kept = f.readAll().trimmed().split('\n');
        QCOMPARE(kept.size(), 2);
        QCOMPARE(QJsonDocument::fromJson(kept[0])["record"].toString(), QString("replan"));
        QCOMPARE(QJsonDocument::fromJson(kept[0])["new_plan_hash"].toString(), last);
        QCOMPARE(QJsonDocument::fromJson(kept[1])["record"].toString(), QString("failure"));
        QCOMPARE(QJsonDocument::fromJson(kept[1])["where"].toString(), QString("--iteration 1"));
        Result unknown = run_tmmu({"plan", model, "--dim", "heads=2"});
        QCOMPARE(unknown.code, 2);
        QVERIFY2(unknown.err.contains("no dynamic dimension 'heads'; it declares batch, seq"),
                 qPrintable(unknown.err));
        Result fixed = run_tmmu(
            {"plan", resource("models/examples/linear_chain.json"), "--iteration", "seq=2"});
        QCOMPARE(fixed.code, 2);
        QVERIFY2(fixed.err.contains("INVALID_ARGUMENT at --iteration: applies to IR graphs with a "
                                    "shape_envelope, transformer configs and ONNX models"),
                 qPrintable(fixed.err));
        // A config's batch and seq are dynamic for a run over iterations: batch up to the
        // largest asked for, seq up to the model's positions.
        Result config =
            run_tmmu({"plan", "--mode", "inference", "--batch", "1", "--seq", "64", "--iteration",
                      "seq=32", "--iteration", "batch=3,seq=128", "--json", "-"});
        QVERIFY2(config.code == 0, qPrintable(config.err));
        const QJsonObject cj = QJsonDocument::fromJson(config.out.toUtf8()).object();
        const QJsonArray runs = cj["iterations"].toArray();
        QCOMPARE(runs.size(), 2);
        QVERIFY(!runs[0]["replanned"].toBool());
        QVERIFY(runs[1]["replanned"].toBool());
        QCOMPARE(runs[1]["plan_dims"].toObject(), QJsonObject({{"batch", 3}, {"seq", 128}}));
        Result beyond = run_tmmu({"plan", "--mode", "inference", "--batch", "1", "--seq", "64",
                                  "--iteration", "seq=1025"});
        QVERIFY2(beyond.code == 29 && beyond.err.contains("seq=1025 is outside the model's shape "
                                                          "envelope [1, 1024]"),
                 qPrintable(beyond.err));
        Result fixedDim =
            run_tmmu({"plan", resource("models/examples/linear_chain.json"), "--dim", "seq=2"});
        QVERIFY2(fixedDim.code == 2 && fixedDim.err.contains("(this model's shapes are fixed)"),
                 qPrintable(fixedDim.err));
        Result configDim = run_tmmu({"plan", "--dim", "batch=2"});
        QVERIFY2(configDim.code == 2 && configDim.err.contains("a transformer config's shapes "
                                                               "are --batch and --seq"),
                 qPrintable(configDim.err));
        // Batches the options name: 2^31 is more than a dynamic dimension holds, 2^41 more
        // than the graph builder takes.
        Result wide = run_tmmu({"plan", "--batch", "2147483648", "--iteration", "batch=1"});
        QVERIFY2(wide.code == 2 && wide.err.contains("INVALID_ARGUMENT at --batch: 2147483648 is "
                                                     "more than a batch that --iteration varies"),
                 qPrintable(wide.err));
        // On other models --batch is refused for what they are, however large.
        Result wideIr = run_tmmu({"plan", resource("models/examples/dynamic_seq.json"), "--batch",
                                  "2147483648", "--iteration", "seq=4"});
        QVERIFY2(wideIr.code == 2 &&
                     wideIr.err.contains("INVALID_ARGUMENT at --batch: applies to transformer "
                                         "configs only (this model is an IR graph with a "
                                         "shape_envelope: --dim binds its dimensions)"),
                 qPrintable(wideIr.err));
        Result fixedBatch =
            run_tmmu({"plan", resource("models/examples/linear_chain.json"), "--batch", "4"});
        QVERIFY2(fixedBatch.code == 2 && fixedBatch.err.contains("an IR graph, whose shapes are "
                                                                 "fixed)"),
                 qPrintable(fixedBatch.err));
        Result huge = run_tmmu({"plan", "--batch", "2199023255553"});
        QVERIFY2(huge.code == 2 && huge.err.contains("INVALID_ARGUMENT at --batch: 2199023255553 "
                                                     "is more than a transformer graph takes"),
                 qPrintable(huge.err));
        // A rank of a config run over iterations is sharded again at each replan's shapes.
        Result sharded =
            run_tmmu({"plan", "--mode", "inference", "--batch", "1", "--seq", "8", "--iteration",
                      "batch=2,seq=8", "--shard", "parameter,activation", "--world-size", "2"});
        QVERIFY2(sharded.code == 0 && sharded.out.contains("replanned") &&
                     sharded.out.contains("shard      rank 0 of 2"),
                 qPrintable(sharded.err));
        Result twice = run_tmmu({"plan", model, "--iteration", "seq=2,seq=3"});
        QVERIFY2(twice.code == 2 && twice.err.contains("names seq twice"), qPrintable(twice.err));
    }
    void everyCommandHasHelp() {
        const char* const commands[] = {"plan",       "validate",  "gen",     "bench",
                                        "strategies", "session",   "export",  "compile",
                                        "run",        "bench-run", "devices", "lazy"};
        Result top = run_tmmu({"--help"});
        QCOMPARE(top.code, 0);
        QVERIFY(top.out.contains("commands:"));
        for (const char* cmd : commands) {
            Result r = run_tmmu({cmd, "--help"});
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.startsWith(QString("usage: tmmu ") + cmd), cmd);
            // The top-level usage lists every command (each at the start of a line).
            QVERIFY2(top.out.contains(QString("\n  ") + cmd + " "), cmd);
        }
        for (const char* sub :
             {"list", "show", "replay", "edit", "delete", "diff", "runs", "run", "replay-run"})
            QVERIFY2(top.out.contains(QString("|") + sub) ||
                         top.out.contains(QString(" ") + sub + "|"),
                     sub);
        QVERIFY(top.out.contains("--version"));
        QCOMPARE(run_tmmu({}).code, 2);
    }
    // `tmmu devices` is an inventory: exit 0 whatever it finds; cpu always runs; a GPU backend
    // that cannot run says why, in words; standard output is the JSON alone.
    void devicesListsEveryBackendAndWhyOneCannotRun() {
        Result r = run_tmmu({"devices", "--json", "-"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString()); // throws on anything else
        QCOMPARE(j["format"].get<std::string>(), std::string("tmmu-devices"));
        QCOMPARE(j["version"].get<int>(), 1);
        const auto& backends = j["backends"];
        QCOMPARE(backends.size(), size_t(3));
        const char* names[] = {"cpu", "vulkan", "cuda"};
        for (size_t i = 0; i < 3; ++i) {
            const auto& b = backends[i];
            QCOMPARE(b["name"].get<std::string>(), std::string(names[i]));
            for (const char* key : {"label", "built", "available", "runnable", "version", "devices",
                                    "unavailable_reason", "not_runnable_reason"})
                QVERIFY2(b.contains(key), key);
            const bool built = b["built"].get<bool>(), available = b["available"].get<bool>(),
                       runnable = b["runnable"].get<bool>();
            QVERIFY(!runnable || available);
            QVERIFY(!available || built);
            QCOMPARE(b["unavailable_reason"].is_null(), available);
            QCOMPARE(b["not_runnable_reason"].is_null(), runnable);
            if (!built)
                QVERIFY(b["unavailable_reason"].get<std::string>().starts_with("not built: "));
            if (available) QVERIFY(!b["devices"].empty());
            for (const auto& d : b["devices"]) {
                QVERIFY(!d["name"].get<std::string>().empty());
                QVERIFY(!d["type"].get<std::string>().empty());
                QVERIFY(d["memory_bytes"].is_number_unsigned());
                QVERIFY(
                    d["description"].get<std::string>().starts_with(d["name"].get<std::string>()));
            }
        }
        const auto& cpu = backends[0];
        QVERIFY(cpu["built"].get<bool>() && cpu["available"].get<bool>() &&
                cpu["runnable"].get<bool>());
        QCOMPARE(cpu["devices"].size(), size_t(1));
        QVERIFY(cpu["devices"][0]["memory_bytes"].get<uint64_t>() > 0);
        // The GPU backends' adapters cover every opcode: each runs wherever it has a device,
        // else says why there is none.
        for (int gpu : {1, 2}) {
            QVERIFY(backends[gpu]["runnable"] == backends[gpu]["available"]);
            QVERIFY(backends[gpu]["not_runnable_reason"] == backends[gpu]["unavailable_reason"]);
        }
        // CTest pins Vulkan to lavapipe: with Mesa's driver installed a Vulkan build finds it.
        const auto& vulkan = backends[1];
        if (vulkan["built"].get<bool>() && qEnvironmentVariableIsSet("VK_DRIVER_FILES") &&
            QFile::exists(qEnvironmentVariable("VK_DRIVER_FILES"))) {
            QVERIFY2(vulkan["available"].get<bool>() && vulkan["runnable"].get<bool>(),
                     vulkan.dump().c_str());
            QCOMPARE(vulkan["devices"][0]["type"].get<std::string>(), std::string("cpu"));
        }
        // The text form says the same, one backend per line, and also exits 0.
        Result text = run_tmmu({"devices"});
        QCOMPARE(text.code, 0);
        for (const char* name : names)
            QVERIFY2(text.out.contains(QString("\n%1 ").arg(name)) || text.out.startsWith(name),
                     qPrintable(text.out));
        QVERIFY(text.out.startsWith("cpu     built, available, runnable\n"));
        QCOMPARE(run_tmmu({"devices", "extra"}).code, 2);
    }
    void benchRunsOnASmallScale() {
        QStringList args{"bench", "--data", TMMU_DSA_DIR, "--max-buffers", "1000", "--json", "-"};
        // optimal's node budget on the instances is most of the run: a tenth under ASan.
        if (tmmu::test::kSanitized) args.append({"--budget", "40000"});
        Result r = run_tmmu(args);
        QCOMPARE(r.code, 0);
        // Standard output is the report alone; the tables step aside to standard error.
        QJsonParseError error;
        QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(r.err.contains("== scaling on realistic random problems"));
        QCOMPARE(report["scaling"].toArray().size(), 2); // 500 and 1000 buffers
        QVERIFY(r.err.contains("== dense random problems"));
        QCOMPARE(report["dense"].toArray().size(), 0); // 20000 and more: none
        QCOMPARE(report["graphs"].toArray().size(), 3);
        TMMU_REQUIRE_DATA(QDir(TMMU_DSA_DIR).exists(), "the DSA instances at " TMMU_DSA_DIR);
        QVERIFY(report["instances"].toArray().size() >= 12);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
