#include "commands.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

namespace tmmu::cli {

ModelRequest model_request_from(Args& args) {
    ModelRequest r;
    if (auto m = args.value("--mode")) {
        auto mode = parse_mode(*m);
        if (!mode)
            fail(FailureCode::InvalidArgument, "--mode",
                 fmt::format("unknown mode '{}'; expected inference, forward or training", *m));
        r.mode = *mode;
    }
    r.batch = args.number("--batch", r.batch);
    r.seq = args.number("--seq", r.seq);
    if (r.batch == 0 || r.seq == 0)
        fail(FailureCode::InvalidArgument, r.batch == 0 ? "--batch" : "--seq",
             "must be at least 1");
    return r;
}

namespace {

Digest parse_replay_token(const std::string& hex) {
    Digest d{};
    if (hex.size() != 64)
        fail(FailureCode::InvalidArgument, "--replay-token", "expects 64 hex digits (32 bytes)");
    for (size_t i = 0; i < 32; ++i) {
        unsigned v = 0;
        if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1)
            fail(FailureCode::InvalidArgument, "--replay-token",
                 fmt::format("'{}' is not hexadecimal", hex.substr(2 * i, 2)));
        d[i] = static_cast<uint8_t>(v);
    }
    return d;
}

// A capacity given for an arena no role is routed to would silently do nothing: say so.
// ("arena" is the single arena of offset-assignment CSV problems.)
void check_arenas_are_used(const ArenaPolicy& policy, const std::vector<std::string>& named) {
    for (const std::string& name : named) {
        bool routed = name == "arena";
        for (const std::string& target : policy.arena_of_role)
            routed |= target == name;
        if (!routed)
            fail(FailureCode::InvalidArgument, "--arena " + name,
                 "no role is routed to this arena; arenas: parameters, activations, gradients, "
                 "optimizer (CSV problems: arena), or add one with --route ROLE=ARENA");
    }
}

// "--budget N" (search nodes, reproducible) or "--budget Nms" (milliseconds, not reproducible).
void parse_budget(const std::string& text, PlanOptions& o) {
    const bool ms = text.size() > 2 && text.ends_with("ms");
    const std::string digits = ms ? text.substr(0, text.size() - 2) : text;
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value == 0)
        fail(FailureCode::InvalidArgument, "--budget",
             fmt::format("'{}': expected a positive node count (e.g. 200000) or milliseconds "
                         "(e.g. 500ms)",
                         text));
    (ms ? o.search_budget_ms : o.search_budget) = value;
}

} // namespace

PlanOptions plan_options_from(Args& args) {
    PlanOptions o;
    if (auto s = args.value("--strategy")) o.strategy = *s;
    if (auto budget = args.value("--budget")) parse_budget(*budget, o);
    if (auto a = args.value("--align")) {
        uint64_t align = parse_byte_size(*a, "--align");
        if (!is_power_of_two(align))
            fail(FailureCode::AlignmentViolation, "--align",
                 fmt::format("{} is not a power of two", align));
        o.policy.set_alignment(align);
    }
    std::vector<std::string> capacity_named;
    for (const std::string& spec : args.values("--arena")) {
        size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0)
            fail(FailureCode::InvalidArgument, "--arena",
                 fmt::format("'{}': expected NAME=CAPACITY, e.g. activations=8GiB", spec));
        capacity_named.push_back(spec.substr(0, eq));
        o.policy.set_capacity(spec.substr(0, eq),
                              parse_byte_size(spec.substr(eq + 1), "--arena " + spec));
    }
    for (const std::string& spec : args.values("--route")) {
        size_t eq = spec.find('=');
        auto role = parse_role(spec.substr(0, eq));
        if (eq == std::string::npos || !role || eq + 1 == spec.size())
            fail(FailureCode::InvalidArgument, "--route",
                 fmt::format("'{}': expected ROLE=ARENA, e.g. gradients=activations; roles: "
                             "parameter input output activation gradient optimizer_state workspace",
                             spec));
        std::string arena = spec.substr(eq + 1);
        if (!o.policy.find(arena)) o.policy.set_capacity(arena, UINT64_MAX);
        o.policy.route(*role, arena);
    }
    if (auto t = args.value("--replay-token")) o.replay_token = parse_replay_token(*t);
    check_arenas_are_used(o.policy, capacity_named);
    return o;
}

std::string resource_dir() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("TMMU_RESOURCES")) return env;
    if (fs::exists(TMMU_SOURCE_RESOURCES)) return TMMU_SOURCE_RESOURCES;
    return TMMU_INSTALL_RESOURCES;
}

std::string default_model_path() {
    return resource_dir() + "/models/gpt2-small.json";
}

} // namespace tmmu::cli
