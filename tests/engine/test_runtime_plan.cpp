// The runtime's contracts (seed 002, A2, A7, A9) and the plan compiler (A1): opcode values and
// ranges, views, parameter blocks, the state lifecycle matrix, compiled GPT-2 and Llama plans
// checked against the operator graphs and the parameter counts, and malformed plans refused
// with their named codes.
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#include "runtime/adapter_check.h"
#include "runtime/gpu_adapters.h"
#include "runtime/gpu_fusion.h"
#include "runtime/opcode_map.h"
#include "runtime/physical_mapping.h"
#include "runtime/plan_compiler.h"
#include "runtime/plan_json.h"
#include "runtime/rope.h"
#include "test_support.h"

#include <QObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace tmmu;
using namespace tmmu::runtime;

namespace {

TransformerConfig config(const char* file) {
    return load_transformer_config(std::string(TMMU_SOURCE_DIR "/resources/models/") + file);
}

std::string failure_text(const std::function<void()>& fn) {
    auto f = test::capture_failure(fn);
    return f ? std::string(f->what()) : std::string("<no failure>");
}

// Consecutive nodes of one macro-op are one instruction.
std::vector<Opcode> grouped(const std::vector<Opcode>& ops) {
    std::vector<Opcode> out;
    for (Opcode op : ops)
        if (out.empty() || out.back() != op) out.push_back(op);
    return out;
}

std::vector<Opcode> opcodes_of(const ExecutionPlan& p) {
    std::vector<Opcode> out;
    for (const Instruction& i : p.instructions)
        out.push_back(i.opcode);
    return out;
}

void record_call(const ExecutionContext&, const Operands&) {}

// Every instruction of `plan` bound at `offsets` in `arena` (grown where it must be, else the
// same buffer call after call), to record_call, with
// weight w at the fake address 0x1000 + 16 w (never dereferenced: nothing runs).
std::vector<BoundInstruction> bound_for_folding(const ExecutionPlan& plan,
                                                const std::vector<uint64_t>& offsets,
                                                std::vector<char>& arena) {
    AdapterTable table{};
    table.fill(record_call);
    arena.resize(std::max(arena.size(), size_t(register_arena_bytes(plan, offsets)))); // kept
    return bind_instructions(
        plan, table, arena.data(), offsets,
        [](WeightRef w) { return reinterpret_cast<const void*>(uintptr_t(0x1000 + 16 * w.index)); },
        [](uint8_t) { return StateBinding{}; });
}

} // namespace

class TestRuntimePlan : public QObject {
    Q_OBJECT
  private slots:
    // f16 weights (GPU backends): IEEE binary16, rounded to nearest even, and only the rank-2
    // weights (matrices, tables) packed as f16, each on a 16-byte boundary.
    void f16WeightsRoundToNearestEven() {
        using runtime::f16_bits;
        QCOMPARE(f16_bits(1.0f), uint16_t(0x3C00));
        QCOMPARE(f16_bits(-2.0f), uint16_t(0xC000));
        QCOMPARE(f16_bits(0.0f), uint16_t(0x0000));
        QCOMPARE(f16_bits(-0.0f), uint16_t(0x8000));
        QCOMPARE(f16_bits(65504.0f), uint16_t(0x7BFF));              // the largest finite
        QCOMPARE(f16_bits(65519.0f), uint16_t(0x7BFF));              // below the halfway point
        QCOMPARE(f16_bits(65520.0f), uint16_t(0x7C00));              // halfway, to even: infinity
        QCOMPARE(f16_bits(1.0f + 1.0f / 2048), uint16_t(0x3C00));    // a tie, to even (down)
        QCOMPARE(f16_bits(1.0f + 3.0f / 2048), uint16_t(0x3C02));    // a tie, to even (up)
        QCOMPARE(f16_bits(std::ldexp(1.0f, -14)), uint16_t(0x0400)); // the smallest normal
        QCOMPARE(f16_bits(std::ldexp(1.0f, -24)), uint16_t(0x0001)); // the smallest subnormal
        QCOMPARE(f16_bits(std::ldexp(1.0f, -25)), uint16_t(0x0000)); // a tie, to even (0)
        QCOMPARE(f16_bits(std::ldexp(3.0f, -25)), uint16_t(0x0002)); // a tie, to even (2)
        QCOMPARE(f16_bits(std::ldexp(1023.0f, -24) + std::ldexp(1.0f, -25)),
                 uint16_t(0x0400)); // the largest subnormal rounds up into the normals
        QCOMPARE(f16_bits(std::numeric_limits<float>::infinity()), uint16_t(0x7C00));
        QCOMPARE(f16_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7C00, 0x7C00);
        QVERIFY(f16_bits(std::numeric_limits<float>::quiet_NaN()) & 0x03FF);

        const runtime::CompiledPlan gpt2 = runtime::compile_transformer(
            test::tiny_config(test::kTinyGpt2), {runtime::PlanMode::Decode, 1, 16});
        const std::vector<bool> half =
            runtime::half_weights(gpt2.plan, runtime::WeightPrecision::F16);
        QVERIFY(runtime::half_weights(gpt2.plan, runtime::WeightPrecision::F32) ==
                std::vector<bool>(half.size(), false));
        const runtime::WeightStore store = runtime::random_weights(gpt2.plan, 3);
        const runtime::PackedWeights packed = runtime::pack_weights(gpt2.plan, store, half);
        for (size_t w = 0; w < half.size(); ++w) {
            const runtime::WeightDesc& d = gpt2.plan.weights[w];
            QCOMPARE(bool(half[w]), d.view.rank == 2);
            QCOMPARE(packed.offset[w] % 16, uint64_t(0));
            const float first = store.data[store.offset[w]];
            if (half[w]) {
                uint16_t bits = 0;
                std::memcpy(&bits, packed.bytes.data() + packed.offset[w], 2);
                QCOMPARE(bits, f16_bits(first));
            } else {
                float value = 0;
                std::memcpy(&value, packed.bytes.data() + packed.offset[w], 4);
                QCOMPARE(value, first);
            }
        }
    }

