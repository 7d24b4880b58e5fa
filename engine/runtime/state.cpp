#include "runtime/state.h"

namespace tmmu::runtime {

std::string_view lifecycle_name(StateLifecycle lifecycle) {
    return lifecycle == StateLifecycle::PerRequest ? "per_request" : "per_step";
}

std::string_view state_event_name(StateEvent event) {
    switch (event) {
    case StateEvent::Alloc:
        return "alloc";
    case StateEvent::Reset:
        return "reset";
    case StateEvent::Reuse:
        return "reuse";
    case StateEvent::Evict:
        return "evict";
    case StateEvent::CloneForFork:
        return "clone_for_fork";
    case StateEvent::Deinit:
        return "deinit";
    }
    return "unknown";
}

std::string_view state_action_name(StateAction action) {
    switch (action) {
    case StateAction::Allocate:
        return "allocate";
    case StateAction::Truncate:
        return "truncate";
    case StateAction::Keep:
        return "keep";
    case StateAction::Release:
        return "release";
    case StateAction::CopyPrefix:
        return "copy_prefix";
    }
    return "unknown";
}

} // namespace tmmu::runtime
