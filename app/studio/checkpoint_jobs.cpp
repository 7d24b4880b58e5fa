#include "checkpoint_jobs.h"

#include "io/checkpoint.h"
#include "io/file_io.h"

#include <fmt/format.h>

namespace tmmu::studio {

bool looks_like_checkpoint_file(const std::string& path) {
    return looks_like_checkpoint(read_file_head(path, 1));
}

PlanOutcome read_checkpoint_outcome(const std::string& path) {
    Plan plan = read_checkpoint_file(path);
    std::string description =
        fmt::format("checkpoint of '{}': its plan, not its model", plan.source);
    return stored_plan_outcome(std::move(plan), path, std::move(description));
}

} // namespace tmmu::studio
