#include "runtime/generate.h"

#include "core/failure.h"
#include "encoding/sha256.h"
#include "runtime/plan_compiler.h"
#include "runtime/safetensors.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace tmmu::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void check_request(const TransformerConfig& c, const RunRequest& r, uint64_t prompt) {
    if (r.batch == 0) fail(FailureCode::InvalidArgument, "batch", "at least one sequence");
    if (prompt == 0) fail(FailureCode::InvalidArgument, "prompt", "at least one prompt token");
    if (r.decode_tokens == 0)
        fail(FailureCode::InvalidArgument, "decode", "at least one token to generate");
    for (int32_t id : r.prompt_ids)
        if (id < 0 || uint64_t(id) >= c.vocab)
            fail(FailureCode::InvalidArgument, "prompt ids",
                 fmt::format("token {} is outside the vocabulary of {}", id, c.vocab));
    if (prompt + r.decode_tokens > c.max_positions)
        fail(FailureCode::InvalidArgument, "prompt + decode",
             fmt::format("{} + {} tokens are more than the model's {} positions", prompt,
                         r.decode_tokens, c.max_positions));
}

void check_follow(const RunRequest& r, const RunResult& follow) {
    bool fits = follow.prompt_ids.size() == r.batch && follow.generated_ids.size() == r.batch;
    for (uint32_t b = 0; fits && b < r.batch; ++b)
        fits = follow.generated_ids[b].size() == r.decode_tokens;
    if (!fits)
        fail(FailureCode::InvalidArgument, "follow",
             "the run to follow has another number of sequences or tokens");
}

// Records steps as they run: time, logits fingerprint (each step's own, and the run's over
// all steps in order) and, when counting, the dispatches the step made.
class StepRecorder {
  public:
    StepRecorder(RunResult& out, bool counting, const LogitsObserver& observer)
        : out_(out), counting_(counting), observer_(observer) {}

    void start(const Program& program) {
        program_ = &program;
        if (counting_) before_ = program.counters();
        start_ = Clock::now(); // last: the step's time is the step's alone
    }
    // Logits rows [rows.size() / vocab][vocab] of the step just run; returns each row's argmax.
    std::vector<int32_t> finish(StepPhase phase, uint32_t sequence, std::span<const float> rows,
                                size_t vocab) {
        RunStep step{phase, sequence, seconds_since(start_), {}, {}};
        const auto* bytes = reinterpret_cast<const uint8_t*>(rows.data());
        Sha256 own;
        own.update(bytes, rows.size_bytes());
        run_.update(bytes, rows.size_bytes());
        step.logits_hash = own.finish();
        if (counting_) step.dispatches = counted_since(program_->counters(), before_);
        if (observer_) observer_(out_.steps.size(), rows);
        out_.steps.push_back(step);
        std::vector<int32_t> argmax;
        for (size_t at = 0; at < rows.size(); at += vocab)
            argmax.push_back(
                int32_t(std::max_element(rows.begin() + long(at), rows.begin() + long(at + vocab)) -
                        (rows.begin() + long(at))));
        return argmax;
    }
    Digest run_hash() { return run_.finish(); }

  private:
    RunResult& out_;
    bool counting_;
    const LogitsObserver& observer_;
    const Program* program_ = nullptr; // the one running the current step
    Clock::time_point start_;
    DispatchCounters before_;
    Sha256 run_;
};

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

