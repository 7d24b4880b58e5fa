#pragma once
// `tmmu plan --apply zero|debug[:SEED] [--data-policy P]`: the options and the summary lines;
// applying is app/common/host_apply.h.
#include "args.h"

#include "host_apply.h"

#include <optional>
#include <string>

namespace tmmu::cli {

// What --apply and --data-policy ask for; nothing without --apply (--data-policy alone is an
// error: it only governs what --apply may write).
std::optional<ApplyOptions> apply_options_from(Args& args);

// "applied    zero fill, ..." and "state      <hash>" lines of the plan summary.
std::string applied_text(const app::AppliedPlan& a);

} // namespace tmmu::cli
