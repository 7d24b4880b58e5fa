#pragma once
// A run and a replay's verdict as text for people: what `tmmu run` prints and the studio's Run
// panel shows, written once.
#include "runtime/run_record.h"

#include <string>

namespace tmmu::runtime {

// Model, backend, every sequence's prompt and generated ids, throughput and latency, memory,
// dispatches (when counted), the logits hash and the parity verdict (when checked); one fact a
// line, labels in a 10-character column.
std::string format_run(const RunRecord& run);

// "identical: 8 steps, logits sha256 ..." or "DIFFERENT at step 4 (decode): ...".
std::string format_replay(const RunComparison& comparison, const RunResult& replayed);

} // namespace tmmu::runtime
