#pragma once
// Helpers shared by the QtTest suites.
#include "core/failure.h"
#include "models/transformer_config.h"
#include "plan/offset_problem.h"
#include "runtime/program.h"
#include "runtime/run_record.h"

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTest>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tmmu::test {

// Two-layer transformer configs every backend's tests run: GPT-2 (learned positions, fused qkv
// with bias) and Llama (RoPE, grouped kv heads, SwiGLU), each with a context of 80 positions.
extern const char* const kTinyGpt2;
extern const char* const kTinyLlama;
extern const char* const kTinyQwen2; // kTinyLlama's shape as Qwen2: biases on q, k and v
TransformerConfig tiny_config(const char* json); // named "tiny"
// rope_scaling objects for kTinyLlama's heads of 4 pairs (turning every 6, 63, 628 and 6283
// positions). Llama 3's is trained on 64 positions: pair 0 is kept, pair 1 blended and pairs 2
// and 3 slowed by 8, which the 72 positions a test decodes go past.
extern const char* const kLlama3RopeScaling;
extern const char* const kLinearRopeScaling;
// A config's JSON text with "rope_scaling": `scaling` added.
std::string with_rope_scaling(const char* config_json, const char* scaling);
// `batch` sequences of `prompt` seeded tokens, `decode` tokens each, seed 7.
runtime::RunRequest tiny_request(uint32_t batch, uint32_t decode, uint32_t prompt = 8);

// kTinyLlama's shape with a context of 2e9 positions (no learned position table, so a long
// context costs the host nothing): what a device cannot hold.
TransformerConfig long_context_llama();
// A GPU run holds what its plan says: the planned device bytes cover the weights, KV caches and
// both register arenas; the measured bytes are at least the planned ones and at most `slack`
// more.
void check_device_memory(const runtime::RunResult& run, uint64_t slack);

// Issue 13's gate for a GPU backend, as a data-driven test: the rows (both tiny families, one
// sequence and three, and a 3-token prompt for an odd cache length), and the check of the
// current row: 64 seeded steps teacher-forced against the CPU backend (f32 weights), NMSE <=
// 1e-5 at every step for f32 weights and 1e-3 for f16, and the same argmax on all but one row
// in 64.
void add_gpu_parity_rows();
// Rows for check_gpu_parity of TinyLlama with RoPE scaling: Llama 3's at batch 1, linear at 2.
void add_rope_scaling_rows();
void check_gpu_parity(const runtime::ExecutorFactory& candidate,
                      runtime::WeightPrecision precision = runtime::WeightPrecision::F32);

// Broken plans that memory checks must catch, on every backend (kTinyGpt2's plans, weights seed
// 7). The overlap rows (columns: poisoned, reader, cause) go with overlapping_prefill(poisoned):
// the prefill plan (8 rows, 64 positions) whose liveness ends "embed" after instruction 1
// though instruction 3 reads it, so the planner packs a later register on its bytes (and, when
// `poisoned`, the early end also poisons it); the failure must name `reader` and `cause`.
void add_overlap_rows();
runtime::CompiledPlan overlapping_prefill(bool poisoned);
// The decode plan (1 row, 64 positions) whose "h0.norm_1" register is declared half as wide as
// the layernorm writes: the adapter writes past its output into the guard bytes.
runtime::CompiledPlan narrow_norm_decode();
// One step of `plan` over `rows` rows of slot 0 with memory checks on, on `backend`'s
// executor (weights seed 7): the failure it raised, if any.
std::optional<Failure> checked_step_failure(const runtime::ExecutorFactory& backend,
                                            const runtime::CompiledPlan& plan, uint32_t rows);
// The two findings on `backend`, checked as the CPU's are: the current overlap row
// (add_overlap_rows) and the narrow norm.
void check_overlap_is_caught(const runtime::ExecutorFactory& backend);
void check_guard_is_caught(const runtime::ExecutorFactory& backend);
// The message of that guard finding.
inline constexpr const char* kNarrowNormFinding =
    "instruction 1 (layernorm): wrote outside its output register 2 'h0.norm_1'";

// A CPU run of the transformer config `config_json` (seeded weights and prompts), recorded as
// `tmmu run` records one: model "tiny", config path "tiny.json".
runtime::RunRecord cpu_run(const char* config_json, const runtime::RunRequest& request);

// Runs fn and returns the Failure it threw, or nullopt when it threw nothing.
std::optional<Failure> capture_failure(const std::function<void()>& fn);

// A buffer with lifetime [begin, end), size and alignment, not pinned.
Buffer buf(uint64_t begin, uint64_t end, uint64_t size, uint64_t alignment = 1);

// n seeded values in [-scale, scale) (an LCG: the same on every machine).
std::vector<float> seeded_floats(uint64_t seed, int64_t n, float scale);

// Lower-case hex of bytes ("00ff").
std::string hex(const std::vector<uint8_t>& bytes);

// Reads a whole file; QFAIL-style callers check the optional.
std::optional<std::string> read_file(const std::string& path);

// Random offset problem: n buffers over horizon steps, sizes in [1, max_size], alignments from
// {1, 8, 64, 256} when aligned is true. Same seed, same problem.
OffsetProblem random_problem(uint32_t seed, size_t n, uint64_t horizon, uint64_t max_size,
                             bool aligned);

// The tests' own plan checker for offset problems, sharing no helper with the strategies or
// the validator: height as the largest offset + size, every pair of buffers that meet in time
// apart in bytes, alignments, pins, and the claimed height. "" when right, else what is wrong.
uint64_t height_of(const OffsetProblem& p, const std::vector<uint64_t>& offsets);
std::string check_solution(const OffsetProblem& p, const OffsetSolution& s);

// A finished program: its exit code (-1 when it crashed or did not finish in time), stdout and
// stderr.
struct ProgramRun {
    int code = -1;
    QString out;
    QString err;
};
ProgramRun run_program(const QString& program, const QStringList& args, int timeout_ms = 120000,
                       const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment());

// The first quarter of a property test's n seeded cases in a build with AddressSanitizer (the
// asan preset, where code runs about ten times slower), all n elsewhere. The main build checks
// every case; the sanitized one looks for memory errors, which depend on the paths a case takes
// more than on how many cases run, so each test keeps its case kinds in its first quarter.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
constexpr uint32_t property_cases(uint32_t n) {
    return kSanitized ? (n + 3) / 4 : n;
}

// True when the environment says this is a CI run (CI=true): tests must then find their data.
bool ci_run();

} // namespace tmmu::test

