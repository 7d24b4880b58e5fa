// tmmu bench-run: how close a backend's runs come to what its device can do (issue 13, item 6),
// every ratio from figures measured in this one run.
#include "commands.h"
#include "interrupt.h"

#include "backend_registry.h"
#include "model_run.h"
#include "plan_choices.h"

#include "core/failure.h"
#include "io/file_io.h"
#include "runtime/generate.h"
#include "runtime/gpu_adapters.h"
#include "runtime/plan_compiler.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tmmu::cli {
namespace {

using namespace tmmu::runtime;

constexpr const char* kHelp =
    R"(usage: tmmu bench-run [CONFIG] [--backend cpu|vulkan|cuda] [--decode N] [--batch B]
                      [--weight-precision f32|f16]
                      [--prefill N] [--baseline FILE]

The backend defaults to cuda where it can run, else cpu; --weight-precision f16 stores the
matrices and tables as f16 on a GPU backend (tmmu run --help).

Measures a backend on a GPT-2, Llama, Mistral or Qwen2 config.json (default: the bundled
GPT-2 small), seeded weights, one run of each, and prints every figure next to what the device can do, measured in
the same run:
  device    copy bandwidth (bytes read + written per second) and the backend's matrix kernel
            (CUDA with f16 weights: its tensor-core kernel), on seeded values
  decode    batch 1 (8 prompt tokens, --decode N steps, default 64): time per token, and the
            bytes a token reads (every weight but the embedding tables, of which it reads one
            row, + the KV cache up to its position) per second as a fraction of the copy
            bandwidth; then where a token's device time goes, timed per instruction (a run
            of its own: the timing events cost time between kernels)
  batch     the same at --batch B sequences (default 8): tokens/s against batch 1
  prefill   one prompt of --prefill N tokens (default 512): tokens/s, and 2 x parameters x
            tokens / seconds against the matrix kernel's rate
  launches  launches per decode token (counted runs): CUDA with and without its graph, Vulkan's queue
            submissions (the step's kernels recorded into one command buffer), checked
            against the recorded baseline (--baseline FILE, default the bundled
            resources/bench/launch_baseline.json): more than 1.1x the baseline fails (exit 1)
)";

struct Figures {
    RunResult result;
    double step_ms = 0; // median decode step
};

Figures measure(const ConfigFile& file, const std::string& backend, const RunRequest& request,
                const app::BackendRunOptions& options, const Progress& progress) {
    Figures f;
    f.result = app::run_model(backend, options, file.path, file.text, request, progress).result;
    f.step_ms = run_rates(f.result).step_ms_p50;
    return f;
}

ExecutionPlan decode_plan(const TransformerConfig& config) {
    return compile_transformer(config, {PlanMode::Decode, 1, 2}).plan;
}

// Bytes of the embedding tables a decode token leaves unread: of a table only embedding
// instructions use it reads one row (a table tied to the output projection is read whole).
double unread_table_bytes(const ExecutionPlan& plan, WeightPrecision precision) {
    enum Use : uint8_t { None, RowsOnly, Whole };
    std::vector<Use> use(plan.weights.size(), None);
    for (const Instruction& insn : plan.instructions)
        for (const WeightRef w : insn.weights)
            use[w.index] =
                insn.opcode == Opcode::Embedding && use[w.index] != Whole ? RowsOnly : Whole;
    const std::vector<bool> half = half_weights(plan, precision);
    double bytes = 0;
    for (size_t w = 0; w < use.size(); ++w) {
        const TensorViewDesc& table = plan.weights[w].view;
        if (use[w] == RowsOnly)
            bytes += double(table.bytes() / sizeof(float) - table.shape[1]) *
                     (half[w] ? sizeof(uint16_t) : sizeof(float));
    }
    return bytes;
}

// Bytes one decode token reads: the weights but the embedding tables' other rows, and its
// sequence's KV cache up to its position (on average halfway through the decode, after the
// prompt).
double bytes_per_token(const RunResult& r, const RunRequest& q, double unread) {
    const double max_seq = double(q.prompt_tokens + q.decode_tokens);
    const double kv_per_sequence = double(r.kv_cache_bytes) / double(q.batch);
    return double(r.weight_bytes) - unread +
           kv_per_sequence * (q.prompt_tokens + q.decode_tokens / 2.0) / max_seq;
}

// The model's weight values, whatever each is stored as: a prefill token costs 2 FLOPs per value.
double weight_values(const ExecutionPlan& plan) {
    uint64_t bytes = 0;
    for (const auto& w : plan.weights)
        bytes += w.view.bytes(); // as the plan holds them: f32
    return double(bytes / sizeof(float));
}

// "swiglu 0.412, multihead_attention 0.301, ...": device ms per decode token by opcode, most
// first, from a counted run; empty where the backend timed no instruction.
std::string time_per_opcode(const DispatchCounters& c, double tokens) {
    std::vector<std::pair<double, size_t>> spent;
    for (size_t op = 0; op < c.device_seconds.size(); ++op)
        if (c.device_seconds[op] > 0) spent.emplace_back(c.device_seconds[op], op);
    std::sort(spent.rbegin(), spent.rend());
    std::string text;
    for (const auto& [seconds, op] : spent)
        text += fmt::format("{}{} {:.3f}", text.empty() ? "" : ", ", opcode_name(Opcode(op)),
                            seconds * 1e3 / tokens);
    return text;
}

// "6.02 TFLOP/s", "3.1 GFLOP/s" (lavapipe): the unit that shows the rate.
std::string flops_text(double flops_per_second) {
    return flops_per_second >= 1e12 ? fmt::format("{:.2f} TFLOP/s", flops_per_second / 1e12)
                                    : fmt::format("{:.1f} GFLOP/s", flops_per_second / 1e9);
}

