#pragma once
// The allocation trace of seed section 7 as JSON lines: one allocation_header record, one
// tensor record per tensor (ascending id), one ledger record per point of the plan's memory
// series (seed 000 II.J's resource ledger), one summary record; a failed run's trace ends in
// one failure record. Nothing in it depends on time or on the machine: ratios are fixed-decimal
// strings computed with integers, so the same plan gives the same bytes everywhere (golden
// traces compare files byte for byte).
#include "core/failure.h"
#include "plan/plan.h"
#include "plan/replan.h"

#include <cstdint>
#include <string>

namespace tmmu {

// Every line ends in '\n'. Field order and meaning: resources/docs/outputs.md.
// Throws Failure(InvalidArgument) when a tensor names an arena or buffer the plan lacks.
std::string trace_jsonl(const Plan& plan);
// Written with write_output (io/file_io.h); Failure(IoError) naming the path. With iterations:
// schedule_trace_jsonl.
void write_trace_file(const Plan& plan, const std::string& path,
                      const std::vector<IterationOutcome>& iterations = {});
// A replan record (seed 000, II.H): the iteration, the safepoint, the old and new plan hashes
// and the new plan's binding of the dynamic dimensions.
std::string replan_record_jsonl(const IterationOutcome& iteration);
// The trace of a run over iterations: the trace of `plan`, the one in force after the last
// iteration, then one replan record per replan, in iteration order (just trace_jsonl(plan)
// without iterations).
std::string schedule_trace_jsonl(const Plan& plan, const std::vector<IterationOutcome>& iterations);
// The trace of a run that failed (seed 0.Z's error trace rule): a final failure record naming
// the step, code, operator and replay token; no plan, so no header, tensor or summary records.
// A run over iterations keeps the replan records of the iterations decided before the failure
// (their plans were in force, so their hashes stay on record), in iteration order.
std::string failure_trace_jsonl(const Failure& failure, const Digest& replay_token,
                                const std::vector<IterationOutcome>& decided = {});

// numerator / denominator rounded half-up to `decimals` places, e.g. (1, 3, 4) -> "0.3333",
// (2, 3, 2) -> "0.67"; "0.0000"-style zero when the denominator is 0. Exact integer math.
std::string format_fixed(uint64_t numerator, uint64_t denominator, int decimals);

} // namespace tmmu
