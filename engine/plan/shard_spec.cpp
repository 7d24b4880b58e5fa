#include "plan/shard_spec.h"

#include "core/failure.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu {

bool ShardSpec::sharded(Role r) const {
    return std::find(roles.begin(), roles.end(), r) != roles.end();
}

bool shardable_role(Role r) {
    return r == Role::Parameter || r == Role::Activation || r == Role::Gradient ||
           r == Role::OptimizerState;
}

void check_shard_spec(const ShardSpec& spec, std::string_view where) {
    const auto bad = [&](const std::string& message) {
        fail(FailureCode::InvalidArgument, std::string(where), message);
    };
    if (spec.world_size == 0) bad("the world size must be at least 1");
    if (spec.rank >= spec.world_size)
        bad(fmt::format("rank {} is outside a world of {} (ranks 0 to {})", spec.rank,
                        spec.world_size, spec.world_size - 1));
    for (size_t i = 0; i < spec.roles.size(); ++i) {
        const Role r = spec.roles[i];
        if (!shardable_role(r))
            bad(fmt::format("role '{}' cannot be sharded; parameter, activation, gradient and "
                            "optimizer_state can",
                            role_name(r)));
        if (i > 0 && spec.roles[i - 1] >= r)
            bad(fmt::format("role '{}' is given twice or out of order", role_name(r)));
    }
    if (!spec.roles.empty() && spec.world_size == 1)
        bad("sharding over a single rank changes nothing: give the world size (--world-size)");
}

ShardSpec stored_shard_spec(uint64_t world_size, uint64_t rank,
                            const std::vector<std::string>& role_names, std::string_view where) {
    const auto bad = [&](const std::string& message) {
        fail(FailureCode::InvalidArgument, std::string(where), message);
    };
    if (world_size > UINT32_MAX || rank > UINT32_MAX)
        bad(fmt::format("world size {} and rank {} do not fit in 32 bits", world_size, rank));
    ShardSpec spec{uint32_t(world_size), uint32_t(rank), {}};
    for (const std::string& name : role_names) {
        const std::optional<Role> role = parse_role(name);
        if (!role) bad(fmt::format("unknown role '{}'", name));
        spec.roles.push_back(*role);
    }
    check_shard_spec(spec, where);
    if (spec.single_rank()) bad("a single rank's plan stores no shard entry");
    return spec;
}

std::string format_shard_roles(const std::vector<Role>& roles) {
    std::string out;
    for (Role r : roles)
        out += fmt::format("{}{}", out.empty() ? "" : ",", role_name(r));
    return out;
}

std::string describe_shard_spec(const ShardSpec& spec) {
    std::string roles;
    for (size_t i = 0; i < spec.roles.size(); ++i)
        roles += fmt::format("{}{}",
                             i == 0                       ? ""
                             : i + 1 == spec.roles.size() ? " and "
                                                          : ", ",
                             role_name(spec.roles[i]));
    return fmt::format("rank {} of {}, {}", spec.rank, spec.world_size,
                       roles.empty() ? "nothing sharded" : "sharding " + roles);
}

ShardRange shard_range(uint64_t elements, const ShardSpec& spec) {
    const uint64_t chunk = elements / spec.world_size + (elements % spec.world_size != 0);
    // chunk * rank is only formed when it stays within elements (it could pass 2^64 otherwise).
    const uint64_t begin =
        chunk == 0 || spec.rank > elements / chunk ? elements : chunk * spec.rank;
    return {begin, begin + std::min(chunk, elements - begin)};
}

} // namespace tmmu