uint32_t option(Args& args, const char* name, uint32_t fallback) {
    const auto v = args.value(name);
    return v ? uint32_t(app::parse_positive(*v, name)) : fallback;
}

// Launches per decode token recorded for (backend, model); 0 when the baseline has none.
double baseline_launches(const nlohmann::json& baseline, const std::string& backend,
                         const std::string& model, const char* mode) {
    if (!baseline.contains(backend) || !baseline[backend].contains(model)) return 0;
    return baseline[backend][model].value(mode, 0.0);
}

} // namespace

int cmd_bench_run(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const app::BackendStatus* cuda = app::backend_status("cuda");
    const std::string backend =
        args.value("--backend").value_or(cuda && cuda->runnable ? "cuda" : "cpu");
    app::check_runnable_backend(backend, "--backend");
    RunRequest one;
    if (const auto precision = args.value("--weight-precision"))
        one.weight_precision = app::parse_weight_precision(*precision, "--weight-precision");
    one.prompt_tokens = 8;
    one.decode_tokens = option(args, "--decode", 64);
    RunRequest counted = one;
    counted.counters = true;
    RunRequest many = one;
    many.batch = option(args, "--batch", 8);
    RunRequest prefill;
    prefill.weight_precision = one.weight_precision;
    prefill.prompt_tokens = option(args, "--prefill", 512);
    prefill.decode_tokens = 2;
    const std::string baseline_path =
        args.value("--baseline").value_or(app::resource_dir() + "/bench/launch_baseline.json");
    const ConfigFile file = config_argument(args, "tmmu bench-run");
    nlohmann::json baseline;
    try {
        baseline = nlohmann::json::parse(read_text_file(baseline_path));
    } catch (const nlohmann::json::exception& e) {
        fail(FailureCode::InvalidArgument, baseline_path, e.what());
    }
    const Progress progress = interruptible_progress();

    const app::DeviceRates rates = app::device_rates(backend, one.weight_precision);
    const Figures b1 = measure(file, backend, one, {}, progress);
    const Figures b8 = measure(file, backend, many, {}, progress);
    const Figures pre = measure(file, backend, prefill, {}, progress);
    // Where the time goes and the launches, from a counted run: the CPU backend times no
    // instruction and launches nothing, so it skips that run.
    Figures timed;
    if (backend != "cpu") timed = measure(file, backend, counted, {}, progress);
    const ExecutionPlan plan = decode_plan(file.config);
    fmt::print("tmmu bench-run: {} on {} ({}), {} weights, one run each\n", file.config.name,
               backend, app::run_device(backend), weight_precision_name(one.weight_precision));
    fmt::print("device    copy {:.1f} GB/s ({})\n", rates.copy_bytes_per_second / 1e9,
               rates.copy_how);
    if (rates.matmul_flops_per_second > 0)
        fmt::print("          matrix kernel {} ({})\n", flops_text(rates.matmul_flops_per_second),
                   rates.matmul_how);
    const double bytes =
        bytes_per_token(b1.result, one, unread_table_bytes(plan, one.weight_precision));
    const double achieved = bytes / (b1.step_ms / 1e3);
    fmt::print("decode    batch 1: {:.3f} ms/token, {:.1f} MB read per token: {:.1f} GB/s = "
               "{:.0f}% of copy\n",
               b1.step_ms, bytes / 1e6, achieved / 1e9,
               100.0 * achieved / rates.copy_bytes_per_second);
    const double steps = double(one.decode_tokens - 1);
    const std::string spent = time_per_opcode(timed.result.decode_counters, steps);
    if (!spent.empty())
        fmt::print("          timed per instruction: {:.3f} ms/token; device ms per token: {}\n",
                   timed.step_ms, spent);
    const double tps1 = 1e3 / b1.step_ms, tps8 = many.batch * 1e3 / b8.step_ms;
    fmt::print("batch     batch {}: {:.3f} ms/step, {:.0f} tokens/s = {:.2f}x batch 1 ({:.0f} "
               "tokens/s)\n",
               many.batch, b8.step_ms, tps8, tps8 / tps1, tps1);
    const double prefill_tps = run_rates(pre.result).prefill_tokens_per_second;
    const double flops = 2.0 * weight_values(plan) * prefill_tps;
    fmt::print("prefill   {} tokens: {:.0f} tokens/s, {}", prefill.prompt_tokens, prefill_tps,
               flops_text(flops));
    if (rates.matmul_flops_per_second > 0)
        fmt::print(" = {:.0f}% of the matrix kernel",
                   100.0 * flops / rates.matmul_flops_per_second);
    fmt::print("\n");
    std::vector<std::pair<const char*, const Figures*>> modes;
    Figures eager;
    if (backend == "cuda") {
        eager = measure(file, backend, counted, {false}, progress);
        modes = {{"graph", &timed}, {"eager", &eager}};
    } else if (backend == "vulkan") {
        modes = {{"submit", &timed}};
    }
    bool within = true;
    for (const auto& [mode, f] : modes) {
        const double per_token = double(f->result.decode_counters.launches) / steps;
        const double recorded = baseline_launches(baseline, backend, file.config.name, mode);
        const bool ok = recorded == 0 || per_token <= 1.1 * recorded;
        within = within && ok;
        fmt::print("launches  {}: {:.0f} per token{}\n", mode, per_token,
                   recorded == 0 ? " (no baseline)"
                   : ok          ? fmt::format(" (baseline {:g}: within 1.1x)", recorded)
                                 : fmt::format(" (baseline {:g}: ABOVE 1.1x)", recorded));
    }
    return within ? 0 : 1;
}

} // namespace tmmu::cli