    // A GPU backend folds each residual add into the instruction whose output it adds
    // (gpu_fusion.h): the add launches nothing, the instruction before it writes the add's
    // output with the add's other input as its residual. Not where another instruction (or
    // the plan's caller) reads what would go unwritten, nor where the add's output only partly
    // overlaps its other input. Norms are never folded.
    void residualAddsFoldIntoMatrixKernels() {
        const CompiledPlan llama =
            compile_transformer(config("tinyllama-1.1b.json"), {PlanMode::Decode, 1, 64});
        const ExecutionPlan& p = llama.plan;
        const std::vector<uint64_t> offsets = register_offsets(llama, RegisterLayout::Planned);
        std::vector<char> arena;
        const std::vector<BoundInstruction> before = bound_for_folding(p, offsets, arena);
        std::vector<BoundInstruction> bound = bound_for_folding(p, offsets, arena);
        QCOMPARE(fold_residual_adds(p, offsets, bound), 44u); // 22 layers, two adds each
        uint32_t folded = 0;
        for (size_t i = 0; i < bound.size(); ++i) {
            const Instruction& insn = p.instructions[i];
            if (bound[i].fn == record_call) {
                const bool producer = i + 1 < bound.size() && bound[i + 1].fn != record_call;
                if (!producer) QCOMPARE(bound[i].operands.output, before[i].operands.output);
                continue;
            }
            ++folded;
            QCOMPARE(insn.opcode, Opcode::ResidualAdd);
            const Operands& producer = bound[i - 1].operands;
            QCOMPARE(producer.output, bound[i].operands.output);
            const int mine = insn.inputs[0].id == p.instructions[i - 1].outputs[0].id ? 0 : 1;
            QCOMPARE(producer.output_residual,
                     static_cast<const float*>(bound[i].operands.inputs[1 - mine]));
        }
        QCOMPARE(folded, 44u);

        // Read twice (here as a plan output too): the first attention's output must be written.
        size_t add = 0;
        while (p.instructions[add].opcode != Opcode::ResidualAdd)
            ++add;
        ExecutionPlan shared = p;
        shared.plan_outputs.push_back(p.instructions[add - 1].outputs[0]);
        bound = bound_for_folding(shared, offsets, arena);
        QCOMPARE(fold_residual_adds(shared, offsets, bound), 43u);
        QVERIFY(bound[add].fn == before[add].fn);

        // The first add's other input moved to overlap its output, 4 bytes off.
        std::vector<uint64_t> overlapping = offsets;
        const Instruction& a = p.instructions[add];
        const uint32_t other = a.inputs[0].id == p.instructions[add - 1].outputs[0].id
                                   ? a.inputs[1].id
                                   : a.inputs[0].id;
        overlapping[other] = offsets[a.outputs[0].id] + 4; // the embedding's output: read by
                                                           // the first norm and this add only
        bound = bound_for_folding(p, overlapping, arena);
        QCOMPARE(fold_residual_adds(p, overlapping, bound), 43u);
        QVERIFY(bound[add].fn == before[add].fn);

        // GPT-2: its adds follow attention and gelu_mlp.
        const CompiledPlan gpt2 =
            compile_transformer(config("gpt2-small.json"), {PlanMode::Decode, 1, 64});
        const std::vector<uint64_t> gpt2_offsets = register_offsets(gpt2, RegisterLayout::Planned);
        bound = bound_for_folding(gpt2.plan, gpt2_offsets, arena);
        QCOMPARE(fold_residual_adds(gpt2.plan, gpt2_offsets, bound), 24u);
    }

