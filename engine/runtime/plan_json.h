#pragma once
// Execution plans as JSON ("format": "tmmu-execution-plan", documented in
// resources/docs/outputs.md): `tmmu compile --json` writes one, `tmmu validate` reads one back
// and runs the load-time checks on it.
#include "runtime/execution_plan.h"

#include <string>
#include <string_view>

namespace tmmu::runtime {

// Deterministic: the same plan gives the same bytes. Derived facts (peak registers, last
// reads, diagnostics) are written for people and ignored on reading.
std::string save_plan_json(const CompiledPlan& plan);

// Parses a plan and runs compile_plan's checks on it. Failures name `origin` and the field:
// INVALID_EXECUTION_PLAN for malformed JSON, a missing or mistyped field or an unknown name;
// UNSUPPORTED_TENSOR_RANK for a view of more than 4 dimensions; INVALID_PARAM_BLOCK_ABI for a
// parameter block of more than 256 bytes or one its instruction cannot use.
CompiledPlan load_plan_json(std::string_view text, std::string_view origin);

// Cheap sniff for `tmmu validate`: a JSON object whose "format" is tmmu-execution-plan.
bool looks_like_plan_json(std::string_view text);

} // namespace tmmu::runtime
