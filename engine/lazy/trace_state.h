#pragma once
// The engine's state at any event of a trace, rebuilt from the trace alone: each loc's commit
// and logical versions, each BaseId's commit version, every pool buffer's state, and bytes over
// events. What the studio shows at the current event; it never runs the engine again.
#include "lazy/event_trace.h"
#include "plan/offset_problem.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tmmu::lazy {

enum class BufferState : uint8_t { Live, Pending, Acquirable };
std::string_view buffer_state_name(BufferState s);

struct LocState {
    uint64_t version = 0;         // committed stores
    uint64_t logical_version = 0; // semantic intent of the latest committed store
    bool invalidated = false;
};

struct BufferInfo {
    uint64_t bytes = 0;
    BufferState state = BufferState::Live;
};

struct TraceSnapshot {
    uint64_t after_event = 0; // state once events [0, after_event] have happened
    std::map<int64_t, LocState> locs;
    std::map<int64_t, uint64_t> base_commits;
    std::map<int64_t, BufferInfo> buffers;
    uint64_t live_bytes = 0, pending_bytes = 0, acquirable_bytes = 0;
};

// O(event): replays the trace's prefix. An event past the end means the whole trace.
TraceSnapshot snapshot_at(const Trace& trace, uint64_t event);

// Bytes per event (after it) in each pool state: the memory-over-events chart.
struct MemorySeries {
    std::vector<uint64_t> live, pending, acquirable;
};
MemorySeries memory_series(const Trace& trace);

// Every buffer lifetime of the run, acquire to release in event indices (a buffer the pool hands
// out again is a new lifetime), as one offset problem: what our planner makes of the whole run
// in one arena, beside the pool's peak. Ids: "b<storage>@<acquire event>".
struct TraceBuffers {
    OffsetProblem problem;
    std::vector<std::string> ids;
};
TraceBuffers trace_buffers(const Trace& trace);

// The spec rule that put this event where it is, in words with its section ("join rule (3.3):
// ..."), for the studio's event details.
std::string event_rule(const TraceEvent& e);

} // namespace tmmu::lazy
