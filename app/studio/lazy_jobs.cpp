#include "lazy_jobs.h"

#include "io/dsa_csv.h"
#include "io/file_io.h"
#include "lazy/trace_state.h"
#include "plan/planner.h"

#include <fmt/format.h>

namespace tmmu::studio {

bool looks_like_lazy_program_file(const std::string& path) {
    return lazy::looks_like_lazy_program(read_file_head(path, 4096));
}

LazyShown run_lazy_job(const std::string& path, const Progress& progress) {
    const lazy::LazyProgram program = lazy::load_lazy_program(path);
    lazy::ProgramRun run = lazy::run_lazy_program_to_failure(program);
    LazyShown out;
    out.path = path;
    out.name = program.name;
    out.reads = run.reads;
    out.stats = run.stats;
    out.trace_hash = to_hex(run.trace_hash);
    out.failure = run.failure;
    out.comparison = lazy::compare_runs(program);
    const lazy::TraceBuffers buffers = lazy::trace_buffers(run.trace);
    out.trace = std::make_shared<const lazy::Trace>(std::move(run.trace));
    if (buffers.problem.buffers.empty()) return out;
    auto model = std::make_shared<LoadedModel>();
    model->kind = ModelKind::DsaCsv;
    model->path = path;
    model->description = fmt::format("lazy program '{}': {} pool buffers over {} events",
                                     program.name, buffers.ids.size(), out.trace->events.size());
    model->problem = DsaProblem{buffers.problem, buffers.ids, {}};
    out.buffers.plan = std::make_shared<const Plan>(
        plan_problem(buffers.problem, buffers.ids, PlanOptions{}, progress, path));
    out.buffers.model = std::move(model);
    out.buffers.settings.mode = Mode::Training;
    return out;
}

} // namespace tmmu::studio