// Skips the current test, saying why, when input data it needs is absent (a benchmark suite
// beside the checkout, a tool); under CI=true the absence fails the test instead, so a CI run
// never passes by skipping. Use inside a QtTest slot.
#define TMMU_REQUIRE_DATA(present, what)                                                           \
    do {                                                                                           \
        if (!(present)) {                                                                          \
            if (::tmmu::test::ci_run())                                                            \
                QFAIL(qPrintable(QStringLiteral("CI=true but missing: ") + QString(what)));        \
            QSKIP(qPrintable(QStringLiteral("missing: ") + QString(what)));                        \
        }                                                                                          \
    } while (0)

// Asserts that `expr` throws tmmu::Failure with the given FailureCode, and that the failure
// names a location. Use inside a QtTest slot.
#define TMMU_EXPECT_FAILURE(expr, expected_code)                                                   \
    do {                                                                                           \
        auto tmmu_f_ = ::tmmu::test::capture_failure([&] { (void)(expr); });                       \
        QVERIFY2(tmmu_f_.has_value(), "expected a tmmu::Failure, none was thrown");                \
        QVERIFY2(tmmu_f_->code() == (expected_code), tmmu_f_->what());                             \
        QVERIFY2(!tmmu_f_->where().empty(), "failure does not say where");                         \
    } while (0)

#include "ir/graph.h"
#include "plan/replan.h"
#include "source/model_source.h"

namespace tmmu::test {

// g's tensor `id`; throws std::runtime_error where g has none.
const Tensor& tensor_named(const Graph& g, const char* id);

// Loads `file` to run over `iterations` from `asked`, plans it there and runs them, each binding
// checked against the model loaded there (LoadedModel::build_at).
ShapeScheduleRun run_over(const std::string& file, const ModelRequest& asked,
                          const std::vector<DimBinding>& iterations);

// Random finalized DAG of about `nodes` forward nodes (plus backward nodes reading saved
// forward tensors when `training`), with parameters, in-place writes, views, alias groups,
// saved_for_backward marks and must_not_alias pairs sprinkled in. Same seed, same graph.
Graph random_graph(uint32_t seed, size_t nodes, bool training);

} // namespace tmmu::test
