#pragma once
// A plan applied to host memory as a runtime would (seed 000's ApplyPlan, ZeroTensor /
// DebugFillTensor, CommitExecution): every tensor bound and filled, read back, and the committed
// state hash. `tmmu plan --apply` and the studio's Plan > Apply to host memory run this one
// function, so both accept, refuse and report the same things.
#include "apply/memory_binding.h"
#include "core/digest.h"
#include "core/progress.h"
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace tmmu::app {

struct AppliedPlan {
    ApplyOptions options;
    size_t arenas = 0, tensors = 0;
    uint64_t host_bytes = 0, filled_bytes = 0;
    double fill_ms = 0.0; // allocating, binding and filling
    Digest state{};
};

// Allocates the plan's arenas on the host, applies the plan, reads every tensor back and
// commits; the memory is released on return. Throws what HostArenas and MemoryBinding throw
// (Cancelled when `progress` is cancelled while filling or reading back).
AppliedPlan apply_to_host(const Plan& plan, const ApplyOptions& options,
                          const Progress& progress = {});

// "zero fill" or "debug fill (seed 7)".
std::string fill_text(const FillSpec& fill);
// The plan JSON's "applied" object (no timing: it is the same in every run).
nlohmann::ordered_json applied_json(const AppliedPlan& a);

} // namespace tmmu::app
