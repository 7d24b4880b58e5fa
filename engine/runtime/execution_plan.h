#pragma once
// The runtime's plan (seed 002, A1, A2, A4): instructions over logical registers, weights and
// state blocks, with the liveness that lets a backend reuse physical memory. A plan is compiled
// once at model load (plan_compiler.h) and checked once (compile_plan below); nothing in it is
// parsed or validated again per token.
#include "runtime/opcode.h"
#include "runtime/param_block.h"
#include "runtime/state.h"
#include "runtime/tensor_view.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::runtime {

// A logical register: one value an instruction writes once and later ones read. Backends map
// registers to physical buffers (PhysicalMapping); the executor never looks inside.
struct RegisterRef {
    uint16_t id = 0;
    auto operator<=>(const RegisterRef&) const = default;
};
struct WeightRef {
    uint32_t index = 0;
    auto operator<=>(const WeightRef&) const = default;
};
inline constexpr uint8_t kNoStateBlock = 0xFF;

struct RegisterDesc {
    std::string name; // "h3.attn_out"
    TensorViewDesc view;
    bool operator==(const RegisterDesc&) const = default;
};
struct WeightDesc {
    std::string name; // the Hugging Face parameter name, "h.3.attn.c_attn.weight"
    TensorViewDesc view;
    bool operator==(const WeightDesc&) const = default;
};

struct Instruction {
    Opcode opcode = Opcode::RmsNorm;
    std::vector<RegisterRef> inputs, outputs;
    std::vector<WeightRef> weights;
    uint32_t param_block = 0;            // index into ExecutionPlan::params
    uint8_t state_block = kNoStateBlock; // index into ExecutionPlan::states
    bool operator==(const Instruction&) const = default;
};

enum class PlanMode : uint8_t {
    Decode,  // one new token per active slot: registers are [slots, width]
    Prefill, // a whole prompt of one request: registers are [tokens, width]
};
std::string_view plan_mode_name(PlanMode mode); // "decode", "prefill"

struct ExecutionPlan {
    std::string name;
    PlanMode mode = PlanMode::Decode;
    uint32_t rows = 1; // decode: slots; prefill: prompt tokens
    std::vector<RegisterDesc> registers;
    std::vector<WeightDesc> weights;
    std::vector<StateDescriptor> states;
    std::vector<ParamBlock> params;
    std::vector<Instruction> instructions;
    // Written by the host before the first instruction (token ids) and read by it after the
    // last (logits).
    std::vector<RegisterRef> plan_inputs, plan_outputs;
    bool operator==(const ExecutionPlan&) const = default;
};

struct LivenessMap {
    static constexpr uint32_t kNeverRead = UINT32_MAX;
    // Per register: the last instruction that reads it; instructions.size() for a plan output
    // (the host reads it after the plan); kNeverRead when nothing does.
    std::vector<uint32_t> register_last_read;
    // Per instruction: a bitset (64 registers a word) of the registers that die after it.
    // Invariant: kill_after_instruction.size() == instructions.size(), and every register read
    // by an instruction and not a plan output is in exactly one set.
    std::vector<std::vector<uint64_t>> kill_after_instruction;

    bool dies_after(uint32_t instruction, RegisterRef r) const {
        return (kill_after_instruction[instruction][r.id / 64] >> (r.id % 64)) & 1;
    }
};

struct PlanDiagnostic {
    enum class Level : uint8_t { Info, Warn };
    Level level = Level::Info;
    std::string message;
};

struct CompiledPlan {
    ExecutionPlan plan;
    LivenessMap liveness;
    uint16_t peak_registers = 0; // most registers live at once, plan inputs and outputs included
    std::vector<PlanDiagnostic> diagnostics;
};

// Checks `plan` and computes its liveness (seed A1 steps 4-6, A9.1-A9.3). Failures name the
// instruction and the register, weight, parameter block or state block:
// - INVALID_EXECUTION_PLAN: a reference out of range; a register written twice, or read before
//   (or without) its producer; an instruction without outputs; a view that breaks its layout;
// - UNSUPPORTED_TENSOR_RANK: a register or weight view above rank 4;
// - INVALID_PARAM_BLOCK_ABI: a parameter block of another opcode, version or size.
// A register nothing reads is not an error: it gets a never_read warning diagnostic.
CompiledPlan compile_plan(ExecutionPlan plan);

} // namespace tmmu::runtime
