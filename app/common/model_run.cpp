#include "model_run.h"

#include "core/failure.h"
#include "runtime/generate.h"

#include <fmt/format.h>

namespace tmmu::app {

runtime::WeightPrecision parse_weight_precision(std::string_view text, std::string_view where) {
    if (text == "f32") return runtime::WeightPrecision::F32;
    if (text == "f16") return runtime::WeightPrecision::F16;
    fail(FailureCode::InvalidArgument, std::string(where),
         fmt::format("'{}': expected f32 or f16", text));
}

runtime::RunRecord run_model(const std::string& backend, const BackendRunOptions& options,
                             const std::string& config_path, const std::string& config_text,
                             const runtime::RunRequest& request, const Progress& progress,
                             const std::string& what) {
    check_runnable_backend(backend, what);
    if (backend == "cpu" && request.weight_precision != runtime::WeightPrecision::F32)
        fail(FailureCode::InvalidArgument, "--weight-precision",
             "f16 weights run on the GPU backends; the CPU backend is the f32 reference");
    runtime::RunRecord rec;
    rec.backend = backend;
    rec.device = run_device(backend);
    rec.config_path = config_path;
    rec.config_text = config_text;
    const TransformerConfig config = parse_transformer_config(config_text, config_path);
    rec.model = config.name;
    rec.request = request;
    rec.result = runtime::generate(config, request, executor_factory(backend, options), progress);
    return rec;
}

runtime::BackendParity compare_with_cpu(const std::string& backend,
                                        const BackendRunOptions& options,
                                        const TransformerConfig& config,
                                        const runtime::RunRequest& request,
                                        const Progress& progress) {
    check_runnable_backend(backend, "backend");
    runtime::RunRequest quiet = request;
    quiet.counters = false;
    return runtime::compare_backends(config, quiet, executor_factory("cpu", {}),
                                     executor_factory(backend, options), progress);
}

double cpu_gate_nmse(runtime::WeightPrecision precision) {
    return precision == runtime::WeightPrecision::F16 ? 1e-3 : 1e-5;
}

bool passes_cpu_gate(const runtime::BackendParity& parity, runtime::WeightPrecision precision) {
    return parity.passes(cpu_gate_nmse(precision), parity.rows / 64);
}

std::string cpu_gate_line(const std::string& backend, const runtime::BackendParity& parity,
                          runtime::WeightPrecision precision) {
    return fmt::format("{} vs cpu: {} -> {} (NMSE <= {:g} with {} weights, argmax misses <= 1 in "
                       "64)",
                       backend, runtime::describe(parity),
                       passes_cpu_gate(parity, precision) ? "passes" : "FAILS the gate",
                       cpu_gate_nmse(precision), runtime::weight_precision_name(precision));
}

runtime::RunResult rerun(const runtime::RunRecord& record, const Progress& progress) {
    check_runnable_backend(record.backend, "backend");
    return runtime::rerun(record, executor_factory(record.backend), progress);
}

} // namespace tmmu::app
