#include "test_support.h"

#include "backends/cpu/cpu_generate.h"
#include "models/transformer_config.h"
#include "runtime/backend_parity.h"
#include "runtime/generate.h"
#include "runtime/plan_compiler.h"

#include <QProcess>

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace tmmu::test {

const char* const kTinyGpt2 = R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,
    "vocab_size":97,"n_positions":80})";
const char* const kTinyLlama = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":96,"vocab_size":101,
    "max_position_embeddings":80,"rms_norm_eps":1e-5,"rope_theta":10000.0})";

const char* const kTinyQwen2 = R"({"model_type":"qwen2","hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":96,"vocab_size":101,
    "max_position_embeddings":80,"rms_norm_eps":1e-5,"rope_theta":10000.0})";

const char* const kLlama3RopeScaling = R"({"rope_type":"llama3","factor":8.0,
    "low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":64})";
const char* const kLinearRopeScaling = R"({"type":"linear","factor":4.0})";

std::string with_rope_scaling(const char* config_json, const char* scaling) {
    std::string text = config_json;
    text.insert(text.rfind('}'), std::string(",\"rope_scaling\":") + scaling);
    return text;
}

TransformerConfig tiny_config(const char* json) {
    return parse_transformer_config(json, "tiny");
}

runtime::RunRequest tiny_request(uint32_t batch, uint32_t decode, uint32_t prompt) {
    runtime::RunRequest r;
    r.batch = batch;
    r.prompt_tokens = prompt;
    r.decode_tokens = decode;
    r.seed = 7;
    return r;
}

TransformerConfig long_context_llama() {
    return parse_transformer_config(
        R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":96,
        "vocab_size":101,"max_position_embeddings":2000000000,"rms_norm_eps":1e-5})",
        "long-context");
}

void check_device_memory(const runtime::RunResult& run, uint64_t slack) {
    const runtime::DeviceMemory& m = run.device_memory;
    qInfo("device memory: planned %llu, measured %llu", (unsigned long long)m.planned_bytes,
          (unsigned long long)m.measured_bytes);
    QVERIFY(m.planned_bytes >= run.weight_bytes + run.kv_cache_bytes + run.decode_register_bytes +
                                   run.prefill_register_bytes);
    QVERIFY(m.measured_bytes >= m.planned_bytes);
    QVERIFY(m.measured_bytes <= m.planned_bytes + slack);
}

void add_gpu_parity_rows() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<uint32_t>("batch");
    QTest::addColumn<uint32_t>("prompt");
    QTest::newRow("gpt2 b1") << QString(kTinyGpt2) << 1u << 8u;
    QTest::newRow("gpt2 b3") << QString(kTinyGpt2) << 3u << 8u;
    QTest::newRow("gpt2 b2 odd cache") << QString(kTinyGpt2) << 2u << 3u;
    QTest::newRow("llama b1") << QString(kTinyLlama) << 1u << 8u;
    QTest::newRow("llama b3") << QString(kTinyLlama) << 3u << 8u;
    QTest::newRow("llama b2 odd cache") << QString(kTinyLlama) << 2u << 3u;
    QTest::newRow("qwen2 b2") << QString(kTinyQwen2) << 2u << 8u; // q, k and v biases
    // Prompts of more than 8 rows: CUDA multiplies f16 weights on its tensor cores there.
    QTest::newRow("gpt2 b1 prompt 12") << QString(kTinyGpt2) << 1u << 12u;
    QTest::newRow("llama b2 prompt 12") << QString(kTinyLlama) << 2u << 12u;
    QTest::newRow("qwen2 b1 prompt 12") << QString(kTinyQwen2) << 1u << 12u;
}

void add_rope_scaling_rows() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<uint32_t>("batch");
    QTest::addColumn<uint32_t>("prompt");
    QTest::newRow("llama3 b1") << QString::fromStdString(
                                      with_rope_scaling(kTinyLlama, kLlama3RopeScaling))
                               << 1u << 8u;
    QTest::newRow("linear b2") << QString::fromStdString(
                                      with_rope_scaling(kTinyLlama, kLinearRopeScaling))
                               << 2u << 3u;
}

