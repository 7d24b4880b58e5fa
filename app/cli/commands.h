#pragma once
#include "args.h"

#include "io/model_source.h"
#include "plan/planner.h"

#include <string>

namespace tmmu::cli {

int cmd_plan(Args& args);
int cmd_validate(Args& args);
int cmd_gen(Args& args);
int cmd_bench(Args& args);
int cmd_strategies(Args& args);

// Shared option handling (--mode --batch --seq --strategy --arena --align --replay-token).
ModelRequest model_request_from(Args& args);
PlanOptions plan_options_from(Args& args);
// The bundled default model (GPT-2 small config) from the resource directory.
std::string default_model_path();
std::string resource_dir();

} // namespace tmmu::cli
