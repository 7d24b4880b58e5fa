#include "plan_apply.h"

#include "core/failure.h"
#include "core/units.h"

#include <charconv>
#include <fmt/format.h>

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

std::string applied_text(const app::AppliedPlan& a) {
    return fmt::format("applied    {}, data policy {}: {} bound in {} ({} of host memory)\n"
                       "           {} written in {:.1f} ms; every tensor read back as written\n"
                       "state      {}\n",
                       app::fill_text(a.options.fill), data_policy_name(a.options.policy),
                       count_of(a.tensors, "tensor"), count_of(a.arenas, "arena"),
                       format_bytes(a.host_bytes), format_bytes(a.filled_bytes), a.fill_ms,
                       to_hex(a.state));
}

} // namespace tmmu::cli
