// tmmu run: a transformer config's compiled plans executed on a backend (seed 002).
#include "commands.h"
#include "interrupt.h"

#include "backends/cpu/cpu_generate.h"
#include "core/failure.h"
#include "core/units.h"
#include "io/file_io.h"
#include "models/transformer_config.h"
#include "runtime/opcode.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace tmmu::cli {
namespace {

using namespace tmmu::runtime;
using tmmu::cpu::GenerateRequest;
using tmmu::cpu::GenerateResult;

constexpr const char* kHelp =
    R"(usage: tmmu run [CONFIG] [--backend cpu] [--batch B] [--prompt N | --prompt-ids 1,2,3]
                [--decode M] [--seed S] [--weights F] [--max-seq N] [--verify]
                [--check-memory] [--counters] [--json OUT|-]

Runs a GPT-2 or Llama config.json (default: the bundled GPT-2 small) on a backend: compiles its
prefill and decode plans (tmmu compile), packs their registers with the planner, reads the
weights from a Hugging Face safetensors file or fills them with seeded random values (the same
seed, the same weights), prefills every sequence's
prompt into its own slot, then decodes all sequences together, greedily (argmax).

options:
  --backend NAME    cpu (the f32 reference backend; default). GPU backends are not built yet.
  --batch B         sequences decoded together, one slot each (default 1)
  --prompt N        length of the seeded random prompts (default 16)
  --prompt-ids IDS  the prompt of every sequence, comma-separated token ids
  --decode M        tokens to generate per sequence (default 32)
  --seed S          seed of the weights and prompts (default 1)
  --weights F       the model's weights from a safetensors file (F32, F16 or BF16), e.g. a
                    Hugging Face GPT-2 or Llama checkpoint matching CONFIG
  --max-seq N       KV-cache positions per slot (default: prompt + decode tokens)
  --verify          run again with a buffer per register and compare the logits bit for bit
  --check-memory    guard bytes around every register, fingerprints checked at every read,
                    dead registers poisoned: a plan or adapter that corrupts live data stops
                    with ADDRESS_COLLISION naming the instruction, register and bytes (slow)
  --counters        count adapter dispatches per opcode (off by default: no counting cost)
  --json OUT|-      write ids, timings, memory, counters and parity as JSON (outputs.md)

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

GenerateRequest request_from(Args& args) {
    const std::string backend = args.value("--backend").value_or("cpu");
    if (backend != "cpu")
        fail(FailureCode::InvalidArgument, "--backend",
             fmt::format("'{}': only cpu is built (the Vulkan and CUDA backends are not "
                         "implemented yet)",
                         backend));
    GenerateRequest r;
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
    return r;
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

struct Rates {
    double prefill_tps, decode_tps, p50_ms, p95_ms;
};

Rates rates_of(const GenerateResult& g, uint32_t batch) {
    double decode_total = 0;
    for (double s : g.step_seconds)
        decode_total += s;
    const double prompt = double(g.prompt_ids.front().size()) * batch;
    return {prompt / std::max(g.prefill_seconds, 1e-9),
            double(g.step_seconds.size()) * batch / std::max(decode_total, 1e-9),
            percentile(g.step_seconds, 0.5) * 1e3, percentile(g.step_seconds, 0.95) * 1e3};
}

std::string ids_text(const std::vector<int32_t>& ids) {
    return fmt::format("{}", fmt::join(ids, " "));
}

nlohmann::ordered_json counters_json(const cpu::DispatchCounters& c) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (Opcode op : kAllOpcodes)
        if (c.per_opcode[uint8_t(op)])
            per[std::string(opcode_name(op))] = c.per_opcode[uint8_t(op)];
    return {{"per_opcode", per}, {"total", c.total}};
}

std::string counters_text(const cpu::DispatchCounters& c) {
    std::string out;
    for (Opcode op : kAllOpcodes)
        if (c.per_opcode[uint8_t(op)])
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ", opcode_name(op),
                               c.per_opcode[uint8_t(op)]);
    return fmt::format("{}; total {}", out, c.total);
}

