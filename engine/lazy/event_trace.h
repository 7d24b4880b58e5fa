#pragma once
// The token/effect engine's trace: every event of every forced plan in PlanLinearOrder (ops,
// loc_load, loc_store, base_commit, after_all, publish-save, ...), the buffer pool's acquire,
// release and flush, and markStep's phases. Plain data: the CLI writes it as JSON, sessions
// store it, the studio's token graph view draws it. Its hash is stable across runs (golden
// tests pin it): it covers keys, tokens, versions and buffers, never addresses or times.
#include "core/digest.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::lazy {

enum class EventKind : uint8_t {
    Op,            // a pure tensor op (elementwise, reduction, matmul, view, scatter, copy)
    LocLoad,       // ordered read of a loc
    LocStore,      // ordered write of a loc (semantic or materialize)
    BaseCommit,    // base_commit(baseId, mutId): the base's committed mutation count + 1
    AfterAll,      // token join
    LocInvalidate, // a loc tombstoned (zeroGrad set-to-null)
    PublishSave,   // a saved-for-backward slot published at its token point
    SavedCheck,    // backward's use of a saved slot, checked against the base's commit version
    BackwardJob,   // the root of a lazy backward, threaded on tokGlobal
    PoolAcquire,   // a buffer taken from the pool (reused or new)
    PoolRelease,   // a buffer entered pendingRelease
    PoolFlush,     // pendingRelease moved to the acquirable pool (end of step only)
    MarkStep,      // one of markStep's phases 0..5
    CompiledCall,  // a compiled function's call; its subevents follow, keyed under its instance
};
std::string_view event_kind_name(EventKind k);

inline constexpr int64_t kNone = -1;

struct TraceEvent {
    uint64_t index = 0;   // position in the trace
    int64_t plan = kNone; // forced plan it belongs to; kNone for pool flushes and markStep
    std::string key;      // EventKey as text: "g12:n0", "g12:s0/loc_store/1"
    EventKind kind = EventKind::Op;
    std::string op;   // "matmul", "loc_load", "mark_step.4", ...
    std::string site; // where the program emitted it ("program[3]", a C++ caller's label)
    std::vector<uint64_t> tokens_in, tokens_out; // token value ids
    std::vector<uint64_t> values_in, values_out; // tensor value ids
    std::vector<int64_t> data_from;   // events producing values_in (kNone: an earlier plan)
    std::vector<int64_t> token_from;  // events producing tokens_in (kNone: an earlier plan)
    int64_t loc = kNone;              // LocLoad/LocStore/LocInvalidate: the loc
    uint64_t loc_version = 0;         // committed store count after this event
    uint64_t loc_logical_version = 0; // semantic-intent version the store was scheduled with
    int64_t base = kNone;             // BaseCommit/PublishSave/SavedCheck: the base
    uint64_t base_commit = 0;         // committed mutation count after (or seen by) this event
    int64_t storage = kNone;          // pool events and stores: the buffer
    uint64_t bytes = 0;               // pool events: the buffer's size
    std::string detail;               // words: why it is here ("store: sub_ at program[9]")
};

// One forced plan: which events it ran and what its buffers cost under the pool and under our
// offset planner given the same lifetimes.
struct PlanRecord {
    uint64_t index = 0;
    std::string reason;                      // "read loss at program[12]", "markStep"
    uint64_t first_event = 0, end_event = 0; // [first, end) in the trace
    uint64_t ops = 0;                        // events that ran a kernel or an effect
    uint64_t pool_bytes = 0;      // bytes the pool held at the plan's peak (live+pending+free)
    uint64_t live_peak_bytes = 0; // peak of bytes live at once inside the plan
    uint64_t planned_bytes = 0;   // our planner's arena for the plan's buffers (auto strategy)
    uint64_t buffers = 0;         // buffers live during the plan
};

struct Trace {
    std::vector<TraceEvent> events;
    std::vector<PlanRecord> plans;
};

// SHA-256 over a canonical text of every event (not sites or words: the same program in
// another file gives the same hash).
Digest trace_hash(const Trace& trace);

} // namespace tmmu::lazy
