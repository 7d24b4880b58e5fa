#include "plan_apply.h"

#include "interrupt.h"

#include "apply/host_arenas.h"
#include "core/failure.h"
#include "core/units.h"

#include <charconv>
#include <chrono>
#include <fmt/format.h>
#include <stdexcept>

namespace tmmu::cli {

namespace {

FillSpec parse_fill(const std::string& text) {
    if (text == "zero") return {FillKind::Zero, 0};
    if (text == "debug") return {FillKind::Debug, 0};
    if (text.starts_with("debug:")) {
        FillSpec f{FillKind::Debug, 0};
        const char* first = text.data() + 6;
        const char* last = text.data() + text.size();
        const auto [end, ec] = std::from_chars(first, last, f.seed);
        if (ec == std::errc::result_out_of_range)
            fail(FailureCode::InvalidArgument, "--apply",
                 fmt::format("the seed {} is larger than 2^64 - 1", text.substr(6)));
        if (ec == std::errc() && end == last) return f;
    }
    fail(FailureCode::InvalidArgument, "--apply",
         fmt::format("expects zero, debug or debug:SEED (an unsigned integer), got '{}'", text));
}

DataPolicy parse_policy(const std::string& text) {
    for (DataPolicy p : {DataPolicy::Standard, DataPolicy::Confidential, DataPolicy::Regulated})
        if (text == data_policy_name(p)) return p;
    fail(FailureCode::InvalidArgument, "--data-policy",
         fmt::format("expects standard, confidential or regulated, got '{}'", text));
}

} // namespace

std::optional<ApplyOptions> apply_options_from(Args& args) {
    const auto fill = args.value("--apply");
    const auto policy = args.value("--data-policy");
    if (!fill) {
        if (policy)
            fail(FailureCode::InvalidArgument, "--data-policy",
                 "governs what --apply writes; give --apply zero or --apply debug with it");
        return std::nullopt;
    }
    const ApplyOptions options{parse_fill(*fill),
                               policy ? parse_policy(*policy) : DataPolicy::Standard};
    check_fill_allowed(options.fill, options.policy); // before planning and allocating
    return options;
}

AppliedPlan apply_to_host(const Plan& plan, const ApplyOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const Progress progress = interruptible_progress();
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

std::string applied_text(const AppliedPlan& a) {
    const std::string fill = a.options.fill.kind == FillKind::Zero
                                 ? std::string("zero fill")
                                 : fmt::format("debug fill (seed {})", a.options.fill.seed);
    return fmt::format("applied    {}, data policy {}: {} bound in {} ({} of host memory)\n"
                       "           {} written in {:.1f} ms; every tensor read back as written\n"
                       "state      {}\n",
                       fill, data_policy_name(a.options.policy), count_of(a.tensors, "tensor"),
                       count_of(a.arenas, "arena"), format_bytes(a.host_bytes),
                       format_bytes(a.filled_bytes), a.fill_ms, to_hex(a.state));
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

} // namespace tmmu::cli
