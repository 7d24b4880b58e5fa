#include "model_run.h"

#include "runtime/generate.h"

#include <fmt/format.h>

namespace tmmu::app {

runtime::RunRecord run_model(const std::string& backend, const BackendRunOptions& options,
                             const std::string& config_path, const std::string& config_text,
                             const runtime::RunRequest& request, const Progress& progress,
                             const std::string& what) {
    check_runnable_backend(backend, what);
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

bool passes_cpu_gate(const runtime::BackendParity& parity) {
    return parity.passes(1e-5, parity.rows / 64);
}

std::string cpu_gate_line(const std::string& backend, const runtime::BackendParity& parity) {
    return fmt::format("{} vs cpu: {} -> {}", backend, runtime::describe(parity),
                       passes_cpu_gate(parity) ? "passes (NMSE <= 1e-5, argmax misses <= 1 in 64)"
                                               : "FAILS the gate (NMSE <= 1e-5, argmax misses "
                                                 "<= 1 in 64)");
}

runtime::RunResult rerun(const runtime::RunRecord& record, const Progress& progress) {
    check_runnable_backend(record.backend, "backend");
    return runtime::rerun(record, executor_factory(record.backend), progress);
}

} // namespace tmmu::app
