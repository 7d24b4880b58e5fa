#pragma once
// State blocks (seed 002, A7 and A9.6): memory that outlives one instruction, such as a
// sequence's KV cache. A descriptor says how big a block is and which lifecycle it follows;
// the lifecycle matrix says exactly what each scheduler event does to a block of that class.
#include <cstdint>
#include <string>
#include <string_view>

namespace tmmu::runtime {

enum class StateLifecycle : uint8_t {
    // Per slot, kept across the steps of one request: a KV cache.
    PerRequest,
    // Shared by every slot, meaningless between steps: attention scratch.
    PerStep,
};

enum class StateEvent : uint8_t { Alloc, Reset, Reuse, Evict, CloneForFork, Deinit };
inline constexpr StateEvent kAllStateEvents[] = {StateEvent::Alloc,        StateEvent::Reset,
                                                 StateEvent::Reuse,        StateEvent::Evict,
                                                 StateEvent::CloneForFork, StateEvent::Deinit};

enum class StateAction : uint8_t {
    Allocate,   // reserve the block (zero-filled when the descriptor asks for it)
    Truncate,   // keep the memory, forget the contents: the request's length goes to 0
    Keep,       // nothing happens
    Release,    // return the memory; the next use allocates again
    CopyPrefix, // copy the parent's filled prefix into the child's block
};

// The lifecycle matrix. PerRequest: allocated per slot, truncated when a slot takes a new
// request (reset) or is recycled (reuse), released when the scheduler evicts the request (it
// must prefill again) and at deinit, copied when a request forks. PerStep: allocated once,
// untouched by request events (it holds nothing between steps), released at deinit.
constexpr StateAction state_action(StateLifecycle lifecycle, StateEvent event) {
    switch (event) {
    case StateEvent::Alloc:
        return StateAction::Allocate;
    case StateEvent::Reset:
    case StateEvent::Reuse:
        return lifecycle == StateLifecycle::PerRequest ? StateAction::Truncate : StateAction::Keep;
    case StateEvent::Evict:
        return lifecycle == StateLifecycle::PerRequest ? StateAction::Release : StateAction::Keep;
    case StateEvent::CloneForFork:
        return lifecycle == StateLifecycle::PerRequest ? StateAction::CopyPrefix
                                                       : StateAction::Keep;
    case StateEvent::Deinit:
        return StateAction::Release;
    }
    return StateAction::Keep;
}

struct StateDescriptor {
    uint8_t id = 0;
    std::string name;        // "h3.kv_cache"
    uint64_t size_bytes = 0; // per slot for PerRequest; u64, since long-context caches pass 4 GiB
    uint16_t align_bytes = 64;
    bool zero_init = false;
    StateLifecycle lifecycle = StateLifecycle::PerRequest;

    bool operator==(const StateDescriptor&) const = default;
};

std::string_view lifecycle_name(StateLifecycle lifecycle); // "per_request", "per_step"
std::string_view state_event_name(StateEvent event);       // "alloc", ..., "clone_for_fork"
std::string_view state_action_name(StateAction action);    // "allocate", ..., "copy_prefix"

} // namespace tmmu::runtime
