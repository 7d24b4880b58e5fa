// The Vulkan backend (issue 13): parity with the CPU backend, determinism, one submission per
// step, device time and device memory, and device refusals as DEVICE_ERROR. CTest pins the
// loader to lavapipe (Mesa's CPU driver), so these run in CI; the test sets the same pin when
// run by hand, and skips, naming the reason, where no Vulkan device can run the backend.
#include "backends/cpu/cpu_generate.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/failure.h"
#include "models/transformer_config.h"
#include "runtime/backend_parity.h"
#include "runtime/generate.h"
#include "runtime/weights.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <cstdlib>

using namespace tmmu;
using namespace tmmu::runtime;

namespace {

constexpr const char* kLavapipe = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

using test::kTinyGpt2;
using test::kTinyLlama;

using test::tiny_config;
using test::tiny_request;

#define SKIP_WITHOUT_DEVICE()                                                                      \
    do {                                                                                           \
        const std::string why = vulkan::vulkan_unavailable_reason();                               \
        if (!why.empty()) QSKIP(("no Vulkan device to run on: " + why).c_str());                   \
    } while (0)

} // namespace

class TestVulkanBackend : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        setenv("VK_DRIVER_FILES", kLavapipe, 0); // CTest's value wins; same file
        setenv("VK_ICD_FILENAMES", kLavapipe, 0);
    }

    void theTableCoversEveryOpcode() {
        QVERIFY(runtime::covers_every_opcode(vulkan::vulkan_adapters()));
    }

    // Issue 13's f32 gate over a 64-step seeded run: NMSE <= 1e-5 at every step and the same
    // argmax on at least 63 of 64 rows, both families, one sequence and three, and an odd
    // cache length.
    void parityWithCpu_data() { test::add_gpu_parity_rows(); }
    void parityWithCpu() {
        SKIP_WITHOUT_DEVICE();
        test::check_gpu_parity(vulkan::make_vulkan_executor);
    }

    // f16 weights (matrices and tables; sums in f32) against the CPU's f32: NMSE <= 1e-3, and
    // far from the f32 run's agreement (the rounding is real); half the weight bytes.
    void parityWithCpuF16_data() { test::add_gpu_parity_rows(); }
    void parityWithCpuF16() {
        SKIP_WITHOUT_DEVICE();
        test::check_gpu_parity(vulkan::make_vulkan_executor, WeightPrecision::F16);
    }
    // RoPE scaling (Llama 3's and linear): the Vulkan tables rotate as the CPU does, to the same
    // NMSE and argmax gate (unscaled tables miss it by far: worst NMSE 0.023 and 0.0035).
    void ropeScalingMatchesTheCpu_data() { test::add_rope_scaling_rows(); }
    void ropeScalingMatchesTheCpu() {
        SKIP_WITHOUT_DEVICE();
        test::check_gpu_parity(vulkan::make_vulkan_executor);
    }
    void f16WeightsHalveTheMatrices() {
        SKIP_WITHOUT_DEVICE();
        RunRequest r = tiny_request(1, 4);
        const RunResult f32 = vulkan::generate(tiny_config(kTinyLlama), r, {});
        r.weight_precision = WeightPrecision::F16;
        const RunResult f16 = vulkan::generate(tiny_config(kTinyLlama), r, {});
        QVERIFY2(f16.weight_bytes < f32.weight_bytes * 0.55 &&
                     f16.weight_bytes > f32.weight_bytes * 0.45,
                 qPrintable(QString("%1 vs %2").arg(f16.weight_bytes).arg(f32.weight_bytes)));
        QVERIFY(f16.logits_hash != f32.logits_hash);
        const RunResult again = vulkan::generate(tiny_config(kTinyLlama), r, {});
        QCOMPARE(to_hex(again.logits_hash), to_hex(f16.logits_hash));
    }

    // Same inputs, same bits: a second run, and the planned arena against a buffer per
    // register. A step is one submission (prefill: one per sequence), whatever it holds; every
    // opcode that ran has device time from its timestamps; the device holds the planned bytes
    // plus the host-visible staging and read-back buffers and the attention scores.
    void deterministicPlannedAndTimed_data() {
        QTest::addColumn<QString>("json");
        QTest::newRow("gpt2") << QString(kTinyGpt2);
        QTest::newRow("llama") << QString(kTinyLlama);
    }
    void deterministicPlannedAndTimed() {
        SKIP_WITHOUT_DEVICE();
        QFETCH(QString, json);
        const TransformerConfig c = tiny_config(json.toStdString().c_str());
        RunRequest r = tiny_request(2, 24);
        r.counters = true;
        const RunResult first = vulkan::generate(c, r, Progress{});
        const RunResult again = vulkan::generate(c, r, Progress{});
        QCOMPARE(to_hex(again.logits_hash), to_hex(first.logits_hash));
        RunRequest separate = r;
        separate.layout = RegisterLayout::Separate;
        const RunResult unplanned = vulkan::generate(c, separate, Progress{});
        QCOMPARE(to_hex(unplanned.logits_hash), to_hex(first.logits_hash));
        QVERIFY(unplanned.decode_register_bytes > first.decode_register_bytes);
        RunRequest uncounted = r;
        uncounted.counters = false; // recorded without timestamps: the same bits
        QCOMPARE(to_hex(vulkan::generate(c, uncounted, Progress{}).logits_hash),
                 to_hex(first.logits_hash));
        QCOMPARE(first.decode_counters.launches, uint64_t(r.decode_tokens - 1));
        QCOMPARE(first.prefill_counters.launches, uint64_t(r.batch));
        for (Opcode op : kAllOpcodes)
            QCOMPARE(first.decode_counters.device_seconds[uint8_t(op)] > 0,
                     first.decode_counters.per_opcode[uint8_t(op)] > 0);
        // Per instruction too: one time per decode instruction, adding up to the per-opcode
        // times, and kept by the run's JSON.
        double per_opcode = 0, per_instruction = 0;
        for (double s : first.decode_counters.device_seconds)
            per_opcode += s;
        for (double s : first.decode_instruction_seconds)
            per_instruction += s;
        QCOMPARE(first.decode_instruction_seconds.size(),
                 first.decode_counters.total / (r.decode_tokens - 1));
        QVERIFY(per_instruction > 0 &&
                std::abs(per_instruction - per_opcode) <= 1e-9 * per_opcode + 1e-12);
        RunRecord rec;
        rec.backend = "vulkan";
        rec.request = r;
        rec.result = first;
        rec.config_text = json.toStdString();
        const RunRecord back = parse_run_record(run_record_json(rec), "round trip");
        QCOMPARE(back.result.decode_instruction_seconds, first.decode_instruction_seconds);
        QCOMPARE(back.result.prefill_instruction_seconds, first.prefill_instruction_seconds);
        test::check_device_memory(first, uint64_t(1) << 20);
    }

    // A device's refusal is DEVICE_ERROR naming what failed: a KV cache beyond what the device
    // allocates at once, and heads wider than the attention kernel holds on chip.
    void deviceFailuresAreNamed() {
        SKIP_WITHOUT_DEVICE();
        const TransformerConfig long_context = test::long_context_llama();
        RunRequest huge = tiny_request(1, 4);
        huge.max_seq = 2'000'000'000u; // 256 GB of KV cache per layer
        const auto big =
            test::capture_failure([&] { (void)vulkan::generate(long_context, huge, {}); });
        QVERIFY(big);
        QCOMPARE(big->code(), FailureCode::DeviceError);
        QVERIFY2(std::string(big->what()).find("state block") != std::string::npos, big->what());
        const TransformerConfig wide = parse_transformer_config(
            R"({"model_type":"gpt2","n_embd":512,"n_layer":1,"n_head":1,"vocab_size":97,
            "n_positions":16})",
            "wide-heads");
        const auto heads =
            test::capture_failure([&] { (void)vulkan::generate(wide, tiny_request(1, 2), {}); });
        QVERIFY(heads);
        QCOMPARE(heads->code(), FailureCode::DeviceError);
        QVERIFY2(std::string(heads->what()).find("head sizes up to 256") != std::string::npos,
                 heads->what());
    }

    // Memory checks on the device: on a correct plan they find nothing and change no bit.
    void checkedRunsMatchUncheckedOnes() {
        SKIP_WITHOUT_DEVICE();
        for (const char* json : {kTinyGpt2, kTinyLlama}) {
            RunRequest r = tiny_request(2, 6);
            const RunResult plain = vulkan::generate(tiny_config(json), r, {});
            r.check_memory = true;
            const RunResult checked = vulkan::generate(tiny_config(json), r, {});
            QCOMPARE(to_hex(checked.logits_hash), to_hex(plain.logits_hash));
        }
    }

    // The CPU's findings, found on the device and named the same: a plan whose liveness lets
    // a later register take live bytes, and an adapter writing past its output.
    void aPlanOverlappingLiveDataIsCaught_data() { test::add_overlap_rows(); }
    void aPlanOverlappingLiveDataIsCaught() {
        SKIP_WITHOUT_DEVICE();
        test::check_overlap_is_caught(vulkan::make_vulkan_executor);
    }

    void anAdapterWritingPastItsOutputIsCaught() {
        SKIP_WITHOUT_DEVICE();
        test::check_guard_is_caught(vulkan::make_vulkan_executor);
    }
};

QTEST_GUILESS_MAIN(TestVulkanBackend)
#include "test_vulkan_backend.moc"
