#pragma once
// A model run as data (seed 002, "Correctness" and A8): what was asked, what every step gave,
// and the fingerprints a replay compares. Backend-neutral: the CPU backend fills it today and
// the GPU backends will fill the same fields; `tmmu run --json` writes it, sessions store it,
// the studio draws it.
#include "core/digest.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::runtime {

// Adapter calls per opcode (seed 002, A8), and the launches they cost a GPU backend.
struct DispatchCounters {
    std::array<uint64_t, 256> per_opcode{};
    uint64_t total = 0;
    // Host-side launches: every kernel enqueued one by one, or 1 for a step replayed as a CUDA
    // graph; 0 on the CPU, which launches nothing.
    uint64_t launches = 0;
    // Device time per opcode (GPU backends, timed with events around every instruction); all 0
    // on the CPU, whose step times are the host's.
    std::array<double, 256> device_seconds{};
    DispatchCounters& operator+=(const DispatchCounters& other);
    bool operator==(const DispatchCounters&) const = default;
};
// What `later` counted that `earlier` had not (later must include earlier).
DispatchCounters counted_since(const DispatchCounters& later, const DispatchCounters& earlier);

enum class RegisterLayout {
    Planned,  // the planner's arena: registers whose lifetimes do not meet share bytes
    Separate, // every register its own bytes: the reference for the planned-vs-unplanned gate
};

// How a GPU backend stores the weights: f32 as given, or the matrices and tables (rank-2
// weights) rounded to f16, halving the bytes a token reads; biases and norm scales stay f32 and
// every sum stays f32. The CPU backend is the f32 reference and keeps f32 either way.
enum class WeightPrecision : uint8_t { F32, F16 };
std::string_view weight_precision_name(WeightPrecision p); // "f32", "f16"

struct RunRequest {
    uint32_t batch = 1;              // sequences, one slot each
    std::vector<int32_t> prompt_ids; // every sequence's prompt; empty: seeded random ids
    uint32_t prompt_tokens = 16;     // length of the seeded prompts
    uint32_t decode_tokens = 32;
    uint64_t seed = 1;        // weights and seeded prompts
    std::string weights_path; // a safetensors file instead of seeded weights
    uint32_t max_seq = 0;     // KV-cache positions per slot; 0: prompt + decode tokens
    bool counters = false;
    bool check_memory = false; // the backend's memory checks on every step
    RegisterLayout layout = RegisterLayout::Planned;
    WeightPrecision weight_precision = WeightPrecision::F32;
};

enum class StepPhase : uint8_t { Prefill, Decode };

// Device memory a GPU run holds once its programs are loaded (seed 000's ApplyPlan made real):
// what the plan asks for (weights, state blocks, register arenas, workspace and step buffers)
// and what the device lost, measured (cudaMemGetInfo before and after); the difference is the
// allocator's rounding and the runtime's own structures. Both 0 on the CPU.
struct DeviceMemory {
    uint64_t planned_bytes = 0, measured_bytes = 0;
    bool operator==(const DeviceMemory&) const = default;
};

// One executed plan step. Prefill runs one step per sequence (its whole prompt); decode runs
// one step for all sequences together. The last generated token needs no step of its own.
struct RunStep {
    StepPhase phase = StepPhase::Decode;
    uint32_t sequence = 0; // prefill: the sequence it filled; decode: 0
    double seconds = 0;
    Digest logits_hash{};        // SHA-256 of the logits rows the step's tokens were taken from
    DispatchCounters dispatches; // during this step; all zero unless counting
};

struct RunResult {
    std::vector<std::vector<int32_t>> prompt_ids, generated_ids; // per sequence
    std::vector<RunStep> steps;                                  // in execution order
    double prefill_seconds = 0, decode_seconds = 0;
    DispatchCounters prefill_counters, decode_counters;
    Digest logits_hash{}; // SHA-256 over every step's logits rows in order: the parity fingerprint
    uint64_t prefill_register_bytes = 0, decode_register_bytes = 0;
    uint64_t kv_cache_bytes = 0, weight_bytes = 0;
    DeviceMemory device_memory; // GPU backends: what the run holds on the device
    // Device time per instruction of the prefill and decode programs, summed over their counted
    // steps (GPU backends, counting runs); empty otherwise.
    std::vector<double> prefill_instruction_seconds, decode_instruction_seconds;

    std::vector<double> decode_step_seconds() const;
};

// Throughput and latency as `tmmu run` prints them.
struct RunRates {
    double prefill_tokens_per_second = 0, decode_tokens_per_second = 0;
    double step_ms_p50 = 0, step_ms_p95 = 0;
};
RunRates run_rates(const RunResult& result);

// Tokens step `step` chose, one per sequence it served (prefill: its sequence's first
// generated token; decode: every sequence's next one).
std::vector<int32_t> tokens_of_step(const RunResult& result, size_t step);

struct RunParity {
    std::string reference; // what the run was compared with
    bool identical = false;
    Digest reference_logits_hash{};
};

// Everything about one run: enough to show it and to run it again.
struct RunRecord {
    std::string backend = "cpu";
    std::string device;      // "f32 reference, one thread", a GPU's name, ...
    std::string model;       // the config's name
    std::string config_path; // where the config came from
    std::string config_text; // the config.json itself, so a replay needs no file
    RunRequest request;
    RunResult result;
    std::optional<RunParity> parity;
};

// The run as JSON ("format": "tmmu-run", resources/docs/outputs.md). Deterministic apart from
// the timings.
std::string run_record_json(const RunRecord& record);
// INVALID_ARGUMENT naming `origin` and the field for anything that is not such a document.
RunRecord parse_run_record(std::string_view text, std::string_view origin);

// A replay against its recording: identical, or the first step that differs and how.
struct RunComparison {
    bool identical = false;
    std::optional<size_t> first_step; // unset when identical
    std::string difference;           // one line for people; empty when identical
};
RunComparison compare_runs(const RunResult& recorded, const RunResult& replayed);

std::string_view step_phase_name(StepPhase phase); // "prefill", "decode"

} // namespace tmmu::runtime
