#include "commands.h"

#include "core/failure.h"
#include "core/checked.h"
#include "core/units.h"

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
        fail(FailureCode::InvalidArgument, r.batch == 0 ? "--batch" : "--seq", "must be at least 1");
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

} // namespace

PlanOptions plan_options_from(Args& args) {
    PlanOptions o;
    if (auto s = args.value("--strategy")) o.strategy = *s;
    if (auto a = args.value("--align")) {
        uint64_t align = parse_byte_size(*a, "--align");
        if (!is_power_of_two(align))
            fail(FailureCode::AlignmentViolation, "--align",
                 fmt::format("{} is not a power of two", align));
        o.policy.set_alignment(align);
    }
    for (const std::string& spec : args.values("--arena")) {
        size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0)
            fail(FailureCode::InvalidArgument, "--arena",
                 fmt::format("'{}': expected NAME=CAPACITY, e.g. activations=8GiB", spec));
        o.policy.set_capacity(spec.substr(0, eq),
                              parse_byte_size(spec.substr(eq + 1), "--arena " + spec));
    }
    if (auto t = args.value("--replay-token")) o.replay_token = parse_replay_token(*t);
    return o;
}

std::string resource_dir() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("TMMU_RESOURCES")) return env;
    if (fs::exists(TMMU_SOURCE_RESOURCES)) return TMMU_SOURCE_RESOURCES;
    return TMMU_INSTALL_RESOURCES;
}

std::string default_model_path() { return resource_dir() + "/models/gpt2-small.json"; }

} // namespace tmmu::cli