void check_gpu_parity(const runtime::ExecutorFactory& candidate,
                      runtime::WeightPrecision precision) {
    QFETCH(QString, json);
    QFETCH(uint32_t, batch);
    QFETCH(uint32_t, prompt);
    const std::string text = json.toStdString();
    runtime::RunRequest request = tiny_request(batch, 64, prompt);
    request.weight_precision = precision;
    const runtime::BackendParity p = runtime::compare_backends(
        tiny_config(text.c_str()), request, cpu::make_cpu_executor, candidate, Progress{});
    QCOMPARE(p.steps.size(), size_t(batch + 63));
    QCOMPARE(p.rows, batch * 64);
    qInfo("%s", describe(p).c_str());
    QVERIFY2(p.worst_nmse <= (precision == runtime::WeightPrecision::F16 ? 1e-3 : 1e-5),
             describe(p).c_str());
    QVERIFY2(p.rows - p.same_argmax <= p.rows / 64, describe(p).c_str());
    // The candidate stepped through the reference's tokens.
    QCOMPARE(p.candidate.generated_ids, p.reference.generated_ids);
}

void add_overlap_rows() {
    QTest::addColumn<bool>("poisoned");
    QTest::addColumn<QString>("reader");
    QTest::addColumn<QString>("cause");
    // Only the packing believes the early end: the residual add writes its sum over "embed" in
    // place (harmless), and embed's real end then poisons the live sum.
    QTest::newRow("sharing bytes")
        << false << "instruction 4 (layernorm): reads register 4 'h0.resid_attn'"
        << "register 1 'embed' [64, 2112) was poisoned as dead after instruction 3 and shares "
           "its bytes";
    // The liveness itself ends it early: poisoned before its last reader runs.
    QTest::newRow("ended early")
        << true << "instruction 3 (residual_add): reads register 1 'embed'"
        << "the liveness ended it after instruction 1, though this instruction still reads it";
}

runtime::CompiledPlan overlapping_prefill(bool poisoned) {
    runtime::CompiledPlan plan =
        runtime::compile_transformer(tiny_config(kTinyGpt2), {runtime::PlanMode::Prefill, 8, 64});
    // "embed" (register 1) is read by instruction 3, the first residual add; claim its last
    // reader is instruction 1 so the attention output may take its bytes.
    if (!poisoned) {
        plan.liveness.register_last_read[1] = 1;
        return plan;
    }
    // Only the poisoning is early; the packing still knows the real end, so whatever strategy
    // packs the registers, nothing else takes embed's bytes and the poison is what is read.
    for (auto& bits : plan.liveness.kill_after_instruction)
        bits[0] &= ~uint64_t(2);
    plan.liveness.kill_after_instruction[1][0] |= 2;
    return plan;
}

runtime::CompiledPlan narrow_norm_decode() {
    runtime::CompiledPlan plan =
        runtime::compile_transformer(tiny_config(kTinyGpt2), {runtime::PlanMode::Decode, 1, 64});
    runtime::RegisterDesc& norm = plan.plan.registers[plan.plan.instructions[1].outputs[0].id];
    norm.view.shape[1] = 32;
    norm.view.stride_elems[0] = 32;
    return plan;
}

std::optional<Failure> checked_step_failure(const runtime::ExecutorFactory& backend,
                                            const runtime::CompiledPlan& plan, uint32_t rows) {
    runtime::RunRequest r = tiny_request(1, 2);
    r.check_memory = true;
    const auto executor = backend(plan.plan, runtime::random_weights(plan.plan, 7), r);
    const std::unique_ptr<runtime::Program> program = executor->load(plan);
    const std::vector<int32_t> tokens = runtime::seeded_prompt(rows, 97, 3);
    std::vector<uint32_t> row_slots(rows, 0), positions(rows);
    for (uint32_t i = 0; i < rows; ++i)
        positions[i] = i;
    return capture_failure([&] { (void)program->run(tokens, row_slots, positions); });
}

void check_overlap_is_caught(const runtime::ExecutorFactory& backend) {
    QFETCH(bool, poisoned);
    QFETCH(QString, reader);
    QFETCH(QString, cause);
    const std::optional<Failure> f =
        checked_step_failure(backend, overlapping_prefill(poisoned), 8);
    QVERIFY(f.has_value());
    QCOMPARE(f->code(), FailureCode::AddressCollision);
    const QString what = QString::fromUtf8(f->what());
    QVERIFY2(what.contains(reader) && what.contains(cause), f->what());
}

