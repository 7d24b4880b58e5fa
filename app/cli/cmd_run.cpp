// tmmu run: a transformer config's compiled plans executed on a backend (seed 002).
#include "commands.h"
#include "interrupt.h"

#include "backend_registry.h"
#include "model_run.h"
#include "run_store.h"

#include "core/failure.h"
#include "io/file_io.h"
#include "models/transformer_config.h"
#include "runtime/backend_parity.h"
#include "runtime/generate.h"
#include "runtime/run_record.h"
#include "runtime/run_summary.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace tmmu::cli {
namespace {

using namespace tmmu::runtime;

constexpr const char* kHelp =
    R"(usage: tmmu run [CONFIG] [--backend cpu|vulkan|cuda] [--batch B] [--prompt N | --prompt-ids 1,2,3]
                [--decode M] [--seed S] [--weights F] [--max-seq N] [--verify]
                [--weight-precision f32|f16] [--compare-cpu] [--no-graph] [--check-memory]
                [--counters] [--json OUT|-]
                [--record [--title T] [--sessions PATH]]

Runs a GPT-2, Llama, Mistral or Qwen2 config.json (default: the bundled GPT-2 small) on a
backend: compiles its prefill and decode plans (tmmu compile), packs their registers with the planner, reads the
weights from a Hugging Face safetensors file or fills them with seeded random values (the same
seed, the same weights), prefills every sequence's prompt into its own slot, then decodes all
sequences together, greedily (argmax).

options:
  --backend NAME    cpu (the f32 reference backend; default), vulkan (the first Vulkan
                    device that can run it: VK_DRIVER_FILES picks the driver, Mesa's
                    lavapipe runs it on the CPU) or cuda (device 0; needs a build with
                    nvcc and an NVIDIA GPU). `tmmu devices` says what this machine offers
                    and why a backend cannot run.
  --batch B         sequences decoded together, one slot each (default 1)
  --prompt N        length of the seeded random prompts (default 16)
  --prompt-ids IDS  the prompt of every sequence, comma-separated token ids
  --decode M        tokens to generate per sequence (default 32)
  --seed S          seed of the weights and prompts (default 1)
  --weights F       the model's weights from a safetensors file (F32, F16 or BF16), e.g. a
                    Hugging Face GPT-2, Llama, Mistral or Qwen2 checkpoint matching CONFIG
  --max-seq N       KV-cache positions per slot (default: prompt + decode tokens)
  --weight-precision f32|f16
                    how a GPU backend stores the weights: f32 (default), or the matrices
                    and embedding tables as f16 (half the bytes a token reads; sums stay
                    f32; --compare-cpu then passes at NMSE <= 1e-3). The CPU backend is the
                    f32 reference and refuses f16
  --verify          run again with a buffer per register and compare the logits bit for bit
  --compare-cpu     run the CPU backend too, then this backend on the CPU's tokens, and
                    compare every step's logits: passes at NMSE <= 1e-5 with the same
                    argmax on all but one row in 64 (exit status 1 otherwise)
  --no-graph        CUDA: launch every kernel each decode step instead of replaying the
                    step as a CUDA graph (compare launches per token with --counters)
  --check-memory    guard bytes around every register, fingerprints checked at every read,
                    dead registers poisoned: a plan or adapter that corrupts live data stops
                    with ADDRESS_COLLISION naming the instruction, register and bytes (slow;
                    on the GPU backends the checks run on the device)
  --counters        count adapter dispatches per opcode and the kernel launches they cost
                    (off by default: no counting cost)
  --json OUT|-      write ids, timings, memory, counters, every step's logits hash and
                    parity as JSON (outputs.md)
  --record          record the run in the sessions database: `tmmu session runs` lists
                    recorded runs, `tmmu session replay-run ID` runs one again and compares
  --title T         title of the recorded run
  --sessions PATH   sessions database (default $XDG_DATA_HOME/tmmu/sessions.db)

Prints the prompt and generated ids, prefill and decode throughput, per-step latency, memory,
and with --verify the parity verdict. Ctrl+C stops between steps (CANCELLED, exit status 19).
)";

std::vector<int32_t> parse_ids(const std::string& text) {
    std::vector<int32_t> ids;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = std::min(text.find(',', at), text.size());
        int32_t id = 0;
        const auto [end, ec] = std::from_chars(text.data() + at, text.data() + comma, id);
        if (ec != std::errc() || end != text.data() + comma || id < 0)
            fail(FailureCode::InvalidArgument, "--prompt-ids",
                 fmt::format("'{}': expected comma-separated token ids, e.g. 464,2068,318", text));
        ids.push_back(id);
        at = comma + 1;
    }
    return ids;
}

uint32_t small_positive(Args& args, const char* option, uint32_t fallback) {
    const auto v = args.value(option);
    if (!v) return fallback;
    const uint64_t n = app::parse_positive(*v, option);
    if (n > 1'000'000) fail(FailureCode::InvalidArgument, option, "at most 1000000");
    return uint32_t(n);
}