RunResult generate(const TransformerConfig& c, const RunRequest& r, const ExecutorFactory& backend,
                   const Progress& progress, const GenerateHooks& hooks) {
    const uint64_t prompt = r.prompt_ids.empty() ? r.prompt_tokens : r.prompt_ids.size();
    check_request(c, r, prompt);
    if (hooks.follow) check_follow(r, *hooks.follow);
    const uint32_t max_seq = r.max_seq ? r.max_seq : uint32_t(prompt + r.decode_tokens);
    const CompiledPlan prefill_plan =
        compile_transformer(c, {PlanMode::Prefill, uint32_t(prompt), max_seq});
    const CompiledPlan decode_plan = compile_transformer(c, {PlanMode::Decode, r.batch, max_seq});
    RunResult out;
    std::unique_ptr<Executor> executor;
    {
        WeightStore weights = r.weights_path.empty()
                                  ? random_weights(decode_plan.plan, r.seed)
                                  : load_safetensors(decode_plan.plan, r.weights_path);
        out.weight_bytes = weights.data.size() * sizeof(float);
        executor = backend(decode_plan.plan, std::move(weights), r);
    }
    if (const uint64_t held = executor->weight_bytes()) out.weight_bytes = held; // f16 runs
    const std::unique_ptr<Program> prefill = executor->load(prefill_plan);
    const std::unique_ptr<Program> decode = executor->load(decode_plan);
    prefill->set_counting(r.counters);
    decode->set_counting(r.counters);
    out.device_memory = executor->device_memory();
    out.prefill_register_bytes = prefill->register_bytes();
    out.decode_register_bytes = decode->register_bytes();
    for (const StateDescriptor& s : decode_plan.plan.states)
        out.kv_cache_bytes += s.size_bytes * r.batch;
    const double total_steps = double(r.batch + r.decode_tokens - 1);
    StepRecorder recorder(out, r.counters, hooks.on_logits);
    std::vector<int32_t> next(r.batch);
    std::vector<uint32_t> slots(r.batch), positions(r.batch, uint32_t(prompt));
    const auto prefill_start = Clock::now();
    for (uint32_t b = 0; b < r.batch; ++b) {
        progress.check_cancel("prefill");
        progress.report(double(b) / total_steps, "prefill");
        out.prompt_ids.push_back(
            r.prompt_ids.empty() ? seeded_prompt(uint32_t(prompt), c.vocab, r.seed * 1000003 + b)
                                 : r.prompt_ids);
        std::vector<uint32_t> row_slots(prompt, b), row_positions(prompt);
        for (uint32_t i = 0; i < prompt; ++i)
            row_positions[i] = i;
        recorder.start(*prefill);
        const std::span<const float> logits =
            prefill->run(out.prompt_ids.back(), row_slots, row_positions);
        next[b] = recorder.finish(StepPhase::Prefill, b, logits.subspan(logits.size() - c.vocab),
                                  c.vocab)[0];
        if (hooks.follow) next[b] = hooks.follow->generated_ids[b][0];
        slots[b] = b;
    }
    out.prefill_seconds = seconds_since(prefill_start);
    out.generated_ids.assign(r.batch, {});
    const auto decode_start = Clock::now();
    for (uint32_t step = 0; step < r.decode_tokens; ++step) {
        progress.check_cancel("decode");
        progress.report(double(r.batch + step) / total_steps, "decode");
        for (uint32_t b = 0; b < r.batch; ++b)
            out.generated_ids[b].push_back(next[b]);
        if (step + 1 == r.decode_tokens) break; // the last token needs no logits of its own
        recorder.start(*decode);
        const std::span<const float> logits = decode->run(next, slots, positions);
        next = recorder.finish(StepPhase::Decode, 0, logits, c.vocab);
        for (uint32_t b = 0; b < r.batch; ++b) {
            if (hooks.follow) next[b] = hooks.follow->generated_ids[b][step + 1];
            ++positions[b];
        }
    }
    out.decode_seconds = seconds_since(decode_start);
    out.prefill_counters = prefill->counters();
    out.decode_counters = decode->counters();
    out.prefill_instruction_seconds = prefill->instruction_seconds();
    out.decode_instruction_seconds = decode->instruction_seconds();
    out.logits_hash = recorder.run_hash();
    return out;
}

RunResult rerun(const RunRecord& record, const ExecutorFactory& backend, const Progress& progress) {
    return generate(parse_transformer_config(record.config_text, record.config_path),
                    record.request, backend, progress);
}

} // namespace tmmu::runtime
