#include "core/failure.h"
#include "encoding/sha256.h"
#include "io/plan_json.h"
#include "io/trace.h"
#include "plan/plan_hash.h"
#include "sample_plan.h"
#include "source/model_source.h"
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
        QCOMPARE(lines.size(), size_t(12)); // header, 6 tensors, 4 ledger points, summary
        QCOMPARE(lines[0], "{\"record\":\"allocation_header\",\"ir_hash\":\"" + to_hex(p.ir_hash) +
                               "\",\"mode\":\"training\",\"replay_token_prefix\":\"00010203\","
                               "\"strategy\":\"auto\",\"arenas\":[{\"name\":\"parameters\","
                               "\"capacity\":1048576,\"alignment\":128},{\"name\":\"activations\","
                               "\"capacity\":4096,\"alignment\":64}]}");
        QCOMPARE(lines[2], std::string("{\"record\":\"tensor\",\"tensor_id\":\"a.view\",\"name\":"
                                       "\"a.view (display)\",\"arena\":\"activations\","
                                       "\"logical_slot\":0,\"generation\":0,\"logical_address\":"
                                       "128,\"size\":64,\"alignment\":64,\"live_range\":[0,2],"
                                       "\"bytes\":512}"));
        // c takes slot 0 after a's buffer: its second generation.
        QVERIFY2(lines[4].find("\"tensor_id\":\"c\"") != std::string::npos &&
                     lines[4].find("\"logical_slot\":0,\"generation\":1,") != std::string::npos,
                 lines[4].c_str());
        // At step 3 only c (512 B) is live, and the activations' peak so far is still 768.
        QCOMPARE(lines[10], std::string("{\"record\":\"ledger\",\"t\":3,\"bytes_allocated\":{"
                                        "\"parameters\":356,\"activations\":512},\"peak_bytes\":{"
                                        "\"parameters\":356,\"activations\":768},"
                                        "\"allocation_failures\":0,"
                                        "\"internal_fragmentation_ratio\":{\"parameters\":"
                                        "\"0.0000\",\"activations\":\"0.0000\"}}"));
        QCOMPARE(lines[11], "{\"record\":\"summary\",\"peak_bytes_per_arena\":{\"parameters\":356,"
                            "\"activations\":768},\"lower_bound_per_arena\":{\"parameters\":356,"
                            "\"activations\":768},\"total_logical_slots\":4,\"reuse_ratio\":"
                            "\"0.3333\",\"fragmentation_pct\":\"0.00\",\"plan_hash\":\"" +
                                to_hex(p.plan_hash) + "\"}");
    }
    void tensorRecordsFollowIdOrderWithFixedKeys() {
        Plan p = sample_plan();
        std::reverse(p.tensors.begin(), p.tensors.end());
        const auto lines = lines_of(trace_jsonl(p));
        const Keys tensor_keys = {
            "record",          "tensor_id", "name",      "arena",      "logical_slot", "generation",
            "logical_address", "size",      "alignment", "live_range", "bytes"};
        const Keys ledger_keys = {"record",
                                  "t",
                                  "bytes_allocated",
                                  "peak_bytes",
                                  "allocation_failures",
                                  "internal_fragmentation_ratio"};
        std::vector<std::string> ids;
        std::vector<uint64_t> times;
        for (size_t i = 1; i + 1 < lines.size(); ++i) {
            const auto j = ordered_json::parse(lines[i]);
            if (j["record"] == "ledger") {
                QCOMPARE(keys_of(j), ledger_keys);
                times.push_back(j["t"]);
                continue;
            }
            QVERIFY(times.empty()); // every tensor record comes before the ledger
            QCOMPARE(keys_of(j), tensor_keys);
            ids.push_back(j["tensor_id"]);
        }
        QCOMPARE(ids, (Keys{"a", "a.view", "b", "c", "w1", "w2"}));
        QCOMPARE(times, p.series.times);
        QCOMPARE(keys_of(ordered_json::parse(lines.front())),
                 (Keys{"record", "ir_hash", "mode", "replay_token_prefix", "strategy", "arenas"}));
        QCOMPARE(keys_of(ordered_json::parse(lines.back())),
                 (Keys{"record", "peak_bytes_per_arena", "lower_bound_per_arena",
                       "total_logical_slots", "reuse_ratio", "fragmentation_pct", "plan_hash"}));
    }
    // The ledger's fragmentation: bytes below the current top that no live buffer uses.
    void ledgerFragmentationIsTheUnusedShareBelowTheTop() {
        Plan p = sample_plan();
        p.series.high_water[1][3] = 768; // c (512 B) live under a top of 768
        const auto lines = lines_of(trace_jsonl(p));
        const auto j = ordered_json::parse(lines[10]);
        QCOMPARE(j["internal_fragmentation_ratio"]["activations"].get<std::string>(),
                 std::string("0.3333"));
        QCOMPARE(j["bytes_allocated"]["activations"].get<uint64_t>(), uint64_t(512));
        p.series.live_bytes[1][3] = p.series.high_water[1][3] = 0; // nothing live
        QCOMPARE(ordered_json::parse(
                     lines_of(trace_jsonl(p))[10])["internal_fragmentation_ratio"]["activations"]
                     .get<std::string>(),
                 std::string("0.0000"));
    }
    // A real plan's ledger against its buffers, counted here: the live bytes and the top at each
    // step, the peak so far, and the arena's peak at the end.
    void ledgerMatchesThePlansBuffersAtEveryStep() {
        const LoadedModel m = load_model(
            TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json", {Mode::Training});
        const Plan p = plan_model(m, Mode::Training, PlanOptions{}, Progress{});
        std::vector<ordered_json> ledger;
        for (const std::string& line : lines_of(trace_jsonl(p)))
            if (const auto j = ordered_json::parse(line); j["record"] == "ledger")
                ledger.push_back(j);
        QCOMPARE(ledger.size(), p.execution_order.size());
        for (const ArenaPlan& a : p.arenas) {
            uint64_t peak = 0;
            for (const ordered_json& j : ledger) {
                const uint64_t t = j["t"];
                uint64_t live = 0, top = 0;
                for (size_t k = 0; k < a.problem.buffers.size(); ++k) {
                    const Buffer& b = a.problem.buffers[k];
                    if (b.begin > t || t >= b.end) continue;
                    live += b.size;
                    top = std::max(top, a.solution.offsets[k] + b.size);
                }
                peak = std::max(peak, top);
                const std::string& name = a.config.name;
                QCOMPARE(j["bytes_allocated"][name].get<uint64_t>(), live);
                QCOMPARE(j["peak_bytes"][name].get<uint64_t>(), peak);
                QCOMPARE(j["internal_fragmentation_ratio"][name].get<std::string>(),
                         format_fixed(top - live, top, 4));
                QCOMPARE(j["allocation_failures"].get<int>(), 0);
            }
            QCOMPARE(peak, a.metrics.peak_bytes);
        }
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
        QCOMPARE(keys_of(j),
                 (Keys{"tmmu_version", "source", "mode", "strategy", "ir_hash", "plan_hash",
                       "arenas", "totals", "status", "metrics", "series", "notes"}));
        QCOMPARE(j["status"].get<std::string>(), std::string("success"));
        // Seed 000 0.I's metrics under the seed's names: 4 slots for 6 tensors, no waste.
        const auto& m = j["metrics"];
        QCOMPARE(keys_of(m), (Keys{"peak_logical_slots", "peak_physical_bytes_per_arena",
                                   "peak_tmmu_usage_per_arena", "memory_reuse_ratio", "max_live",
                                   "internal_fragmentation_ratio", "allocation_time_ns"}));
        QCOMPARE(m["peak_logical_slots"].get<uint64_t>(), uint64_t(4));
        QCOMPARE(m["peak_physical_bytes_per_arena"]["activations"].get<uint64_t>(), uint64_t(768));
        QCOMPARE(m["peak_tmmu_usage_per_arena"]["activations"].get<uint64_t>(), uint64_t(768));
        QCOMPARE(m["memory_reuse_ratio"].get<double>(), 2.0 / 6.0);
        QCOMPARE(m["max_live"]["parameters"].get<uint32_t>(), 2u);
        QCOMPARE(m["internal_fragmentation_ratio"].get<double>(), 0.0);
        QCOMPARE(m["allocation_time_ns"].get<uint64_t>(), uint64_t(6912));
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
    void seedMetricsFollowPagesRetentionAndWaste() {
        Plan p = sample_plan();
        p.arenas[1].config.page_size = 512;    // 768 B in whole pages: 1024
        p.arenas[1].metrics.lower_bound = 512; // (1124 - 868) / 1124 of the peaks unused
        p.retention = ActivationRetention{400, 100, 2, 1, 2};
        const auto m = ordered_json::parse(plan_to_json(p, false))["metrics"];
        QCOMPARE(m["peak_physical_bytes_per_arena"]["activations"].get<uint64_t>(), uint64_t(768));
        QCOMPARE(m["peak_tmmu_usage_per_arena"]["activations"].get<uint64_t>(), uint64_t(1024));
        QCOMPARE(m["internal_fragmentation_ratio"].get<double>(), 256.0 / 1124.0);
        QCOMPARE(m["activation_retention_ratio"].get<double>(), 0.25);
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
