#include "lazy/event_trace.h"

#include "encoding/sha256.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tmmu::lazy {

std::string_view event_kind_name(EventKind k) {
    switch (k) {
    case EventKind::Op:
        return "op";
    case EventKind::LocLoad:
        return "loc_load";
    case EventKind::LocStore:
        return "loc_store";
    case EventKind::BaseCommit:
        return "base_commit";
    case EventKind::AfterAll:
        return "after_all";
    case EventKind::LocInvalidate:
        return "loc_invalidate";
    case EventKind::PublishSave:
        return "publish_save";
    case EventKind::SavedCheck:
        return "saved_check";
    case EventKind::BackwardJob:
        return "backward_job";
    case EventKind::PoolAcquire:
        return "pool_acquire";
    case EventKind::PoolRelease:
        return "pool_release";
    case EventKind::PoolFlush:
        return "pool_flush";
    case EventKind::MarkStep:
        return "mark_step";
    case EventKind::CompiledCall:
        return "compiled_call";
    }
    return "unknown";
}

Digest trace_hash(const Trace& trace) {
    Sha256 h;
    for (const TraceEvent& e : trace.events) {
        // One canonical line per event; sites and words stay out (same program, same hash).
        const std::string line = fmt::format(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", e.index, e.plan, e.key,
            event_kind_name(e.kind), e.op, fmt::join(e.tokens_in, ","),
            fmt::join(e.tokens_out, ","), fmt::join(e.values_in, ","), fmt::join(e.values_out, ","),
            fmt::join(e.data_from, ","), fmt::join(e.token_from, ","), e.loc, e.loc_version, e.base,
            e.base_commit, e.storage, e.bytes);
        h.update(reinterpret_cast<const uint8_t*>(line.data()), line.size());
    }
    return h.finish();
}

} // namespace tmmu::lazy