void print_run(const TransformerConfig& c, const GenerateRequest& r, const GenerateResult& g,
               const Rates& rates) {
    fmt::print("model      {} ({}, {} layers), {}\n", c.name, family_name(c.family), c.n_layer,
               r.weights_path.empty() ? fmt::format("seeded random weights (seed {})", r.seed)
                                      : "weights from " + r.weights_path);
    fmt::print("backend    cpu (f32 reference, one thread)\n");
    for (size_t b = 0; b < g.prompt_ids.size(); ++b)
        fmt::print("sequence {} prompt    {}\n           generated {}\n", b,
                   ids_text(g.prompt_ids[b]), ids_text(g.generated_ids[b]));
    fmt::print("prefill    {} tokens in {:.3f} s: {:.1f} tokens/s\n",
               g.prompt_ids.front().size() * r.batch, g.prefill_seconds, rates.prefill_tps);
    fmt::print("decode     {} steps x {} sequences: {:.1f} tokens/s; per step p50 {:.2f} ms, "
               "p95 {:.2f} ms\n",
               g.step_seconds.size(), r.batch, rates.decode_tps, rates.p50_ms, rates.p95_ms);
    fmt::print("memory     weights {}, KV cache {}, registers {} (decode) and {} (prefill)\n",
               format_bytes(g.weight_bytes), format_bytes(g.kv_cache_bytes),
               format_bytes(g.decode_register_bytes), format_bytes(g.prefill_register_bytes));
    if (r.counters) {
        fmt::print("dispatches prefill: {}\n", counters_text(g.prefill_counters));
        fmt::print("           decode:  {}\n", counters_text(g.decode_counters));
    }
    fmt::print("logits     sha256 {}\n", to_hex(g.logits_hash));
}

nlohmann::ordered_json run_json(const GenerateRequest& r, const GenerateResult& g,
                                const Rates& rates, const nlohmann::ordered_json& parity) {
    return {{"format", "tmmu-run"},
            {"version", 1},
            {"backend", "cpu"},
            {"seed", r.seed},
            {"batch", r.batch},
            {"prompt_ids", g.prompt_ids},
            {"generated_ids", g.generated_ids},
            {"timings",
             {{"prefill_seconds", g.prefill_seconds},
              {"decode_seconds", g.decode_seconds},
              {"prefill_tokens_per_second", rates.prefill_tps},
              {"decode_tokens_per_second", rates.decode_tps},
              {"step_ms_p50", rates.p50_ms},
              {"step_ms_p95", rates.p95_ms}}},
            {"memory",
             {{"weight_bytes", g.weight_bytes},
              {"kv_cache_bytes", g.kv_cache_bytes},
              {"decode_register_bytes", g.decode_register_bytes},
              {"prefill_register_bytes", g.prefill_register_bytes}}},
            {"counters",
             r.counters ? nlohmann::ordered_json{{"prefill", counters_json(g.prefill_counters)},
                                                 {"decode", counters_json(g.decode_counters)}}
                        : nlohmann::ordered_json(nullptr)},
            {"logits_sha256", to_hex(g.logits_hash)},
            {"parity", parity}};
}

} // namespace

int cmd_run(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const GenerateRequest request = request_from(args);
    const bool verify = args.flag("--verify");
    const auto json_out = args.value("--json");
    const TransformerConfig config = config_argument(args, "tmmu run");
    Progress progress = interruptible_progress();
    if (::isatty(STDERR_FILENO))
        progress.on_progress = [](double done, std::string_view stage) {
            fmt::print(stderr, "\r{} {:3.0f}%", stage, done * 100);
        };
    const GenerateResult result = cpu::generate(config, request, progress);
    if (::isatty(STDERR_FILENO)) fmt::print(stderr, "\r            \r");
    nlohmann::ordered_json parity = nullptr;
    if (verify) {
        GenerateRequest separate = request;
        separate.layout = cpu::RegisterLayout::Separate;
        separate.counters = false;
        const GenerateResult reference = cpu::generate(config, separate, progress);
        const bool same = reference.logits_hash == result.logits_hash &&
                          reference.generated_ids == result.generated_ids;
        parity = {{"reference", "a buffer per register"},
                  {"identical", same},
                  {"reference_logits_sha256", to_hex(reference.logits_hash)}};
    }
    const Rates rates = rates_of(result, request.batch);
    const bool to_stdout = sends_one_output_to_stdout({{"--json", json_out}});
    if (!to_stdout) {
        print_run(config, request, result, rates);
        if (verify)
            fmt::print("parity     planned registers vs a buffer per register: {}\n",
                       parity["identical"].get<bool>() ? "bit-identical logits"
                                                       : "DIFFERENT logits");
    }
    if (json_out) write_output(*json_out, run_json(request, result, rates, parity).dump(2) + "\n");
    return verify && !parity["identical"].get<bool>() ? 1 : 0;
}

} // namespace tmmu::cli
