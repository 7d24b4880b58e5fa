#include "replay.h"

#include "core/failure.h"
#include "io/dsa_csv.h"
#include "ir/ir_json.h"

#include <fmt/format.h>

namespace tmmu::sessions {

Plan replan(const SessionInput& input, const Progress& progress) {
    std::string origin = input.source_path + " (stored)";
    if (input.is_problem) {
        DsaProblem p = parse_dsa_csv(input.model_text, origin);
        return plan_problem(p.problem, p.ids, input.options, progress, input.source_path);
    }
    Graph g = load_ir_string(input.model_text, origin);
    return plan_graph(g, input.request.mode, input.options, progress, input.source_path);
}

ReplayResult replay_session(const Session& s, const Progress& progress) {
    if (s.altered)
        fail(FailureCode::CorruptCheckpoint, fmt::format("session {}", s.summary.id),
             "altered: " + s.altered_reason);
    ReplayResult r;
    r.replayed = replan(s.input, progress);
    r.comparison = compare_plans(*s.plan, r.replayed);
    return r;
}

} // namespace tmmu::sessions
