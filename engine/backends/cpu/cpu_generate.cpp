#include "backends/cpu/cpu_generate.h"

#include "core/failure.h"
#include "encoding/sha256.h"
#include "runtime/plan_compiler.h"
#include "runtime/safetensors.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void check_request(const TransformerConfig& c, const GenerateRequest& r, uint64_t prompt) {
    if (r.batch == 0) fail(FailureCode::InvalidArgument, "batch", "at least one sequence");
    if (prompt == 0) fail(FailureCode::InvalidArgument, "prompt", "at least one prompt token");
    for (int32_t id : r.prompt_ids)
        if (id < 0 || uint64_t(id) >= c.vocab)
            fail(FailureCode::InvalidArgument, "prompt ids",
                 fmt::format("token {} is outside the vocabulary of {}", id, c.vocab));
    if (prompt + r.decode_tokens > c.max_positions)
        fail(FailureCode::InvalidArgument, "prompt + decode",
             fmt::format("{} + {} tokens are more than the model's {} positions", prompt,
                         r.decode_tokens, c.max_positions));
}

// Feeds one logits row to the fingerprint and returns its argmax.
int32_t take(std::span<const float> row, Sha256& hash) {
    hash.update(reinterpret_cast<const uint8_t*>(row.data()), row.size() * sizeof(float));
    return int32_t(std::max_element(row.begin(), row.end()) - row.begin());
}

} // namespace

std::vector<int32_t> seeded_prompt(uint32_t n, uint64_t vocab, uint64_t seed) {
    std::vector<int32_t> ids;
    uint64_t s = seed;
    for (uint32_t i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids.push_back(int32_t((s >> 33) % vocab));
    }
    return ids;
}

GenerateResult generate(const TransformerConfig& c, const GenerateRequest& r,
                        const Progress& progress) {
    const uint64_t prompt = r.prompt_ids.empty() ? r.prompt_tokens : r.prompt_ids.size();
    check_request(c, r, prompt);
    const uint32_t max_seq = r.max_seq ? r.max_seq : uint32_t(prompt + r.decode_tokens);
    const CompiledPlan prefill_plan =
        compile_transformer(c, {PlanMode::Prefill, uint32_t(prompt), max_seq});
    const CompiledPlan decode_plan = compile_transformer(c, {PlanMode::Decode, r.batch, max_seq});
    const WeightStore weights = r.weights_path.empty()
                                    ? random_weights(decode_plan.plan, r.seed)
                                    : load_safetensors(decode_plan.plan, r.weights_path);
    SlotStates states(decode_plan.plan, r.batch);
    CpuProgram prefill(prefill_plan, weights, states, r.layout, r.check_memory);
    CpuProgram decode(decode_plan, weights, states, r.layout, r.check_memory);
    prefill.set_counting(r.counters);
    decode.set_counting(r.counters);
    GenerateResult out;
    out.prefill_register_bytes = prefill.register_bytes();
    out.decode_register_bytes = decode.register_bytes();
    out.weight_bytes = weights.data.size() * sizeof(float);
    for (const StateDescriptor& s : decode_plan.plan.states)
        out.kv_cache_bytes += s.size_bytes * r.batch;
    Sha256 hash;
    std::vector<int32_t> next(r.batch);
    std::vector<uint32_t> slots(r.batch), positions(r.batch, uint32_t(prompt));
    const auto prefill_start = Clock::now();
    for (uint32_t b = 0; b < r.batch; ++b) {
        progress.check_cancel("prefill");
        out.prompt_ids.push_back(
            r.prompt_ids.empty() ? seeded_prompt(uint32_t(prompt), c.vocab, r.seed * 1000003 + b)
                                 : r.prompt_ids);
        std::vector<uint32_t> row_slots(prompt, b), row_positions(prompt);
        for (uint32_t i = 0; i < prompt; ++i)
            row_positions[i] = i;
        const std::span<const float> logits =
            prefill.run(out.prompt_ids.back(), row_slots, row_positions);
        next[b] = take(logits.subspan(logits.size() - c.vocab), hash);
        slots[b] = b;
    }
    out.prefill_seconds = seconds_since(prefill_start);
    out.generated_ids.assign(r.batch, {});
    const auto decode_start = Clock::now();
    for (uint32_t step = 0; step < r.decode_tokens; ++step) {
        progress.check_cancel("decode");
        progress.report(double(step) / r.decode_tokens, "decode");
        for (uint32_t b = 0; b < r.batch; ++b)
            out.generated_ids[b].push_back(next[b]);
        if (step + 1 == r.decode_tokens) break; // the last token needs no logits of its own
        const auto step_start = Clock::now();
        const std::span<const float> logits = decode.run(next, slots, positions);
        out.step_seconds.push_back(seconds_since(step_start));
        for (uint32_t b = 0; b < r.batch; ++b) {
            next[b] = take(logits.subspan(b * c.vocab, c.vocab), hash);
            ++positions[b];
        }
    }
    out.decode_seconds = seconds_since(decode_start);
    out.prefill_counters = prefill.counters();
    out.decode_counters = decode.counters();
    out.logits_hash = hash.finish();
    return out;
}

} // namespace tmmu::cpu
