#include "host_apply.h"

#include "apply/host_arenas.h"

#include <chrono>
#include <fmt/format.h>
#include <stdexcept>

namespace tmmu::app {

AppliedPlan apply_to_host(const Plan& plan, const ApplyOptions& options, const Progress& progress) {
    const auto start = std::chrono::steady_clock::now();
    HostArenas host(plan);
    MemoryBinding binding(plan, host.memory(), options, progress);
    AppliedPlan a;
    a.fill_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    // Host memory holds what was written: a mismatch is a bug in tmmu, not bad input.
    if (const std::string wrong = binding.verify(progress); !wrong.empty())
        throw std::logic_error("applied memory does not read back as filled: " + wrong);
    a.options = options;
    a.arenas = binding.arenas().size();
    a.tensors = binding.tensor_count();
    a.host_bytes = host.total_bytes();
    a.filled_bytes = binding.filled_bytes();
    a.state = binding.commit();
    return a;
}

std::string fill_text(const FillSpec& fill) {
    return fill.kind == FillKind::Zero ? std::string("zero fill")
                                       : fmt::format("debug fill (seed {})", fill.seed);
}

nlohmann::ordered_json applied_json(const AppliedPlan& a) {
    nlohmann::ordered_json j;
    j["fill"] = fill_kind_name(a.options.fill.kind);
    j["seed"] = a.options.fill.kind == FillKind::Debug ? nlohmann::ordered_json(a.options.fill.seed)
                                                       : nlohmann::ordered_json();
    j["data_policy"] = data_policy_name(a.options.policy);
    j["arenas"] = a.arenas;
    j["host_bytes"] = a.host_bytes;
    j["tensors"] = a.tensors;
    j["filled_bytes"] = a.filled_bytes;
    j["verified"] = true;
    j["state_hash"] = to_hex(a.state);
    return j;
}

} // namespace tmmu::app