void check_guard_is_caught(const runtime::ExecutorFactory& backend) {
    const std::optional<Failure> f = checked_step_failure(backend, narrow_norm_decode(), 1);
    QVERIFY(f.has_value());
    QCOMPARE(f->code(), FailureCode::AddressCollision);
    QVERIFY2(std::string(f->what()).find(kNarrowNormFinding) != std::string::npos, f->what());
}

runtime::RunRecord cpu_run(const char* config_json, const runtime::RunRequest& request) {
    runtime::RunRecord rec;
    rec.device = cpu::kCpuDevice;
    rec.model = "tiny";
    rec.config_path = "tiny.json";
    rec.config_text = config_json;
    rec.request = request;
    rec.result = cpu::generate(parse_transformer_config(config_json, "tiny"), request, {});
    return rec;
}

std::optional<Failure> capture_failure(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Failure& f) {
        return f;
    }
    return std::nullopt;
}

std::vector<float> seeded_floats(uint64_t seed, int64_t n, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = (float(state >> 40) / float(1 << 24) * 2.0f - 1.0f) * scale;
    }
    return v;
}

std::string hex(const std::vector<uint8_t>& bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (uint8_t b : bytes) {
        s.push_back(kHex[b >> 4]);
        s.push_back(kHex[b & 15]);
    }
    return s;
}

Buffer buf(uint64_t begin, uint64_t end, uint64_t size, uint64_t alignment) {
    Buffer b;
    b.begin = begin;
    b.end = end;
    b.size = size;
    b.alignment = alignment;
    return b;
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

OffsetProblem random_problem(uint32_t seed, size_t n, uint64_t horizon, uint64_t max_size,
                             bool aligned) {
    std::mt19937_64 rng(seed);
    static constexpr uint64_t kAlign[] = {1, 8, 64, 256};
    OffsetProblem p;
    p.buffers.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        Buffer b;
        b.begin = rng() % horizon;
        uint64_t max_len = std::max<uint64_t>(1, horizon / 8);
        b.end = b.begin + 1 + rng() % max_len;
        b.size = 1 + rng() % max_size;
        b.alignment = aligned ? kAlign[rng() % 4] : 1;
        p.buffers.push_back(b);
    }
    return p;
}

} // namespace tmmu::test

#include "ir/validate.h"
#include "models/graph_builder.h"

