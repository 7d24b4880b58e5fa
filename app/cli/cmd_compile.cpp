// tmmu compile: a transformer config as the runtime's execution plan (seed 002, A1).
#include "commands.h"
#include "interrupt.h"

#include "core/failure.h"
#include "core/units.h"
#include "io/dsa_csv.h"
#include "io/file_io.h"
#include "models/transformer_config.h"
#include "runtime/physical_mapping.h"
#include "runtime/plan_compiler.h"
#include "runtime/plan_json.h"

#include <cstdio>
#include <fmt/format.h>
#include <map>

namespace tmmu::cli {
namespace {

using namespace tmmu::runtime;

constexpr const char* kHelp =
    R"(usage: tmmu compile [CONFIG] [--mode decode|prefill] [--batch N] [--prompt N] [--max-seq N]
                    [--instructions] [--json OUT|-] [--registers OUT|-]

Compiles a GPT-2, Llama, Mistral or Qwen2 config.json (default: the bundled GPT-2 small) into
the runtime's execution plan: one instruction per macro-op (embedding; per layer norm, attention, residual
add, norm, MLP, residual add; final norm; lm head) over logical registers, with each weight
under its Hugging Face name, a KV-cache state block per layer, and the registers' liveness.
The plan is checked as the runtime checks it when it loads (tmmu validate reads it back).

options:
  --mode M          decode (one new token per active slot; default) or prefill (one prompt)
  --batch N         decode: active slots, the rows of every register (default 1)
  --prompt N        prefill: prompt tokens, the rows of every register (default 128)
  --max-seq N       positions each slot's KV cache holds (default: the model's maximum)
  --instructions    list every instruction with its registers, weights and state block
  --json OUT|-      write the plan as JSON (resources/docs/outputs.md) to OUT or stdout
  --registers OUT|- write the registers as an offset-assignment CSV with their planned offsets
                    (lifetimes in instructions); tmmu-studio opens it like any plan
)";

CompileRequest request_from(Args& args) {
    CompileRequest r;
    const std::string mode = args.value("--mode").value_or("decode");
    if (mode != "decode" && mode != "prefill")
        fail(FailureCode::InvalidArgument, "--mode",
             fmt::format("'{}': expected decode or prefill", mode));
    r.mode = mode == "decode" ? PlanMode::Decode : PlanMode::Prefill;
    const auto batch = args.value("--batch");
    const auto prompt = args.value("--prompt");
    if (r.mode == PlanMode::Decode && prompt)
        fail(FailureCode::InvalidArgument, "--prompt", "applies to --mode prefill");
    if (r.mode == PlanMode::Prefill && batch)
        fail(FailureCode::InvalidArgument, "--batch",
             "applies to --mode decode (a prefill plan runs one prompt)");
    const auto rows = r.mode == PlanMode::Decode ? batch : prompt;
    const char* option = r.mode == PlanMode::Decode ? "--batch" : "--prompt";
    const uint64_t n =
        rows ? app::parse_positive(*rows, option) : (r.mode == PlanMode::Decode ? 1 : 128);
    if (n > UINT32_MAX) fail(FailureCode::InvalidArgument, option, "at most 4294967295");
    r.rows = uint32_t(n);
    if (const auto max_seq = args.value("--max-seq")) {
        const uint64_t m = app::parse_positive(*max_seq, "--max-seq");
        if (m > UINT32_MAX) fail(FailureCode::InvalidArgument, "--max-seq", "at most 4294967295");
        r.max_seq = uint32_t(m);
    }
    return r;
}

void print_summary(const CompiledPlan& c, const RegisterMemory& m) {
    const ExecutionPlan& p = c.plan;
    uint64_t weight_bytes = 0, state_bytes = 0;
    for (const WeightDesc& w : p.weights)
        weight_bytes += w.view.bytes();
    for (const StateDescriptor& s : p.states)
        state_bytes += s.size_bytes;
    fmt::print("plan       {}\n", p.name);
    fmt::print("program    {}, {}, at most {} live at once\n",
               count_of(p.instructions.size(), "instruction"),
               count_of(p.registers.size(), "register"), c.peak_registers);
    fmt::print("weights    {}, {}\n", count_of(p.weights.size(), "tensor"),
               format_bytes(weight_bytes));
    fmt::print("state      {} KV-cache blocks, {} per slot\n", p.states.size(),
               format_bytes(state_bytes));
    std::map<std::string_view, size_t> per_opcode;
    for (const Instruction& i : p.instructions)
        ++per_opcode[opcode_name(i.opcode)];
    std::string counts;
    for (const auto& [name, n] : per_opcode)
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", name, n);
    fmt::print("opcodes    {}\n", counts);
    fmt::print("registers  {} in one arena (strategy {}), {} physical buffers of {}; a buffer "
               "per register would take {}\n",
               format_bytes(m.arena_bytes), m.arena.arenas.front().strategy,
               m.mapping.physical_count, format_bytes(m.slot_bytes),
               format_bytes(m.separate_bytes));
    for (const PlanDiagnostic& d : c.diagnostics)
        fmt::print("{}: {}\n", d.level == PlanDiagnostic::Level::Warn ? "warning" : "note",
                   d.message);
}

std::string names_of(const ExecutionPlan& p, const std::vector<RegisterRef>& refs) {
    std::string out;
    for (RegisterRef r : refs)
        out += fmt::format("{}{}", out.empty() ? "" : " ", p.registers[r.id].name);
    return out;
}

void print_instructions(const CompiledPlan& c) {
    const ExecutionPlan& p = c.plan;
    fmt::print("\n{:>5}  {:<20} {:<28} {:<16} {:>7}  {}\n", "#", "opcode", "reads", "writes",
               "weights", "state");
    for (size_t i = 0; i < p.instructions.size(); ++i) {
        const Instruction& insn = p.instructions[i];
        fmt::print("{:>5}  {:<20} {:<28} {:<16} {:>7}  {}\n", i, opcode_name(insn.opcode),
                   names_of(p, insn.inputs), names_of(p, insn.outputs), insn.weights.size(),
                   insn.state_block == kNoStateBlock ? "" : p.states[insn.state_block].name);
    }
}

} // namespace

int cmd_compile(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const CompileRequest request = request_from(args);
    const bool list = args.flag("--instructions");
    const auto json_out = args.value("--json");
    const auto registers_out = args.value("--registers");
    const CompiledPlan plan =
        compile_transformer(config_argument(args, "tmmu compile").config, request);
    const bool to_stdout =
        sends_one_output_to_stdout({{"--json", json_out}, {"--registers", registers_out}});
    const RegisterMemory memory = map_registers(plan, PlanOptions{}, interruptible_progress());
    if (!to_stdout) {
        print_summary(plan, memory);
        if (list) print_instructions(plan);
    }
    if (json_out) write_output(*json_out, save_plan_json(plan));
    if (registers_out) {
        const ArenaPlan& arena = memory.arena.arenas.front();
        const DsaProblem csv{arena.problem, arena.buffer_names, {}};
        write_output(*registers_out, write_dsa_csv(csv, &memory.offset));
    }
    return 0;
}

} // namespace tmmu::cli
