#pragma once
// `tmmu plan --apply zero|debug[:SEED] [--data-policy P]`: the plan bound to host memory as a
// runtime would (seed 000's ApplyPlan, ZeroTensor / DebugFillTensor, CommitExecution), every
// tensor read back, and the committed state hash.
#include "args.h"

#include "apply/memory_binding.h"
#include "core/digest.h"
#include "plan/plan.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tmmu::cli {

// What --apply and --data-policy ask for; nothing without --apply (--data-policy alone is an
// error: it only governs what --apply may write).
std::optional<ApplyOptions> apply_options_from(Args& args);

struct AppliedPlan {
    ApplyOptions options;
    size_t arenas = 0, tensors = 0;
    uint64_t host_bytes = 0, filled_bytes = 0;
    double fill_ms = 0.0; // allocating, binding and filling
    Digest state{};
};

// Allocates the plan's arenas on the host, applies the plan, reads every tensor back and
// commits; the memory is released on return. Throws what HostArenas and MemoryBinding throw.
AppliedPlan apply_to_host(const Plan& plan, const ApplyOptions& options);

// "applied    zero fill, ..." and "state      <hash>" lines of the plan summary.
std::string applied_text(const AppliedPlan& a);
// The plan JSON's "applied" object (no timing: it is the same in every run).
nlohmann::ordered_json applied_json(const AppliedPlan& a);

} // namespace tmmu::cli