RunRequest request_from(Args& args) {
    RunRequest r;
    r.batch = small_positive(args, "--batch", 1);
    const auto ids = args.value("--prompt-ids");
    if (ids && args.value("--prompt"))
        fail(FailureCode::InvalidArgument, "--prompt", "give --prompt or --prompt-ids, not both");
    if (ids) r.prompt_ids = parse_ids(*ids);
    r.prompt_tokens = small_positive(args, "--prompt", 16);
    r.decode_tokens = small_positive(args, "--decode", 32);
    if (const auto seed = args.value("--seed")) r.seed = app::parse_positive(*seed, "--seed");
    r.max_seq = small_positive(args, "--max-seq", 0);
    r.counters = args.flag("--counters");
    r.check_memory = args.flag("--check-memory");
    if (const auto weights = args.value("--weights")) r.weights_path = *weights;
    if (const auto precision = args.value("--weight-precision"))
        r.weight_precision = app::parse_weight_precision(*precision, "--weight-precision");
    return r;
}

// The backend a run asked for, as the run loop takes it.
struct Backend {
    std::string name = "cpu";
    app::BackendRunOptions options;
    runtime::ExecutorFactory factory;
};

Backend backend_from(Args& args) {
    Backend b;
    b.name = args.value("--backend").value_or("cpu");
    app::check_runnable_backend(b.name, "--backend");
    b.options.cuda_graphs = !args.flag("--no-graph");
    if (!b.options.cuda_graphs && b.name != "cuda")
        fail(FailureCode::InvalidArgument, "--no-graph", "only applies with --backend cuda");
    b.factory = app::executor_factory(b.name, b.options);
    return b;
}

// --verify: the same run with a buffer per register must give the same logits bit for bit.
RunParity verify(const ConfigFile& file, const RunRecord& planned, const Backend& backend,
                 const Progress& progress) {
    RunRequest separate = planned.request;
    separate.layout = RegisterLayout::Separate;
    separate.counters = false;
    const RunResult reference = generate(file.config, separate, backend.factory, progress);
    return {"a buffer per register",
            reference.logits_hash == planned.result.logits_hash &&
                reference.generated_ids == planned.result.generated_ids,
            reference.logits_hash};
}

// --compare-cpu: issue 13's gate (app::compare_with_cpu), NMSE <= 1e-5 for f32 weights and
// 1e-3 for f16.
struct CpuComparison {
    bool passes = true;
    std::string line; // empty unless compared
};

CpuComparison compare_with_cpu(const ConfigFile& file, const RunRequest& request,
                               const Backend& backend, const Progress& progress) {
    const BackendParity p =
        app::compare_with_cpu(backend.name, backend.options, file.config, request, progress);
    return {app::passes_cpu_gate(p, request.weight_precision),
            app::cpu_gate_line(backend.name, p, request.weight_precision) + "\n"};
}

Progress progress_on_terminal() {
    Progress progress = interruptible_progress();
    if (::isatty(STDERR_FILENO))
        progress.on_progress = [](double done, std::string_view stage) {
            fmt::print(stderr, "\r{} {:3.0f}%", stage, done * 100);
        };
    return progress;
}

void clear_progress_line() {
    if (::isatty(STDERR_FILENO)) fmt::print(stderr, "\r            \r");
}

} // namespace

void print_run(const RunRecord& rec) {
    std::fputs(format_run(rec).c_str(), stdout);
}

int replay_run(const RunRecord& recorded, const Progress& progress) {
    const RunResult replayed = app::rerun(recorded, progress);
    clear_progress_line();
    const RunComparison c = compare_runs(recorded.result, replayed);
    std::fputs(format_replay(c, replayed).c_str(), stdout);
    return c.identical ? 0 : 1;
}

int cmd_run(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const RunRequest request = request_from(args);
    const Backend backend = backend_from(args);
    const bool verify_asked = args.flag("--verify");
    const bool compare_asked = args.flag("--compare-cpu");
    if (compare_asked && backend.name == "cpu")
        fail(FailureCode::InvalidArgument, "--compare-cpu",
             "compares another backend with the CPU");
    const auto json_out = args.value("--json");
    const bool record = args.flag("--record");
    const auto title = args.value("--title");
    const auto sessions = args.value("--sessions");
    if (!record && (title || sessions))
        fail(FailureCode::InvalidArgument, title ? "--title" : "--sessions",
             "only applies with --record");
    const ConfigFile file = config_argument(args, "tmmu run");
    const Progress progress = progress_on_terminal();
    RunRecord rec = app::run_model(backend.name, backend.options, file.path, file.text, request,
                                   progress, "--backend");
    if (verify_asked) rec.parity = verify(file, rec, backend, progress);
    const bool to_stdout = sends_one_output_to_stdout({{"--json", json_out}});
    const CpuComparison compared =
        compare_asked ? compare_with_cpu(file, request, backend, progress) : CpuComparison{};
    clear_progress_line();
    if (!to_stdout) print_run(rec);
    std::fputs(compared.line.c_str(), to_stdout ? stderr : stdout);
    if (json_out) write_output(*json_out, run_record_json(rec));
    if (record) {
        sessions::SessionStore store(sessions_db_path(sessions));
        const int64_t id = sessions::record_run(store, rec, title.value_or(""));
        fmt::print(to_stdout ? stderr : stdout, "recorded run {} in {}\n", id, store.path());
    }
    return (rec.parity && !rec.parity->identical) || !compared.passes ? 1 : 0;
}

} // namespace tmmu::cli
