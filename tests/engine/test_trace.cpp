#include "core/failure.h"
#include "encoding/sha256.h"
#include "io/plan_json.h"
#include "io/trace.h"
#include "plan/plan_hash.h"
#include "sample_plan.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <sstream>

using namespace tmmu;
using tmmu::test::sample_plan;
using ordered_json = nlohmann::ordered_json;

namespace {

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
        QVERIFY(!j.contains("activation_retention_ratio"));   // sample_plan has none
        p.retention = ActivationRetention{420, 388, 4, 3, 5}; // 0.923809...
        const auto retained = ordered_json::parse(lines_of(trace_jsonl(p)).back());
        QCOMPARE(retained["activation_retention_ratio"].get<std::string>(), std::string("0.9238"));
        QCOMPARE(keys_of(retained), (Keys{"record", "peak_bytes_per_arena", "lower_bound_per_arena",
                                          "total_logical_slots", "reuse_ratio", "fragmentation_pct",
                                          "activation_retention_ratio", "plan_hash"}));
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
    // An unbounded arena's capacity (2^64 - 1) is null in JSON: readers that hold numbers as
    // doubles would round it. Bounded capacities stay numbers.
    void unboundedCapacityIsNull() {
        Plan p = sample_plan();
        p.arenas[0].config.capacity = UINT64_MAX;
        const auto header = ordered_json::parse(lines_of(trace_jsonl(p)).front());
        QVERIFY(header["arenas"][0]["capacity"].is_null());
        QCOMPARE(header["arenas"][1]["capacity"].get<uint64_t>(), uint64_t(4096));
        const auto plan = ordered_json::parse(plan_to_json(p, false));
        QVERIFY(plan["arenas"][0]["capacity"].is_null());
        QCOMPARE(plan["arenas"][1]["capacity"].get<uint64_t>(), uint64_t(4096));
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
    // A failed run's trace: one failure record, keys in the documented order; null where the
    // failure has no step or came before any operator ran.
    void failureRecordIsExact() {
        Failure f(FailureCode::ArenaTooSmall, "arena 'activations'", "plan height 2 bytes", 7);
        f.name_operator("UML_OS.TMMU.MapToVirtualAddresses_v1");
        f.name_operator("UML_OS.TMMU.PlanMemory_v2"); // an outer stage: the inner one stays
        const Digest token = sample_plan().replay_token;
        QCOMPARE(failure_trace_jsonl(f, token),
                 std::string("{\"record\":\"failure\",\"t\":7,\"failure_code\":"
                             "\"ARENA_TOO_SMALL\",\"failure_operator\":"
                             "\"UML_OS.TMMU.MapToVirtualAddresses_v1\",\"replay_token_prefix\":"
                             "\"00010203\",\"where\":\"arena 'activations'\",\"message\":"
                             "\"plan height 2 bytes\"}\n"));
        const Failure loading(FailureCode::LivenessCycle, "m.json: node 'a'", "a cycle");
        QCOMPARE(failure_trace_jsonl(loading, Digest{}),
                 std::string("{\"record\":\"failure\",\"t\":null,\"failure_code\":"
                             "\"LIVENESS_CYCLE\",\"failure_operator\":null,"
                             "\"replay_token_prefix\":\"00000000\",\"where\":\"m.json: node "
                             "'a'\",\"message\":\"a cycle\"}\n"));
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
                                   "tensors", "reuse_ratio", "internal_fragmentation",
                                   "isolated_bytes", "saved_bytes", "sharing_pairs", "plan_ms"}));
        QCOMPARE(a["name"].get<std::string>(), std::string("activations"));
        QCOMPARE(a["strategy"].get<std::string>(), std::string("greedy-size"));
        QCOMPARE(a["peak_bytes"].get<uint64_t>(), uint64_t(768));
        QCOMPARE(a["slots"].get<uint32_t>(), 2u);
        QCOMPARE(a["reuse_ratio"].get<double>(), 0.5);
        QCOMPARE(a["plan_ms"].get<double>(), 0.005678);
        QCOMPARE(a["isolated_bytes"].get<uint64_t>(), uint64_t(1280));
        QCOMPARE(a["saved_bytes"].get<uint64_t>(), uint64_t(512));
        QCOMPARE(a["sharing_pairs"].get<uint64_t>(), uint64_t(1));
        QCOMPARE(j["totals"]["saved_bytes"].get<uint64_t>(), uint64_t(512));
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
        QCOMPARE(j["mode"].get<std::string>(), std::string("none"));
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
