#include "run_jobs.h"

#include "backend_registry.h"
#include "core/failure.h"
#include "io/file_io.h"
#include "model_run.h"
#include "models/transformer_config.h"
#include "runtime/physical_mapping.h"
#include "runtime/plan_compiler.h"

#include <fmt/format.h>

namespace tmmu::studio {

using namespace tmmu::runtime;

// What app/common's inventory found (probed once per process): a backend is offered when it
// can run a plan, else the picker shows why not.
std::vector<BackendChoice> backend_choices() {
    std::vector<BackendChoice> choices;
    for (const app::BackendStatus& s : app::backend_statuses())
        choices.push_back({s.name, s.label, s.runnable, s.not_runnable_reason});
    return choices;
}

namespace {

// The decode program of `record` and its registers as a planned offset problem: what the
// instruction timeline, live ranges, slots and arena views show.
RunShown shown_run(RunRecord record, const Progress& progress) {
    const TransformerConfig config =
        parse_transformer_config(record.config_text, record.config_path);
    const RunRequest& r = record.request;
    const uint64_t prompt = r.prompt_ids.empty() ? r.prompt_tokens : r.prompt_ids.size();
    const uint32_t max_seq = r.max_seq ? r.max_seq : uint32_t(prompt + r.decode_tokens);
    auto decode = std::make_shared<const CompiledPlan>(
        compile_transformer(config, {PlanMode::Decode, r.batch, max_seq}));
    RegisterMemory memory = map_registers(*decode, PlanOptions{}, progress);
    const ArenaPlan& arena = memory.arena.arenas.front();
    auto model = std::make_shared<LoadedModel>();
    model->kind = ModelKind::DsaCsv;
    model->path = decode->plan.name + " registers";
    model->description =
        fmt::format("{} registers of {} ({} instructions)", decode->plan.registers.size(),
                    decode->plan.name, decode->plan.instructions.size());
    model->problem = DsaProblem{arena.problem, arena.buffer_names, {}};
    RunShown out;
    out.registers.model = std::move(model);
    out.registers.plan = std::make_shared<const Plan>(std::move(memory.arena));
    out.registers.settings.mode = Mode::Inference;
    out.decode = std::move(decode);
    out.record = std::make_shared<const RunRecord>(std::move(record));
    return out;
}

} // namespace

RunShown execute_run(const RunJob& job, const Progress& progress) {
    RunRecord rec = app::run_model(job.backend, {}, job.config_path,
                                   read_text_file(job.config_path), job.request, progress);
    int64_t id = 0;
    if (!job.sessions_path.empty()) {
        sessions::SessionStore store(job.sessions_path);
        id = sessions::record_run(store, rec, job.title);
    }
    RunShown out = shown_run(std::move(rec), progress);
    out.run_id = id;
    if (job.compare_cpu && job.backend != "cpu") {
        const runtime::RunRecord& r = *out.record;
        auto parity = std::make_shared<runtime::BackendParity>(app::compare_with_cpu(
            job.backend, {}, parse_transformer_config(r.config_text, r.config_path), job.request,
            progress));
        out.parity_passes = app::passes_cpu_gate(*parity, job.request.weight_precision);
        out.parity_gate = app::cpu_gate_nmse(job.request.weight_precision);
        out.parity = std::move(parity);
    }
    return out;
}

RunShown replay_recorded_run(const std::string& sessions_path, int64_t id,
                             const Progress& progress) {
    sessions::SessionStore store(sessions_path, sessions::StoreAccess::ExistingOnly);
    sessions::StoredRun stored = sessions::load_run(store, id);
    if (!stored.record)
        fail(FailureCode::CorruptCheckpoint, fmt::format("run {}", id),
             stored.summary.altered_reason);
    RunRecord replayed = *stored.record;
    replayed.result = app::rerun(*stored.record, progress);
    const RunComparison c = compare_runs(stored.record->result, replayed.result);
    RunShown out = shown_run(std::move(replayed), progress);
    out.run_id = id;
    out.replay = c;
    return out;
}

std::vector<sessions::RunSummary> recorded_runs(const std::string& sessions_path) {
    sessions::SessionStore store(sessions_path, sessions::StoreAccess::ExistingOnly);
    return sessions::list_runs(store);
}

} // namespace tmmu::studio