namespace tmmu::test {

namespace {

std::vector<int64_t> random_shape(std::mt19937_64& rng) {
    std::vector<int64_t> shape(1 + rng() % 3);
    for (auto& d : shape)
        d = int64_t(1 + rng() % 64);
    return shape;
}

} // namespace

const Tensor& tensor_named(const Graph& g, const char* id) {
    const TensorIndex t = g.find_tensor(id);
    if (t == kNone) throw std::runtime_error(std::string("no tensor ") + id);
    return g.tensors[t];
}

ShapeScheduleRun run_over(const std::string& file, const ModelRequest& asked,
                          const std::vector<DimBinding>& iterations) {
    const LoadedModel m = load_model(file, request_over_iterations(asked, iterations));
    return run_shape_schedule(*m.graph, plan_model(m, Mode::Inference, {}, {}), Mode::Inference, {},
                              iterations, nullptr, {}, m.build_at);
}

Graph random_graph(uint32_t seed, size_t nodes, bool training) {
    std::mt19937_64 rng(seed);
    GraphBuilder gb("random");
    std::vector<TensorIndex> values; // tensors a later node may read
    for (int p = 0; p < 3; ++p)
        values.push_back(gb.add_tensor("param", random_shape(rng), DType::F32, Role::Parameter));
    values.push_back(gb.add_tensor("input", random_shape(rng), DType::F16, Role::Input));
    std::vector<size_t> last_read(64 * 1024, 0);
    std::vector<TensorIndex> forward_outputs;
    for (size_t n = 0; n < nodes; ++n) {
        size_t k = 1 + rng() % 3;
        std::vector<TensorIndex> inputs;
        for (size_t i = 0; i < k; ++i) {
            // Prefer recent values, as real graphs do, so lifetimes stay mostly short.
            size_t back = std::min(values.size(), size_t(1 + rng() % 6));
            TensorIndex t = values[values.size() - back];
            if (std::find(inputs.begin(), inputs.end(), t) == inputs.end()) inputs.push_back(t);
        }
        Role role = (n + 1 == nodes) ? Role::Output : Role::Activation;
        TensorIndex out = gb.add_tensor("act", random_shape(rng), DType::F32, role);
        Tensor& o = gb.tensor(out);
        const Tensor& first = gb.tensor(inputs[0]);
        if (rng() % 5 == 0 && first.role == Role::Activation && first.shape == o.shape &&
            first.dtype == o.dtype)
            o.in_place_of = inputs[0];
        if (rng() % 7 == 0) o.alias_group = fmt::format("g{}", rng() % 3);
        if (training && rng() % 3 == 0) o.saved_for_backward = true;
        if (rng() % 11 == 0) o.alignment = 512;
        gb.add_node("op", inputs, {out}, Phase::Forward);
        values.push_back(out);
        forward_outputs.push_back(out);
        if (rng() % 6 == 0) { // a view of the new tensor, read by a later node
            TensorIndex v =
                gb.add_tensor("view", {int64_t(1 + rng() % 4)}, DType::F32, Role::Activation);
            uint64_t vbytes = gb.tensor(v).shape[0] * 4;
            uint64_t obytes = 4;
            for (int64_t d : gb.tensor(out).shape)
                obytes *= uint64_t(d);
            if (vbytes <= obytes) {
                gb.tensor(v).view = ViewDesc{out, 0, vbytes, {}};
                gb.add_node("view", {out}, {v}, Phase::Forward);
                values.push_back(v);
            } else {
                gb.add_node("op", {out}, {v}, Phase::Forward);
                values.push_back(v);
            }
        }
    }
    if (training) {
        TensorIndex prev = values.back();
        for (size_t i = forward_outputs.size(); i-- > 0;) {
            TensorIndex saved = forward_outputs[i];
            if (!gb.tensor(saved).saved_for_backward) continue;
            TensorIndex g = gb.add_tensor("grad", random_shape(rng), DType::F32, Role::Gradient);
            gb.add_node("op_grad", {prev, saved}, {g}, Phase::Backward);
            prev = g;
        }
    }
    if (forward_outputs.size() > 4 && rng() % 2 == 0) {
        TensorIndex a = forward_outputs[rng() % forward_outputs.size()];
        TensorIndex b = forward_outputs[rng() % forward_outputs.size()];
        if (a != b && gb.tensor(a).alias_group.empty() && gb.tensor(b).alias_group.empty() &&
            gb.tensor(a).in_place_of == kNone && gb.tensor(b).in_place_of == kNone)
            gb.tensor(a).must_not_alias.push_back(b);
    }
    Graph g = gb.take();
    finalize_graph(g);
    return g;
}

uint64_t height_of(const OffsetProblem& p, const std::vector<uint64_t>& offsets) {
    uint64_t h = 0;
    for (size_t i = 0; i < p.buffers.size() && i < offsets.size(); ++i)
        h = std::max(h, offsets[i] + p.buffers[i].size);
    return h;
}

std::string check_solution(const OffsetProblem& p, const OffsetSolution& s) {
    const auto& b = p.buffers;
    if (s.offsets.size() != b.size())
        return fmt::format("{} offsets for {} buffers", s.offsets.size(), b.size());
    for (size_t i = 0; i < b.size(); ++i) {
        if (b[i].alignment > 1 && s.offsets[i] % b[i].alignment != 0)
            return fmt::format("buffer {} at {} breaks its alignment {}", i, s.offsets[i],
                               b[i].alignment);
        if (b[i].pinned && s.offsets[i] != *b[i].pinned)
            return fmt::format("buffer {} at {}, pinned at {}", i, s.offsets[i], *b[i].pinned);
        for (size_t j = i + 1; j < b.size(); ++j) {
            const bool same_time = b[i].begin < b[j].end && b[j].begin < b[i].end;
            const bool same_bytes = b[i].size > 0 && b[j].size > 0 &&
                                    s.offsets[i] < s.offsets[j] + b[j].size &&
                                    s.offsets[j] < s.offsets[i] + b[i].size;
            if (same_time && same_bytes)
                return fmt::format("buffers {} and {} meet in time and share bytes", i, j);
        }
    }
    if (s.height != height_of(p, s.offsets))
        return fmt::format("claims height {}, its offsets reach {}", s.height,
                           height_of(p, s.offsets));
    return {};
}

ProgramRun run_program(const QString& program, const QStringList& args, int timeout_ms,
                       const QProcessEnvironment& env) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished(10000);
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

bool ci_run() {
    return qEnvironmentVariable("CI").compare(QStringLiteral("true"), Qt::CaseInsensitive) == 0;
}

} // namespace tmmu::test