    void opcodesKeepTheSeedValuesAndRanges() {
        QCOMPARE(int(Opcode::RmsNorm), 0);
        QCOMPARE(int(Opcode::MultiheadAttention), 1);
        QCOMPARE(int(Opcode::Swiglu), 2);
        QCOMPARE(int(Opcode::Embedding), 7);
        QCOMPARE(int(Opcode::ResidualAdd), 8);
        // Ours sit in the seed's range for further macro-ops; its reserved values stay free.
        for (Opcode op : {Opcode::LayerNorm, Opcode::GeluMlp, Opcode::LmHead})
            QCOMPARE(opcode_range(uint8_t(op)), OpcodeRange::FutureMacro);
        for (int v : {3, 4, 5, 6, 16, 17, 18, 19, 64, 127, 128, 255})
            QVERIFY2(!is_defined_opcode(uint8_t(v)), qPrintable(QString::number(v)));
        QCOMPARE(opcode_range(8), OpcodeRange::Structural);
        QCOMPARE(opcode_range(16), OpcodeRange::Vision);
        QCOMPARE(opcode_range(64), OpcodeRange::Primitive);
        std::set<std::string_view> names;
        for (Opcode op : kAllOpcodes) {
            QCOMPARE(parse_opcode(opcode_name(op)), std::optional<Opcode>(op));
            names.insert(opcode_name(op));
        }
        QCOMPARE(names.size(), std::size(kAllOpcodes));
        QVERIFY(!parse_opcode("moe"));
    }

    void viewsAboveRankFourAreRefused() {
        const uint64_t five[] = {2, 2, 2, 2, 2};
        TMMU_EXPECT_FAILURE(contiguous_view(DType::F32, five, "r"),
                            FailureCode::UnsupportedTensorRank);
        const uint64_t four[] = {2, 3, 4, 5};
        TensorViewDesc v = contiguous_view(DType::F16, four, "r");
        QCOMPARE(v.elements(), 120u);
        QCOMPARE(v.bytes(), 240u);
        QCOMPARE(v.stride_elems, (std::array<uint32_t, 4>{60, 20, 5, 1}));
        check_view(v, "r");
        TensorViewDesc wrong = v;
        wrong.rank = 5;
        TMMU_EXPECT_FAILURE(check_view(wrong, "r"), FailureCode::UnsupportedTensorRank);
        wrong = v;
        wrong.stride_elems[0] = 61;
        TMMU_EXPECT_FAILURE(check_view(wrong, "r"), FailureCode::InvalidExecutionPlan);
        wrong.layout = ViewLayout::Strided; // any strides are a strided view's own business
        check_view(wrong, "r");
        wrong = v;
        wrong.shape[2] = 0;
        TMMU_EXPECT_FAILURE(check_view(wrong, "r"), FailureCode::InvalidExecutionPlan);
        const uint64_t huge[] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
        TMMU_EXPECT_FAILURE(contiguous_view(DType::F32, huge, "r"),
                            FailureCode::AllocationOverflow);
        const uint64_t too_wide[] = {uint64_t(UINT32_MAX) + 1};
        TMMU_EXPECT_FAILURE(contiguous_view(DType::F32, too_wide, "r"),
                            FailureCode::InvalidExecutionPlan);
    }

