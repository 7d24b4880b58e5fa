// tmmu-parity-bench: the CPU backend's parity gate (seed 002, "Correctness") at full model size.
// For the bundled GPT-2 small and TinyLlama 1.1B configs with seeded random weights, it prefills
// a seeded prompt, decodes greedily, and holds every step's logits row (the prefill's last row,
// then one per decode step) to the naive double-precision forward pass of
// tests/support/naive_transformer.h: NMSE <= 1e-6 and the same argmax at every step. The
// reference is causal, so one pass over the final sequence gives every step's logits at once.
// test_cpu_backend holds tiny models to the same gate in CTest; this is not a CTest test because
// at full size (TinyLlama: 4.4 GB of f32 weights) the naive reference takes minutes.
// Exit status 0 when every model passes, 1 otherwise.
//     tmmu-parity-bench [--model gpt2-small|tinyllama|all] [--steps N] [--prompt N] [--seed S]
#include "backends/cpu/cpu_generate.h"
#include "backends/cpu/cpu_program.h"
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#include "naive_transformer.h"
#include "runtime/generate.h"
#include "runtime/plan_compiler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <fmt/format.h>
#include <span>
#include <string>
#include <utility>
#include <vector>

using namespace tmmu;
using namespace tmmu::runtime;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double gate_nmse = 1e-6;

struct Options {
    std::vector<std::string> configs; // paths of the configs to check
    uint32_t steps = 64, prompt = 8;
    uint64_t seed = 1; // weights and prompt
};

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename Row>
int32_t argmax(const Row& v) {
    return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

// sum (got - want)^2 / sum want^2 over one logits row.
double nmse(const std::vector<float>& got, const std::vector<double>& want) {
    double err = 0, ref = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        ref += want[i] * want[i];
    }
    return err / ref;
}

// Runs one config through the gate and prints its figures; returns whether it passed.
bool check(const std::string& path, const Options& o) {
    const TransformerConfig c = load_transformer_config(path);
    const auto stage = [&](const std::string& what) {
        fmt::print(stderr, "[{}] {}\n", c.name, what);
    };
    const uint32_t max_seq = o.prompt + o.steps;
    stage("compiling plans");
    CompiledPlan decode_plan = compile_transformer(c, {PlanMode::Decode, 1, max_seq});
    stage(fmt::format("seeded random weights ({} parameters)", parameter_count(c)));
    const WeightStore weights = random_weights(decode_plan.plan, o.seed);
    cpu::SlotStates states(decode_plan.plan, 1);
    cpu::CpuProgram prefill(compile_transformer(c, {PlanMode::Prefill, o.prompt, max_seq}), weights,
                            states);
    cpu::CpuProgram decode(std::move(decode_plan), weights, states);

    stage(fmt::format("CPU backend: prefill {} tokens, decode {} steps", o.prompt, o.steps));
    std::vector<int32_t> sequence = runtime::seeded_prompt(o.prompt, c.vocab, o.seed);
    std::vector<uint32_t> row_slots(o.prompt, 0), positions(o.prompt);
    for (uint32_t i = 0; i < o.prompt; ++i)
        positions[i] = i;
    const auto cpu_start = Clock::now();
    std::span<const float> logits = prefill.run(sequence, row_slots, positions);
    logits = logits.subspan(logits.size() - c.vocab);
    std::vector<std::vector<float>> rows; // step s: the logits at position prompt - 1 + s
    for (uint32_t s = 0;; ++s) {
        rows.emplace_back(logits.begin(), logits.end());
        if (s == o.steps) break;
        const int32_t next = argmax(logits);
        sequence.push_back(next);
        const uint32_t slot = 0, pos = uint32_t(sequence.size() - 1);
        logits = decode.run({&next, 1}, {&slot, 1}, {&pos, 1});
    }
    const double cpu_seconds = seconds_since(cpu_start);

    stage(fmt::format("naive reference over {} tokens", sequence.size()));
    const auto ref_start = Clock::now();
    const std::vector<std::vector<double>> ref =
        test::naive_logits(c, decode.plan().plan, weights, sequence);
    const double ref_seconds = seconds_since(ref_start);

    double worst = 0, sum = 0;
    size_t worst_step = 0, agree = 0, over = 0;
    for (size_t s = 0; s < rows.size(); ++s) {
        const std::vector<double>& want = ref[o.prompt - 1 + s];
        const double e = nmse(rows[s], want);
        // Written so that a NaN counts as worst and as over the gate.
        if (!(e <= worst)) {
            worst = e;
            worst_step = s;
        }
        sum += e;
        over += !(e <= gate_nmse);
        agree += argmax(rows[s]) == argmax(want);
    }
    const bool pass = over == 0 && agree == rows.size();
    fmt::print("{}: {} parameters, {:.1f} MB of f32 weights, seed {}\n", c.name, parameter_count(c),
               double(weights.data.size() * sizeof(float)) / 1e6, o.seed);
    fmt::print("  steps     {}-token prompt, {} decode steps: {} logits rows checked\n", o.prompt,
               o.steps, rows.size());
    fmt::print("  NMSE      worst {:.3g} (step {}), mean {:.3g}\n", worst, worst_step,
               sum / double(rows.size()));
    fmt::print("  argmax    agrees {}/{}\n", agree, rows.size());
    fmt::print("  time      CPU backend {:.2f} s (prefill + decode), naive reference {:.1f} s\n",
               cpu_seconds, ref_seconds);
    if (pass)
        fmt::print("  verdict   PASS (NMSE <= {:g} and the same argmax at every step)\n",
                   gate_nmse);
    else
        fmt::print("  verdict   FAIL ({} steps with NMSE > {:g}, {} with another argmax)\n", over,
                   gate_nmse, rows.size() - agree);
    return pass;
}

} // namespace

int main(int argc, char** argv) {
    const std::string models = TMMU_SOURCE_DIR "/resources/models/";
    const std::string gpt2 = models + "gpt2-small.json", llama = models + "tinyllama-1.1b.json";
    Options o;
    o.configs = {gpt2, llama};
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            const std::string value = i + 1 < argc ? argv[i + 1] : "";
            if (a == "--model" && value == "gpt2-small")
                o.configs = {gpt2};
            else if (a == "--model" && value == "tinyllama")
                o.configs = {llama};
            else if (a == "--model" && value == "all")
                o.configs = {gpt2, llama};
            else if (a == "--steps" && !value.empty())
                o.steps = uint32_t(std::stoul(value));
            else if (a == "--prompt" && !value.empty())
                o.prompt = uint32_t(std::stoul(value));
            else if (a == "--seed" && !value.empty())
                o.seed = std::stoull(value);
            else {
                fmt::print(stderr, "usage: tmmu-parity-bench [--model gpt2-small|tinyllama|all] "
                                   "[--steps N] [--prompt N] [--seed S]\n");
                return 1;
            }
            ++i;
        }
        bool all_pass = true;
        for (const std::string& path : o.configs)
            all_pass = check(path, o) && all_pass;
        return all_pass ? 0 : 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "tmmu-parity-bench: {}\n", e.what());
        return 1;
    }
}
