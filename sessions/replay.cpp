#include "replay.h"

#include "core/failure.h"
#include "core/units.h"
#include "io/dsa_csv.h"
#include "ir/dynamic_dims.h"
#include "ir/ir_json.h"

#include <fmt/format.h>

namespace tmmu::sessions {

LoadedModel load_input(const SessionInput& input) {
    std::string origin = input.source_path + " (stored)";
    LoadedModel m;
    m.path = input.source_path;
    if (input.is_problem) {
        m.kind = ModelKind::DsaCsv;
        m.problem = parse_dsa_csv(input.model_text, origin);
        m.description = fmt::format("offset-assignment problem, {} (stored)",
                                    count_of(m.problem->problem.buffers.size(), "buffer"));
    } else {
        m.kind = ModelKind::IrJson;
        m.graph = load_ir_string(input.model_text, origin);
        m.annotations = dim_annotations(*m.graph); // a stored graph keeps its dynamic axes' names
        m.description = fmt::format("IR '{}', {}, {} (stored)", m.graph->name,
                                    count_of(m.graph->tensors.size(), "tensor"),
                                    count_of(m.graph->nodes.size(), "node"));
    }
    return m;
}

Plan replan(const SessionInput& input, const Progress& progress) {
    LoadedModel m = load_input(input);
    return plan_model(m, input.request.mode, input.options, progress);
}

ShapeScheduleRun replay_schedule(const SessionInput& input, const Progress& progress) {
    LoadedModel m = load_input(input);
    if (!m.graph || !input.iterations)
        fail(FailureCode::InvalidArgument, input.source_path + " (stored)",
             "the session is no run over iterations");
    const IterationHistory& h = *input.iterations;
    bind_dims(*m.graph, h.start, "the stored iterations' start");
    std::vector<DimBinding> dims;
    for (const IterationOutcome& i : h.decided)
        dims.push_back(i.dims);
    // The first plan takes one share of the bar and each iteration one (run_shape_schedule
    // reports by iteration, a replan inside its iteration's share).
    const double first_share = 1.0 / double(dims.size() + 1);
    Plan first = plan_model(m, input.request.mode, input.options, progress.part(0, first_share));
    return run_shape_schedule(std::move(*m.graph), std::move(first), input.request.mode,
                              input.options, dims, {}, progress.part(first_share, 1));
}

ReplayResult replay_session(const Session& s, const Progress& progress) {
    if (s.altered)
        fail(FailureCode::CorruptCheckpoint, fmt::format("session {}", s.summary.id),
             "altered: " + s.altered_reason);
    ReplayResult r;
    if (s.input.iterations) {
        ShapeScheduleRun run = replay_schedule(s.input, progress);
        r.replayed = std::move(run.plan);
        r.iterations = compare_iterations(*s.input.iterations, std::move(run.iterations));
    } else {
        r.replayed = replan(s.input, progress);
    }
    r.comparison = compare_plans(*s.plan, r.replayed);
    r.source = check_source(s.input);
    return r;
}

} // namespace tmmu::sessions
