#include "commands.h"

#include "core/failure.h"
#include "core/units.h"
#include "io/file_io.h"

#include <fmt/format.h>

namespace tmmu::cli {

ModelRequest model_request_from(Args& args) {
    ModelRequest r;
    if (auto m = args.value("--mode")) r.mode = app::parse_mode_choice(*m, "--mode");
    if (auto b = args.value("--batch")) r.batch = app::parse_positive(*b, "--batch");
    if (auto s = args.value("--seq")) r.seq = app::parse_positive(*s, "--seq");
    return r;
}

bool sends_one_output_to_stdout(std::initializer_list<OutputOption> outputs) {
    const char* first = nullptr;
    for (const OutputOption& o : outputs) {
        if (!o.path || !is_stdout_path(*o.path)) continue;
        if (first)
            fail(FailureCode::InvalidArgument, o.name,
                 fmt::format("{} already writes to standard output (-); give one of them a file",
                             first));
        first = o.name;
    }
    return first != nullptr;
}

app::PlanChoices plan_choices_from(Args& args) {
    app::PlanChoices c;
    if (auto s = args.value("--strategy")) c.strategy = app::parse_strategy(*s, "--strategy");
    if (auto budget = args.value("--budget")) app::parse_budget(*budget, c, "--budget");
    if (auto a = args.value("--align")) {
        c.alignment = parse_byte_size(*a, "--align");
        if (c.alignment == 0) // 0 would mean "the default" to make_plan_options
            fail(FailureCode::InvalidArgument, "--align", "must be a power of two, at least 1");
    }
    for (const std::string& spec : args.values("--arena"))
        c.capacities.push_back(app::parse_capacity(spec, "--arena"));
    for (const std::string& spec : args.values("--route"))
        c.routes.push_back(app::parse_route(spec, "--route"));
    if (auto t = args.value("--replay-token"))
        c.replay_token = digest_from_hex(*t, "--replay-token");
    return c;
}

} // namespace tmmu::cli