    void paramBlocksAreLittleEndianAlignedAndCheckedOnce() {
        const ParamBlock norm = make_param_block(Opcode::LayerNorm, NormParams{1.0f, 768});
        const uint8_t expected[] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x03, 0x00, 0x00};
        QCOMPARE(norm.size, uint16_t(8));
        QVERIFY(std::memcmp(norm.data.data(), expected, 8) == 0);
        QCOMPARE(reinterpret_cast<uintptr_t>(norm.data.data()) % 8, uintptr_t(0));
        check_param_block(norm, Opcode::LayerNorm, "p");
        QCOMPARE(param_view<NormParams>(norm).width, 768u);
        const ParamBlock attn =
            make_param_block(Opcode::MultiheadAttention,
                             AttentionParams{32, 4, 64, 1e4f, 1, 2048, 0, 0, 0, 0, 0, 0});
        check_param_block(attn, Opcode::MultiheadAttention, "p");
        QCOMPARE(param_view<AttentionParams>(attn).n_kv_heads, 4u);
        // Every mismatch is a load-time INVALID_PARAM_BLOCK_ABI naming what is wrong.
        TMMU_EXPECT_FAILURE(check_param_block(norm, Opcode::RmsNorm, "p"),
                            FailureCode::InvalidParamBlockAbi);
        ParamBlock b = norm;
        b.version = 2;
        QVERIFY(failure_text([&] {
                    check_param_block(b, Opcode::LayerNorm, "p");
                }).find("version 2") != std::string::npos);
        b = attn;
        b.opcode = Opcode::LayerNorm; // a 48-byte payload where layernorm v1 has 8
        b.version = 1;
        QVERIFY(failure_text([&] {
                    check_param_block(b, Opcode::LayerNorm, "p");
                }).find("48 payload bytes") != std::string::npos);
        // Attention's version 1 (24 bytes, before RoPE scaling) no longer loads.
        b = attn;
        b.version = 1;
        b.size = 24;
        std::fill(b.data.begin() + 24, b.data.end(), uint8_t(0));
        QVERIFY(failure_text([&] {
                    check_param_block(b, Opcode::MultiheadAttention, "p");
                }).find("version 1, this build reads multihead_attention version 2") !=
                std::string::npos);
        // RoPE scaling's numbers are checked too: each of these would give wrong angles.
        const auto scaled = [](uint32_t kind, float factor, float low, float high,
                               uint32_t trained) {
            return make_param_block(
                Opcode::MultiheadAttention,
                AttentionParams{8, 8, 64, 5e5f, 1, 2048, kind, factor, low, high, trained, 0});
        };
        check_param_block(scaled(2, 32, 1, 4, 8192), Opcode::MultiheadAttention, "p");
        check_param_block(scaled(1, 2, 0, 0, 0), Opcode::MultiheadAttention, "p");
        for (const ParamBlock& bad :
             {scaled(3, 2, 1, 4, 8192), scaled(1, 0, 0, 0, 0), scaled(2, 32, 4, 4, 8192),
              scaled(2, 32, 1, 4, 0), scaled(2, -1, 1, 4, 8192), scaled(0, 2, 0, 0, 0),
              scaled(1, 2, 1, 4, 0)})
            TMMU_EXPECT_FAILURE(check_param_block(bad, Opcode::MultiheadAttention, "p"),
                                FailureCode::InvalidParamBlockAbi);
        b = norm;
        b.data[100] = 1;
        TMMU_EXPECT_FAILURE(check_param_block(b, Opcode::LayerNorm, "p"),
                            FailureCode::InvalidParamBlockAbi);
        for (Opcode op : kAllOpcodes)
            QVERIFY(param_layout(op).size % 8 == 0 && param_layout(op).size <= kMaxParamBytes);
    }

    void stateLifecycleMatrix() {
        using A = StateAction;
        using L = StateLifecycle;
        // Rows: alloc, reset, reuse, evict, clone_for_fork, deinit (seed A9.6).
        const A per_request[] = {A::Allocate, A::Truncate,   A::Truncate,
                                 A::Release,  A::CopyPrefix, A::Release};
        const A per_step[] = {A::Allocate, A::Keep, A::Keep, A::Keep, A::Keep, A::Release};
        for (size_t e = 0; e < std::size(kAllStateEvents); ++e) {
            QCOMPARE(state_action(L::PerRequest, kAllStateEvents[e]), per_request[e]);
            QCOMPARE(state_action(L::PerStep, kAllStateEvents[e]), per_step[e]);
        }
        QCOMPARE(state_event_name(StateEvent::CloneForFork), std::string_view("clone_for_fork"));
    }

    void inferenceOperatorsAreExactlyWhatGraphsUse() {
        std::set<std::string> used;
        for (const char* file : {"gpt2-small.json", "tinyllama-1.1b.json"})
            for (const Node& n :
                 build_transformer_graph(config(file), GraphRequest{1, 8, Mode::Inference}).nodes)
                used.insert(n.opcode);
        const std::set<std::string> listed(std::begin(kInferenceOperators),
                                           std::end(kInferenceOperators));
        QCOMPARE(used, listed);
    }

    // The compiled instructions are the generated graph's nodes grouped by the opcode map:
    // the plan compiler and the graph generator agree on what a layer is.
    void compiledPlansMatchTheGraphs_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("gpt2") << "gpt2-small.json";
        QTest::newRow("llama") << "tinyllama-1.1b.json";
    }
    void compiledPlansMatchTheGraphs() {
        QFETCH(QString, file);
        const TransformerConfig c = config(file.toUtf8().constData());
        Graph g = build_transformer_graph(c, GraphRequest{1, 8, Mode::Inference});
        std::vector<Opcode> by_node = macro_ops(g);
        std::vector<Opcode> in_order;
        for (NodeIndex n : g.execution_order)
            in_order.push_back(by_node[n]);
        for (PlanMode mode : {PlanMode::Decode, PlanMode::Prefill}) {
            const CompiledPlan cp = compile_transformer(c, {mode, 8, 64});
            QCOMPARE(opcodes_of(cp.plan), grouped(in_order));
        }
    }

    // Every parameter of the model is one weight, with its Hugging Face name and shape: the
    // weights' elements add up to parameter_count, which the graph tests pin independently.
    void weightsAreTheModelsParameters() {
        for (const char* file : {"gpt2-small.json", "tinyllama-1.1b.json"}) {
            const TransformerConfig c = config(file);
            const CompiledPlan cp = compile_transformer(c, {PlanMode::Decode, 1, 0});
            uint64_t elements = 0;
            std::set<std::string> names;
            for (const WeightDesc& w : cp.plan.weights) {
                elements += w.view.elements();
                names.insert(w.name);
            }
            QCOMPARE(names.size(), cp.plan.weights.size());
            QCOMPARE(elements, parameter_count(c));
        }
        const CompiledPlan gpt2 = compile_transformer(config("gpt2-small.json"), {});
        QCOMPARE(gpt2.plan.weights[0].name, std::string("wte.weight"));
        QVERIFY(
            std::count_if(gpt2.plan.weights.begin(), gpt2.plan.weights.end(),
                          [](const WeightDesc& w) { return w.name == "h.11.mlp.c_fc.weight"; }));
        const CompiledPlan llama = compile_transformer(config("tinyllama-1.1b.json"), {});
        QVERIFY(std::count_if(
            llama.plan.weights.begin(), llama.plan.weights.end(), [](const WeightDesc& w) {
                return w.name == "model.layers.21.self_attn.k_proj.weight" &&
                       w.view.shape[0] == 4 * 64 && w.view.shape[1] == 2048; // GQA: 4 kv heads
            }));
    }

    void gpt2DecodePlanHasTheExpectedShape() {
        const CompiledPlan cp =
            compile_transformer(config("gpt2-small.json"), {PlanMode::Decode, 4, 1024});
        const ExecutionPlan& p = cp.plan;
        QCOMPARE(p.instructions.size(), size_t(1 + 12 * 6 + 2)); // embed, layers, norm, head
        QCOMPARE(p.registers.size(), size_t(2 + 12 * 6 + 2));    // tokens, embed, ..., logits
        QCOMPARE(p.states.size(), size_t(12));
        // K and V of 12 heads x 64, f32, for 1024 positions.
        QCOMPARE(p.states[0].size_bytes, uint64_t(2) * 1024 * 12 * 64 * 4);
        QCOMPARE(p.registers[p.plan_outputs[0].id].view.shape[1], 50257u);
        QCOMPARE(p.registers[p.plan_outputs[0].id].view.shape[0], 4u); // one row per slot
        QVERIFY(cp.diagnostics.empty());
        // Inside a layer at most the residual stream, the value it is combined with and the
        // result are live (x, attention output, sum; or sum, MLP output, next stream).
        QCOMPARE(cp.peak_registers, uint16_t(3));
    }

    void livenessMapInvariants() {
        const CompiledPlan cp =
            compile_transformer(config("tinyllama-1.1b.json"), {PlanMode::Prefill, 16, 128});
        const ExecutionPlan& p = cp.plan;
        const LivenessMap& lv = cp.liveness;
        QCOMPARE(lv.kill_after_instruction.size(), p.instructions.size());
        QCOMPARE(lv.register_last_read.size(), p.registers.size());
        for (uint16_t r = 0; r < p.registers.size(); ++r) {
            size_t kills = 0;
            for (uint32_t i = 0; i < p.instructions.size(); ++i)
                kills += lv.dies_after(i, {r});
            const bool output = p.plan_outputs[0].id == r;
            QCOMPARE(kills, size_t(output ? 0 : 1));
            // The last reader really reads it, and nothing after it does.
            const uint32_t last = lv.register_last_read[r];
            if (output) {
                QCOMPARE(last, uint32_t(p.instructions.size()));
                continue;
            }
            const auto& in = p.instructions[last].inputs;
            QVERIFY(std::count(in.begin(), in.end(), RegisterRef{r}));
            for (uint32_t i = last + 1; i < p.instructions.size(); ++i) {
                const auto& later = p.instructions[i].inputs;
                QVERIFY(!std::count(later.begin(), later.end(), RegisterRef{r}));
            }
        }
    }

    void malformedPlansAreRefusedByName() {
        const ExecutionPlan good =
            compile_transformer(config("gpt2-small.json"), {PlanMode::Decode, 1, 64}).plan;
        auto refused = [&](auto change, FailureCode code, const char* says) {
            ExecutionPlan p = good;
            change(p);
            auto f = test::capture_failure([&] { (void)compile_plan(p); });
            QVERIFY2(f.has_value(), says);
            QCOMPARE(f->code(), code);
            QVERIFY2(std::string(f->what()).find(says) != std::string::npos, f->what());
        };
        refused(
            [](ExecutionPlan& p) { p.instructions[3].inputs[0] = p.instructions[5].outputs[0]; },
            FailureCode::InvalidExecutionPlan, "instruction 3 (residual_add): reads register");
        refused(
            [](ExecutionPlan& p) { p.instructions[2].outputs[0] = p.instructions[1].outputs[0]; },
            FailureCode::InvalidExecutionPlan, "written a second time");
        refused([](ExecutionPlan& p) { p.instructions[1].weights[0] = {99999}; },
                FailureCode::InvalidExecutionPlan, "weight 99999 does not resolve");
        refused([](ExecutionPlan& p) { p.instructions[2].state_block = 200; },
                FailureCode::InvalidExecutionPlan, "state block 200");
        refused(
            [](ExecutionPlan& p) { p.instructions[1].param_block = p.instructions[2].param_block; },
            FailureCode::InvalidParamBlockAbi, "instruction 1 (layernorm) parameter block");
        refused([](ExecutionPlan& p) { p.params[0].version = 9; },
                FailureCode::InvalidParamBlockAbi, "version 9");
        refused([](ExecutionPlan& p) { p.registers[4].view.rank = 5; },
                FailureCode::UnsupportedTensorRank, "register 4");
        refused([](ExecutionPlan& p) { p.plan_inputs.clear(); }, FailureCode::InvalidExecutionPlan,
                "reads register 0 before anything writes it");
        // An instruction names the operands its opcode's adapters read.
        refused([](ExecutionPlan& p) { p.instructions[3].inputs.pop_back(); },
                FailureCode::InvalidExecutionPlan,
                "instruction 3 (residual_add): residual_add reads 2 inputs, it names 1");
        refused([](ExecutionPlan& p) { p.instructions[1].weights.pop_back(); },
                FailureCode::InvalidExecutionPlan, "layernorm reads 2 weights, it names 1");
        refused([](ExecutionPlan& p) { p.instructions[0].weights.pop_back(); },
                FailureCode::InvalidExecutionPlan, "embedding reads 2 weights, it names 1");
        refused([](ExecutionPlan& p) { p.instructions[2].state_block = kNoStateBlock; },
                FailureCode::InvalidExecutionPlan, "multihead_attention keeps its keys");
        refused([](ExecutionPlan& p) { p.instructions[2].weights.pop_back(); },
                FailureCode::InvalidExecutionPlan,
                "instruction 2 (multihead_attention): multihead_attention reads 4 weights, it "
                "names 3");
        // Attention whose flags say q, k and v have biases reads three more weights.
        refused(
            [](ExecutionPlan& p) {
                auto a = param_view<AttentionParams>(p.params[p.instructions[2].param_block]);
                a.flags |= AttentionParams::kQkvBias | AttentionParams::kSeparateProjections;
                std::memcpy(p.params[p.instructions[2].param_block].data.data(), &a, sizeof a);
            },
            FailureCode::InvalidExecutionPlan, "multihead_attention reads 7 weights, it names 4");
        // A register nothing reads is a warning, not a failure.
        ExecutionPlan p = good;
        p.plan_outputs.clear();
        const CompiledPlan cp = compile_plan(p);
        QCOMPARE(cp.diagnostics.size(), size_t(1));
        QCOMPARE(cp.diagnostics[0].level, PlanDiagnostic::Level::Warn);
        QVERIFY(cp.diagnostics[0].message.find("never_read") != std::string::npos);
    }

    void planJsonRoundTripsExactly() {
        const CompiledPlan c =
            compile_transformer(config("tinyllama-1.1b.json"), {PlanMode::Prefill, 32, 256});
        const std::string text = save_plan_json(c);
        QVERIFY(looks_like_plan_json(text));
        const CompiledPlan back = load_plan_json(text, "plan.json");
        QVERIFY(back.plan == c.plan);
        QCOMPARE(back.peak_registers, c.peak_registers);
        QCOMPARE(save_plan_json(back), text); // deterministic bytes
        QVERIFY(!looks_like_plan_json(R"({"format": "tmmu-ir"})"));
        auto fails = [&](std::string changed, FailureCode code, const char* says) {
            auto f = test::capture_failure([&] { (void)load_plan_json(changed, "plan.json"); });
            QVERIFY2(f.has_value(), says);
            QCOMPARE(f->code(), code);
            QVERIFY2(std::string(f->what()).find(says) != std::string::npos, f->what());
        };
        fails("{", FailureCode::InvalidExecutionPlan, "not valid JSON");
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string out = text;
            out.replace(out.find(from), from.size(), to);
            return out;
        };
        fails(replaced("\"contiguous\"", "\"diagonal\""), FailureCode::InvalidExecutionPlan,
              "plan.json.registers[0].layout");
        fails(replaced("\"opcode\": \"rmsnorm\"", "\"opcode\": \"moe\""),
              FailureCode::InvalidExecutionPlan, "unknown opcode");
        std::string bad = text;
        const size_t payload = bad.find("\"payload\": \"") + 12;
        bad.insert(payload, std::string(600, '0'));
        fails(bad, FailureCode::InvalidParamBlockAbi, "at most 256");
    }

    // Registers packed by the planner: no two registers live at one instruction share a byte
    // (checked here from the instructions, not from the mapping's own lifetimes), the arena is
    // far below a buffer per register, and the slot colouring needs exactly peak_registers
    // physical buffers (interval graphs colour with their largest clique).
    void registersArePackedByThePlanner() {
        for (PlanMode mode : {PlanMode::Decode, PlanMode::Prefill}) {
            const CompiledPlan c = compile_transformer(config("gpt2-small.json"), {mode, 16, 256});
            const ExecutionPlan& p = c.plan;
            const RegisterMemory m = map_registers(c, PlanOptions{}, Progress{});
            QCOMPARE(m.offset.size(), p.registers.size());
            QCOMPARE(m.mapping.physical_count, c.peak_registers);
            std::vector<std::set<uint16_t>> live(p.instructions.size());
            for (uint32_t i = 0; i < p.instructions.size(); ++i) {
                const Instruction& insn = p.instructions[i];
                for (RegisterRef r : insn.inputs)
                    live[i].insert(r.id);
                for (RegisterRef r : insn.outputs)
                    live[i].insert(r.id);
            }
            // A register is live at every instruction from its producer to its last reader.
            for (uint16_t r = 0; r < p.registers.size(); ++r) {
                uint32_t first = UINT32_MAX, last = 0;
                for (uint32_t i = 0; i < p.instructions.size(); ++i)
                    if (live[i].count(r)) {
                        first = std::min(first, i);
                        last = i;
                    }
                for (uint32_t i = first; i <= last && first != UINT32_MAX; ++i)
                    live[i].insert(r);
            }
            for (const std::set<uint16_t>& at : live)
                for (uint16_t a : at)
                    for (uint16_t b : at) {
                        if (a >= b) continue;
                        const uint64_t ea = m.offset[a] + p.registers[a].view.bytes();
                        const uint64_t eb = m.offset[b] + p.registers[b].view.bytes();
                        QVERIFY2(ea <= m.offset[b] || eb <= m.offset[a],
                                 qPrintable(QString::fromStdString(p.registers[a].name + " / " +
                                                                   p.registers[b].name)));
                    }
            for (size_t r = 0; r < p.registers.size(); ++r) {
                QCOMPARE(m.offset[r] % kRegisterAlignment, uint64_t(0));
                QVERIFY(m.offset[r] + p.registers[r].view.bytes() <= m.arena_bytes);
                QVERIFY(m.mapping.physical_specs[m.mapping.register_to_physical[r]].size >=
                        p.registers[r].view.bytes());
            }
            QVERIFY(m.arena_bytes * 2 < m.separate_bytes);
        }
    }

    void compileRequestsAreChecked() {
        const TransformerConfig c = config("gpt2-small.json");
        TMMU_EXPECT_FAILURE(compile_transformer(c, {PlanMode::Decode, 0, 0}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(compile_transformer(c, {PlanMode::Decode, 1, 1025}),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(compile_transformer(c, {PlanMode::Prefill, 65, 64}),
                            FailureCode::InvalidArgument);
        (void)compile_transformer(c, {PlanMode::Prefill, 64, 64});
        // A computation the kernels do not do ("dynamic" RoPE scaling) is refused at compile,
        // naming the config's field, instead of running as unscaled RoPE.
        TransformerConfig scaled = config("tinyllama-1.1b.json");
        (void)compile_transformer(scaled, {PlanMode::Decode, 1, 16});
        scaled.unrunnable = TransformerConfig::Unrunnable{
            "cfg.json field 'rope_scaling.rope_type'", "RoPE scaling \"dynamic\" is not supported"};
        const auto f = test::capture_failure([&] {
            (void)compile_transformer(scaled, {PlanMode::Decode, 1, 16});
        });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), scaled.unrunnable->where);
    }

    // A backend refuses at load what it cannot run: an opcode its table lacks, a decode step
    // over more slots than an adapter takes. A prefill step serves one request whatever the
    // caps; an adapter without batching takes one slot.
    void backendsRefuseWhatTheyCannotRunAtLoad() {
        const TransformerConfig c = config("gpt2-small.json");
        const ExecutionPlan decode4 = compile_transformer(c, {PlanMode::Decode, 4, 64}).plan;
        const ExecutionPlan decode1 = compile_transformer(c, {PlanMode::Decode, 1, 64}).plan;
        const ExecutionPlan prefill = compile_transformer(c, {PlanMode::Prefill, 16, 64}).plan;
        QCOMPARE(slots_per_step(decode4), 4u);
        QCOMPARE(slots_per_step(prefill), 1u);
        AdapterTable table{};
        AdapterCapabilities caps{};
        for (Opcode op : kAllOpcodes) {
            table[uint8_t(op)] = [](const ExecutionContext&, const Operands&) {};
            caps[uint8_t(op)] = {true, false, 0};
        }
        check_backend_supports(decode4, table, caps, "test");

        AdapterTable gap = table;
        gap[uint8_t(Opcode::GeluMlp)] = nullptr;
        const auto no_mlp =
            test::capture_failure([&] { check_backend_supports(prefill, gap, caps, "test"); });
        QVERIFY(no_mlp && no_mlp->code() == FailureCode::UnsupportedOpcode);
        QVERIFY2(std::string(no_mlp->what())
                         .find("instruction 5 (gelu_mlp): the test backend "
                               "has no adapter for gelu_mlp") != std::string::npos,
                 no_mlp->what());

        AdapterCapabilities capped = caps;
        capped[uint8_t(Opcode::MultiheadAttention)].max_batch_size = 2;
        const auto too_many =
            test::capture_failure([&] { check_backend_supports(decode4, table, capped, "test"); });
        QVERIFY(too_many && too_many->code() == FailureCode::BatchUnsupported);
        QVERIFY2(std::string(too_many->what()).find("instruction 2 (multihead_attention)") !=
                         std::string::npos &&
                     std::string(too_many->what())
                             .find("at most 2 slots per step, the plan runs "
                                   "4") != std::string::npos,
                 too_many->what());
        check_backend_supports(prefill, table, capped, "test");

        AdapterCapabilities single = caps;
        single[uint8_t(Opcode::LmHead)].supports_batch = false;
        TMMU_EXPECT_FAILURE(check_backend_supports(decode4, table, single, "test"),
                            FailureCode::BatchUnsupported);
        check_backend_supports(decode1, table, single, "test");

        // An attention adapter that does not compute RoPE scaling refuses a plan that has it,
        // and only such a plan: never runs it unscaled.
        AdapterCapabilities unscaled = caps;
        unscaled[uint8_t(Opcode::MultiheadAttention)].supports_rope_scaling = false;
        TransformerConfig llama = config("tinyllama-1.1b.json");
        check_backend_supports(compile_transformer(llama, {PlanMode::Decode, 1, 64}).plan, table,
                               unscaled, "test");
        llama.rope_scaling = {RopeScaling::Kind::Linear, 2.0, 1.0, 4.0, 0};
        const ExecutionPlan scaled = compile_transformer(llama, {PlanMode::Decode, 1, 64}).plan;
        check_backend_supports(scaled, table, caps, "test");
        const auto no_scaling =
            test::capture_failure([&] { check_backend_supports(scaled, table, unscaled, "test"); });
        QVERIFY(no_scaling && no_scaling->code() == FailureCode::UnsupportedOpcode);
        QVERIFY2(std::string(no_scaling->what()).find("does not compute RoPE scaling") !=
                     std::string::npos,
                 no_scaling->what());
    }

    // The GPU backends' RoPE tables: one per theta and head size, cos then sin of each position
    // times rope_frequency (scaling included), as the CPU backend turns the pairs. Two
    // instructions that share theta and head size but scale otherwise would share a table, and
    // are refused.
    void gpuBackendsKeepOneRopeTablePerRotation() {
        TransformerConfig llama = config("tinyllama-1.1b.json");
        llama.rope_scaling = {RopeScaling::Kind::Linear, 2.0, 1.0, 4.0, 0};
        ExecutionPlan plan = compile_transformer(llama, {PlanMode::Decode, 1, 64}).plan;
        constexpr uint32_t positions = 48;
        const RopeTables t = plan_rope_tables(plan, positions, "test");
        QCOMPARE(t.tables.size(), size_t(1)); // every layer rotates alike
        const AttentionParams& a = t.tables[0].rotation;
        const uint32_t half = a.head_dim / 2;
        QCOMPARE(t.tables[0].positions, positions);
        QCOMPARE(t.tables[0].address, uint64_t(0));
        QCOMPARE(t.values.size(), size_t(2) * positions * half);
        for (uint32_t p : {0u, 1u, positions - 1})
            for (uint32_t i : {0u, half / 2, half - 1}) {
                const double angle = p * rope_frequency(a, i);
                QCOMPARE(t.values[p * half + i], float(std::cos(angle)));
                QCOMPARE(t.values[(positions + p) * half + i], float(std::sin(angle)));
            }
        // Linear scaling by 2: position 2 turns pair 0 by what position 1 would unscaled.
        QCOMPARE(t.values[(positions + 2) * half], float(std::sin(1.0)));

        std::vector<Instruction*> attention;
        for (Instruction& insn : plan.instructions)
            if (insn.opcode == Opcode::MultiheadAttention) attention.push_back(&insn);
        QVERIFY(attention.size() >= 2);
        AttentionParams other = a;
        other.rope_factor = 3.0f;
        plan.params.push_back(make_param_block(Opcode::MultiheadAttention, other));
        attention[1]->param_block = uint32_t(plan.params.size() - 1);
        const auto f = test::capture_failure([&] { (void)plan_rope_tables(plan, 8, "test"); });
        QVERIFY(f && f->code() == FailureCode::InvalidExecutionPlan);
        QVERIFY2(std::string(f->what()).find("with different RoPE scaling; the test backend keeps "
                                             "one table per theta and head size") !=
                     std::string::npos,
                 f->what());
    }
};

QTEST_GUILESS_MAIN(TestRuntimePlan)
#include "test_runtime_plan.moc"
