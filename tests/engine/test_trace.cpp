#include "core/failure.h"
#include "io/plan_hash.h"
#include "io/plan_json.h"
#include "io/sha256.h"
#include "io/trace.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <sstream>

using namespace tmmu;
using ordered_json = nlohmann::ordered_json;

namespace {

// Two arenas, six tensors, one of them a view: small enough to check by hand.
//   parameters (cap 1 MiB, align 128): w1 [0,4) 256 B @0 slot 0; w2 [0,4) 100 B @256 slot 1
//   activations (cap 4096, align 64):  a [0,2) 512 B @0 slot 0, a.view = a + 128 (64 B);
//                                      b [1,3) 256 B @512 slot 1; c [2,4) 512 B @0 slot 0
Plan sample_plan() {
    Plan p;
    p.source = "sample.json";
    p.mode = Mode::Training;
    p.strategy = "auto";
    p.ir_hash = sha256(std::string_view("sample-ir"));
    for (size_t i = 0; i < p.replay_token.size(); ++i)
        p.replay_token[i] = static_cast<uint8_t>(i);
    p.execution_order = {"n0", "n1", "n2", "n3"};
    ArenaPlan params;
    params.config = {"parameters", 1u << 20, 128};
    params.problem.capacity = params.config.capacity;
    params.problem.buffers = {{0, 4, 256, 128, std::nullopt}, {0, 4, 100, 128, std::nullopt}};
    params.buffer_names = {"w1", "w2"};
    params.solution = {{0, 256}, 356};
    params.slot_of_buffer = {0, 1};
    params.strategy = params.solution.producer = "best-fit";
    params.metrics = {356, 356, 2, 2, 2, 2, 1.0, 0.0, 0.0, 1234};
    ArenaPlan acts;
    acts.config = {"activations", 4096, 64};
    acts.problem.capacity = acts.config.capacity;
    acts.problem.buffers = {
        {0, 2, 512, 64, std::nullopt}, {1, 3, 256, 64, std::nullopt}, {2, 4, 512, 64, 0}};
    acts.buffer_names = {"a", "b", "c"};
    acts.solution = {{0, 512, 0}, 768};
    acts.slot_of_buffer = {0, 1, 0};
    acts.strategy = acts.solution.producer = "greedy-size";
    acts.metrics = {768, 768, 2, 2, 3, 4, 1.0, 0.5, 0.0, 5678};
    p.arenas = {params, acts};
    auto t = [](std::string id, Role role, uint32_t arena, uint32_t buffer, uint32_t slot,
                uint64_t offset, uint64_t size, uint64_t align, uint32_t b, uint32_t e) {
        PlannedTensor x;
        x.id = id;
        x.name = id + " (display)";
        x.role = role;
        x.arena = arena;
        x.buffer = buffer;
        x.slot = slot;
        x.offset = offset;
        x.size = size;
        x.alignment = align;
        x.life = {b, e};
        return x;
    };
    p.tensors = {t("a", Role::Activation, 1, 0, 0, 0, 512, 64, 0, 2),
                 t("a.view", Role::Activation, 1, 0, 0, 128, 64, 64, 0, 2),
                 t("b", Role::Activation, 1, 1, 1, 512, 256, 64, 1, 3),
                 t("c", Role::Output, 1, 2, 0, 0, 512, 64, 2, 4),
                 t("w1", Role::Parameter, 0, 0, 0, 0, 256, 128, 0, 4),
                 t("w2", Role::Parameter, 0, 1, 1, 256, 100, 128, 0, 4)};
    p.series.times = {0, 1, 2, 3};
    p.series.live_bytes = {{356, 356, 356, 356}, {512, 768, 768, 512}};
    p.series.high_water = {{356, 356, 356, 356}, {512, 768, 768, 512}};
    p.notes = {"sample note"};
    p.total_plan_ns = 6912;
    p.plan_hash = compute_plan_hash(p);
    return p;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

std::vector<std::string> keys_of(const ordered_json& j) {
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.push_back(it.key());
    return keys;
}

using Keys = std::vector<std::string>;

} // namespace

class TestTrace : public QObject {
    Q_OBJECT
  private slots:
    void traceLinesAreExact() {
        const Plan p = sample_plan();
        const std::string trace = trace_jsonl(p);
        QVERIFY(trace.ends_with("}\n"));
        const auto lines = lines_of(trace);
        QCOMPARE(lines.size(), size_t(8));
        QCOMPARE(lines[0], "{\"record\":\"allocation_header\",\"ir_hash\":\"" + to_hex(p.ir_hash) +
                               "\",\"mode\":\"training\",\"replay_token_prefix\":\"00010203\","
                               "\"strategy\":\"auto\",\"arenas\":[{\"name\":\"parameters\","
                               "\"capacity\":1048576,\"alignment\":128},{\"name\":\"activations\","
                               "\"capacity\":4096,\"alignment\":64}]}");
        QCOMPARE(lines[2], std::string("{\"record\":\"tensor\",\"tensor_id\":\"a.view\",\"name\":"
                                       "\"a.view (display)\",\"arena\":\"activations\","
                                       "\"logical_slot\":0,\"logical_address\":128,\"size\":64,"
                                       "\"live_range\":[0,2],\"bytes\":512}"));
        QCOMPARE(lines[7], "{\"record\":\"summary\",\"peak_bytes_per_arena\":{\"parameters\":356,"
                           "\"activations\":768},\"lower_bound_per_arena\":{\"parameters\":356,"
                           "\"activations\":768},\"total_logical_slots\":4,\"reuse_ratio\":"
                           "\"0.3333\",\"fragmentation_pct\":\"0.00\",\"plan_hash\":\"" +
                               to_hex(p.plan_hash) + "\"}");
    }
    void tensorRecordsFollowIdOrderWithFixedKeys() {
        Plan p = sample_plan();
        std::reverse(p.tensors.begin(), p.tensors.end());
        const auto lines = lines_of(trace_jsonl(p));
        const Keys tensor_keys = {"record", "tensor_id",    "name",
                                  "arena",  "logical_slot", "logical_address",
                                  "size",   "live_range",   "bytes"};
        std::vector<std::string> ids;
        for (size_t i = 1; i + 1 < lines.size(); ++i) {
            const auto j = ordered_json::parse(lines[i]);
            QCOMPARE(keys_of(j), tensor_keys);
            ids.push_back(j["tensor_id"]);
        }
        QCOMPARE(ids, (Keys{"a", "a.view", "b", "c", "w1", "w2"}));
        QCOMPARE(keys_of(ordered_json::parse(lines.front())),
                 (Keys{"record", "ir_hash", "mode", "replay_token_prefix", "strategy", "arenas"}));
        QCOMPARE(keys_of(ordered_json::parse(lines.back())),
                 (Keys{"record", "peak_bytes_per_arena", "lower_bound_per_arena",
                       "total_logical_slots", "reuse_ratio", "fragmentation_pct", "plan_hash"}));
    }
    void traceIgnoresTiming() {
        Plan p = sample_plan();
        const std::string before = trace_jsonl(p);
        p.total_plan_ns = 42;
        p.arenas[0].metrics.plan_ns = 7;
        QCOMPARE(trace_jsonl(p), before);
    }
    void summaryRatiosUseIntegers() {
        Plan p = sample_plan();
        p.arenas[1].metrics.peak_bytes = 1000; // (1356 - 1124) / 1356 = 17.109 %
        p.arenas[1].metrics.lower_bound = 768;
        const auto j = ordered_json::parse(lines_of(trace_jsonl(p)).back());
        QCOMPARE(j["fragmentation_pct"].get<std::string>(), std::string("17.11"));
        QCOMPARE(format_fixed(1, 3, 4), std::string("0.3333"));
        QCOMPARE(format_fixed(2, 3, 2), std::string("0.67"));
        QCOMPARE(format_fixed(1, 8, 2), std::string("0.13")); // half rounds up
        QCOMPARE(format_fixed(9995, 10000, 2), std::string("1.00"));
        QCOMPARE(format_fixed(0, 0, 4), std::string("0.0000"));
        QCOMPARE(format_fixed(2, 3, 0), std::string("1"));
        QCOMPARE(format_fixed(UINT64_MAX, 1, 2), std::string("18446744073709551615.00"));
        QCOMPARE(format_fixed(1, UINT64_MAX, 18), std::string("0.000000000000000000"));
        TMMU_EXPECT_FAILURE(format_fixed(1, 2, 19), FailureCode::InvalidArgument);
    }
    void bareProblemTraceSaysNone() {
        Plan p = sample_plan();
        p.mode.reset();
        const auto j = ordered_json::parse(lines_of(trace_jsonl(p)).front());
        QCOMPARE(j["mode"].get<std::string>(), std::string("none"));
    }
    void traceRejectsBadIndices() {
        Plan p = sample_plan();
        p.tensors[0].buffer = 3;
        TMMU_EXPECT_FAILURE(trace_jsonl(p), FailureCode::InvalidArgument);
        p = sample_plan();
        p.tensors[0].arena = 2;
        TMMU_EXPECT_FAILURE(trace_jsonl(p), FailureCode::InvalidArgument);
    }
    void traceFileMatchesString() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("plan.trace.jsonl").toStdString();
        const Plan p = sample_plan();
        write_trace_file(p, path);
        QCOMPARE(test::read_file(path), std::optional<std::string>(trace_jsonl(p)));
        TMMU_EXPECT_FAILURE(write_trace_file(p, dir.filePath("missing/x").toStdString()),
                            FailureCode::IoError);
    }
    void planJsonHasStableFields() {
        const Plan p = sample_plan();
        const std::string text = plan_to_json(p, false);
        QVERIFY(text.ends_with("}\n"));
        const auto j = ordered_json::parse(text);
        QCOMPARE(keys_of(j), (Keys{"tmmu_version", "source", "mode", "strategy", "ir_hash",
                                   "plan_hash", "arenas", "totals", "series", "notes"}));
        QCOMPARE(j["tmmu_version"].get<std::string>(), std::string(TMMU_VERSION));
        QCOMPARE(j["mode"].get<std::string>(), std::string("training"));
        QCOMPARE(j["plan_hash"].get<std::string>(), to_hex(p.plan_hash));
        const auto& a = j["arenas"][1];
        QCOMPARE(keys_of(a), (Keys{"name", "capacity", "alignment", "strategy", "peak_bytes",
                                   "lower_bound", "peak_over_bound", "slots", "max_live", "buffers",
                                   "tensors", "reuse_ratio", "internal_fragmentation", "plan_ms"}));
        QCOMPARE(a["name"].get<std::string>(), std::string("activations"));
        QCOMPARE(a["strategy"].get<std::string>(), std::string("greedy-size"));
        QCOMPARE(a["peak_bytes"].get<uint64_t>(), uint64_t(768));
        QCOMPARE(a["slots"].get<uint32_t>(), 2u);
        QCOMPARE(a["reuse_ratio"].get<double>(), 0.5);
        QCOMPARE(a["plan_ms"].get<double>(), 0.005678);
        QCOMPARE(j["totals"]["peak_bytes"].get<uint64_t>(), uint64_t(1124));
        QCOMPARE(j["totals"]["lower_bound"].get<uint64_t>(), uint64_t(1124));
        QCOMPARE(j["totals"]["plan_ms"].get<double>(), 0.006912);
        QCOMPARE(j["series"]["times"].size(), size_t(4));
        QCOMPARE(j["series"]["arenas"]["activations"]["live_bytes"][1].get<uint64_t>(),
                 uint64_t(768));
        QCOMPARE(j["notes"][0].get<std::string>(), std::string("sample note"));
    }
    void planJsonTensorsOnRequest() {
        Plan p = sample_plan();
        p.mode.reset();
        const auto j = ordered_json::parse(plan_to_json(p, true));
        QVERIFY(j["mode"].is_null());
        QCOMPARE(j["tensors"].size(), size_t(6));
        const auto& t = j["tensors"][1];
        QCOMPARE(keys_of(t), (Keys{"id", "name", "role", "arena", "slot", "offset", "size",
                                   "alignment", "begin", "end"}));
        QCOMPARE(t["id"].get<std::string>(), std::string("a.view"));
        QCOMPARE(t["role"].get<std::string>(), std::string("activation"));
        QCOMPARE(t["arena"].get<std::string>(), std::string("activations"));
        QCOMPARE(t["offset"].get<uint64_t>(), uint64_t(128));
        QCOMPARE(t["end"].get<uint32_t>(), 2u);
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "test_trace.moc"
