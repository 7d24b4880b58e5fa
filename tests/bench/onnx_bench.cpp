// tmmu-onnx-bench: prints issue 15's speed figures for ONNX models it writes itself — a 500 MB
// model with external data opened (checker, parse, shape inference, graph) in under 2 s, and a
// 10,000-node model planned in under 1 s — with the phases of each. Timings are machine-bound: a
// program, not a test.
#include "onnx_models.h"

#include "source/model_source.h"

#include "bench_rows.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <string>

namespace {

using namespace tmmu;
using bench::Clock;
using bench::ms_since;
using bench::row;
namespace fs = std::filesystem;

// 125 layers of MatMul(1x1000 by 1000x1000) + Relu: 125 x 4 MB = 500 MB of float weights, in
// one external file written in full (no sparse file: the bytes are on disk as a user's are) or
constexpr int kLayers = 125;
constexpr int64_t kWidth = 1000;

// inline: the weights in the .onnx file itself (protobuf's raw_data), read twice when opened
// (the checker's file form parses the model, then the loader does).
std::string write_500mb_model(const fs::path& dir, bool inline_weights) {
    test::OnnxModelBuilder b(13, inline_weights ? "inline_500mb" : "external_500mb");
    b.input("x", {"batch", std::to_string(kWidth)});
    const uint64_t layer_bytes = uint64_t(kWidth * kWidth * 4);
    std::string prev = "x";
    for (int i = 0; i < kLayers; ++i) {
        const std::string w = fmt::format("w{}", i), mm = fmt::format("mm{}", i),
                          act = fmt::format("act{}", i);
        if (inline_weights)
            b.float_initializer(w, {kWidth, kWidth});
        else
            b.external_initializer(w, {kWidth, kWidth}, "weights.bin", uint64_t(i) * layer_bytes);
        b.node("MatMul", {prev, w}, {mm});
        b.node("Relu", {mm}, {act});
        prev = act;
    }
    b.output(prev, {"batch", std::to_string(kWidth)});
    b.save((dir / "model.onnx").string());
    if (inline_weights) return (dir / "model.onnx").string();
    std::ofstream data(dir / "weights.bin", std::ios::binary | std::ios::trunc);
    const std::string chunk(layer_bytes, '\0');
    for (int i = 0; i < kLayers; ++i)
        data.write(chunk.data(), std::streamsize(chunk.size()));
    return (dir / "model.onnx").string();
}

// 10,000 nodes: 2,500 blocks of MatMul -> Add -> Relu -> Reshape over 64x256 activations, the
// kind of chain an exported MLP or transformer stack is made of.
std::string write_large_graph(const fs::path& dir) {
    test::OnnxModelBuilder b(13, "nodes_10k");
    b.input("x", {"64", "256"});
    b.int64_initializer("shape", {2}, {64, 256});
    std::string prev = "x";
    for (int i = 0; i < 2500; ++i) {
        auto id = [&](const char* what) { return fmt::format("{}{}", what, i); };
        b.node("MatMul", {prev, "wt"}, {id("mm")});
        b.node("Add", {id("mm"), "bias"}, {id("add")});
        b.node("Relu", {id("add")}, {id("relu")});
        b.node("Reshape", {id("relu"), "shape"}, {id("out")});
        prev = id("out");
    }
    b.output(prev, {"64", "256"});
    // Shared weights keep the file small; what is measured is the graph's size.
    b.external_initializer("wt", {256, 256}, "wt.bin", 0);
    b.external_initializer("bias", {256}, "wt.bin", 256 * 256 * 4);
    b.save((dir / "model.onnx").string());
    std::ofstream(dir / "wt.bin", std::ios::binary) << std::string((256 * 256 + 256) * 4, '\0');
    return (dir / "model.onnx").string();
}

void measure(const char* title, const std::string& path, const ModelRequest& request,
             double open_target, double plan_target) {
    fmt::print("{}\n", title);
    auto t0 = Clock::now();
    const LoadedModel m = load_model(path, request);
    row("open (checker, parse, inference, graph)", ms_since(t0), open_target);
    t0 = Clock::now();
    const Plan p = plan_model(m, Mode::Inference, PlanOptions{}, Progress{});
    row("plan (strategy auto, validated)", ms_since(t0), plan_target);
    uint64_t weights = 0;
    for (const Tensor& t : m.graph->tensors)
        if (t.role == Role::Parameter) weights += t.bytes;
    fmt::print("  {} nodes, {} tensors, {:.1f} MB of parameters, {} notes\n", m.graph->nodes.size(),
               m.graph->tensors.size(), double(weights) / 1e6, p.notes.size());
}

// Three replans (batch 16, 32, 64) planned from the shapes the probes found, then with each
// replan's binding checked against the model loaded there: the check's cost is one load per
// replan.
void measure_replans(const std::string& path, const ModelRequest& base) {
    const std::vector<DimBinding> iterations{{{"batch", 16}}, {{"batch", 32}}, {{"batch", 64}}};
    fmt::print("500 MB model, inline weights, three replans (no target):\n");
    const LoadedModel m = load_model(path, request_over_iterations(base, iterations));
    const Plan first = plan_model(m, Mode::Inference, PlanOptions{}, Progress{});
    for (const bool checked : {false, true}) {
        const auto t0 = Clock::now();
        (void)run_shape_schedule(*m.graph, first, Mode::Inference, PlanOptions{}, iterations, {},
                                 Progress{}, checked ? m.build_at : BuildAtBinding{});
        row(checked ? "replans, each checked against a load there"
                    : "replans from the probes' axes",
            ms_since(t0));
    }
}

} // namespace

int main() {
    const fs::path root = fs::temp_directory_path() / "tmmu-onnx-bench";
    fs::remove_all(root);
    fs::create_directories(root / "external");
    fs::create_directories(root / "large");
    fs::create_directories(root / "inline");
    fs::create_directories(root / "deep");
    auto t0 = Clock::now();
    const std::string external = write_500mb_model(root / "external", false);
    const std::string inlined = write_500mb_model(root / "inline", true);
    const std::string large = write_large_graph(root / "large");
    // 500 layers, each slicing a table by the rows of the layer before it: with N bound, every
    // layer's chain folds in one pass.
    const std::string deep = (root / "deep" / "model.onnx").string();
    test::write_layered_shape_chain(deep, 500);
    fmt::print("models written in {:.0f} ms under {}\n", ms_since(t0), root.string());
    ModelRequest batch;
    batch.dims["batch"] = 8;
    measure("500 MB model, weights in an external file:", external, batch, 2000, 0);
    measure("500 MB model, weights inline (no target):", inlined, batch, 0, 0);
    // A run over iterations loads it with batch dynamic: the loader's graph at other batches
    // says which axes follow it.
    measure("500 MB model, external weights, batch dynamic up to 64 (no target):", external,
            request_over_iterations(batch, {{{"batch", 64}}}), 0, 0);
    measure("500 MB model, inline weights, batch dynamic up to 64 (no target):", inlined,
            request_over_iterations(batch, {{{"batch", 64}}}), 0, 0);
    measure_replans(inlined, batch);
    measure("10,000-node model:", large, {}, 0, 1000);
    ModelRequest rows;
    rows.dims["N"] = 128;
    measure("500-layer shape chain, N bound (no target):", deep, rows, 0, 0);
    if (!std::getenv("TMMU_KEEP")) fs::remove_all(root);
    return 0;
}
