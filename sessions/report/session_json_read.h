#pragma once
// Reads a session exported by `tmmu export ID --format json` ("tmmu-session", version 1:
// table_exports.cpp writes it, resources/docs/outputs.md describes it) back into the plan it
// holds, so an exported file can be looked at without the sessions database it came from:
// tensors, arenas with every buffer where the plan put it, metrics, memory over time, hashes.
// The model and its schedule are not in the file: the plan has no execution order, and there is
// nothing to plan again. Each arena's placement goes through the independent validator.
// Failures name the file and the field: IO_ERROR for a file that is not such a JSON document
// (or one with a field missing, of the wrong type, or naming an arena that is not listed),
// ADDRESS_COLLISION / ALLOCATION_OVERFLOW for a placement no plan could have, IO_ERROR for an
// iteration history that does not end on the plan.
#include "plan/plan.h"
#include "plan/replan.h"

#include <optional>
#include <string>
#include <string_view>

namespace tmmu::sessions::report {

struct ExportedSession {
    Plan plan;
    int64_t id = 0;
    std::string title;
    bool altered = false; // exported with "altered": true (its reason in altered_reason)
    std::string altered_reason;
    // inputs.iterations: the run over iterations that ended on the plan, for a session that
    // kept one (schema 9).
    std::optional<IterationHistory> iterations;
};

ExportedSession read_session_json(std::string_view text, std::string_view where);
// Whether a file's first bytes look like such an export (a JSON object naming the format).
bool looks_like_session_json(std::string_view head);

} // namespace tmmu::sessions::report
