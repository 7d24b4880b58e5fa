#include "lazy/trace_state.h"

#include <fmt/format.h>

namespace tmmu::lazy {
namespace {

// Applies one event to the state; the one place that knows what each event kind changes.
class Replayer {
  public:
    explicit Replayer(TraceSnapshot& s) : s_(s) {}

    void apply(const TraceEvent& e) {
        switch (e.kind) {
        case EventKind::LocStore: {
            LocState& l = s_.locs[e.loc];
            l.version = e.loc_version;
            l.logical_version = e.loc_logical_version;
            break;
        }
        case EventKind::LocLoad:
            s_.locs[e.loc];
            break;
        case EventKind::LocInvalidate:
            s_.locs[e.loc].invalidated = true;
            break;
        case EventKind::BaseCommit:
            s_.base_commits[e.base] = e.base_commit;
            break;
        case EventKind::PublishSave:
        case EventKind::SavedCheck:
            s_.base_commits.emplace(e.base, e.base_commit);
            break;
        case EventKind::PoolAcquire:
            move(e, BufferState::Live);
            break;
        case EventKind::PoolRelease:
            move(e, BufferState::Pending);
            break;
        case EventKind::PoolFlush:
            move(e, BufferState::Acquirable);
            break;
        default:
            break;
        }
    }

  private:
    uint64_t& bytes_in(BufferState st) {
        return st == BufferState::Live      ? s_.live_bytes
               : st == BufferState::Pending ? s_.pending_bytes
                                            : s_.acquirable_bytes;
    }
    void move(const TraceEvent& e, BufferState to) {
        auto [it, fresh] = s_.buffers.try_emplace(e.storage, BufferInfo{e.bytes, to});
        if (!fresh) bytes_in(it->second.state) -= it->second.bytes;
        it->second.state = to;
        bytes_in(to) += e.bytes;
    }
    TraceSnapshot& s_;
};

} // namespace

std::string_view buffer_state_name(BufferState s) {
    switch (s) {
    case BufferState::Live:
        return "live";
    case BufferState::Pending:
        return "pending release";
    case BufferState::Acquirable:
        return "acquirable";
    }
    return "unknown";
}

TraceSnapshot snapshot_at(const Trace& trace, uint64_t event) {
    TraceSnapshot s;
    Replayer r(s);
    const uint64_t end = std::min<uint64_t>(event + 1, trace.events.size());
    for (uint64_t i = 0; i < end; ++i)
        r.apply(trace.events[i]);
    s.after_event = end == 0 ? 0 : end - 1;
    return s;
}

MemorySeries memory_series(const Trace& trace) {
    MemorySeries m;
    TraceSnapshot s;
    Replayer r(s);
    for (const TraceEvent& e : trace.events) {
        r.apply(e);
        m.live.push_back(s.live_bytes);
        m.pending.push_back(s.pending_bytes);
        m.acquirable.push_back(s.acquirable_bytes);
    }
    return m;
}

TraceBuffers trace_buffers(const Trace& trace) {
    TraceBuffers out;
    std::map<int64_t, size_t> open; // storage -> its current lifetime
    const uint64_t end = std::max<uint64_t>(trace.events.size(), 1);
    for (const TraceEvent& e : trace.events) {
        if (e.kind == EventKind::PoolAcquire) {
            open[e.storage] = out.problem.buffers.size();
            out.problem.buffers.push_back({e.index, end, e.bytes});
            out.ids.push_back(fmt::format("b{}@{}", e.storage, e.index));
        } else if (e.kind == EventKind::PoolRelease) {
            if (auto it = open.find(e.storage); it != open.end()) {
                out.problem.buffers[it->second].end = e.index + 1;
                open.erase(it);
            }
        }
    }
    return out;
}

std::string event_rule(const TraceEvent& e) {
    switch (e.kind) {
    case EventKind::Op:
        if (e.detail.rfind("recompute of", 0) == 0)
            return "checkpoint replay (10): backward needed a value the checkpointed body saved, "
                   "so the body's op runs again on the values the body read, with the forward's "
                   "kernel (and key, for a draw): the same bits";
        if (e.op == "fused")
            return "fusion inside a compiled call (15.1-15.3): elementwise ops run as one "
                   "kernel, values shared by its outputs computed once, nothing but its "
                   "outputs written; the same arithmetic per element as unfused";
        if (e.op == "rand_uniform")
            return "keyed random draw (11.1): its key's draw nonce was reserved when the program "
                   "made it, so its values are the same wherever it runs; never merged with "
                   "another draw";
        return "pure op: ordered by its data inputs only; it runs when a forced value needs it "
               "(minimal forcing, 1.2)";
    case EventKind::LocLoad:
        return "join rule (3.3): an ordered read after tokGlobal and the loc's last access; its "
               "fresh token becomes both";
    case EventKind::LocStore:
        return e.detail.rfind("materialize", 0) == 0
                   ? "pending-loc initializer (3.7): the seed stored before the first read, "
                     "whose token (initTok) the read is ordered after"
                   : "semantic store (3.6): committed at its PlanLinearOrder position, the loc's "
                     "commit version + 1";
    case EventKind::BaseCommit:
        return "base_commit (3.6, 4.3): exactly one per in-place mutation, with a unique mutId, "
               "threaded on tokGlobal";
    case EventKind::AfterAll:
        return "after_all (3.1): joins tokens; associative, commutative, idempotent";
    case EventKind::LocInvalidate:
        return "zero_grad set-to-null (9.5): the grad loc tombstoned in token order";
    case EventKind::PublishSave:
        return "publish saved slot (9.3): records the base's commit version at this token point";
    case EventKind::SavedCheck:
        return "saved-for-backward check (9.3): the base's commit version must equal the one "
               "published";
    case EventKind::BackwardJob:
        return "lazy backward (9.1): rooted on tokGlobal so mark_step runs it";
    case EventKind::PoolAcquire:
        return "buffer pool (14.1): only buffers flushed at an earlier step's end are reused";
    case EventKind::PoolRelease:
        return "buffer pool (14.1): a released buffer waits in pendingRelease until the step ends";
    case EventKind::PoolFlush:
        return "buffer pool (14.1): pendingRelease becomes acquirable only at mark_step";
    case EventKind::MarkStep:
        return "mark_step (6): " + e.detail;
    case EventKind::CompiledCall:
        return "compiled call (1.6, 8.6.0): staged when called, run whole when forced; its "
               "subevents follow in program order, so commit versions are what they would be "
               "without compile";
    }
    return {};
}

} // namespace tmmu::lazy
