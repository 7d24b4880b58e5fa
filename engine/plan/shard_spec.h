#pragma once
// Seed 000 II.I: a plan is for one rank of a run spread over world_size ranks, and may shard
// whole roles across them. The contract for a sharded role (ZeRO/FSDP-style flat sharding):
// each tensor's elements, flattened, are split into world_size chunks of ceil(E / world_size)
// elements, and rank r holds chunk r (the last ranks hold less, possibly nothing). A sharded
// parameter is gathered whole before every forward or backward node that reads it (a transient
// all_gather buffer, role workspace); optimizer-phase readers update the shard in place. With
// gradients sharded, each parameter gradient the optimizer reads is reduce-scattered into a
// shard of its own right after the node completing it, and the optimizer reads the shard;
// activation gradients (the same IR role) stay whole. Sharded activations are held
// 1/world_size per rank; the transient buffers of the collectives around them (sequence or
// tensor parallelism) are not modelled.
#include "ir/graph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

struct ShardSpec {
    uint32_t world_size = 1;
    uint32_t rank = 0;
    std::vector<Role> roles; // sharded roles, ascending, each once

    // One rank, nothing sharded: the plan every caller gets without asking for more.
    bool single_rank() const { return world_size == 1 && rank == 0 && roles.empty(); }
    bool sharded(Role r) const;
    bool operator==(const ShardSpec&) const = default;
};

// Parameter, activation and optimizer_state (the contracts the seed names) and gradient.
bool shardable_role(Role r);

// Throws Failure(InvalidArgument) at `where` for world_size 0, a rank outside [0, world_size),
// a role that cannot be sharded, a role given twice or out of order, or roles sharded over a
// single rank.
void check_shard_spec(const ShardSpec& spec, std::string_view where);

// A spec as files store it (checkpoints, sessions, exported sessions): the role names are
// parsed and the whole checked as check_shard_spec does. A single rank's spec is refused too:
// writers leave it out. Throws Failure(InvalidArgument) at `where`; readers rethrow the message
// under their own code.
ShardSpec stored_shard_spec(uint64_t world_size, uint64_t rank,
                            const std::vector<std::string>& role_names, std::string_view where);

// "parameter,optimizer_state": the roles as --shard takes them; "" when none.
std::string format_shard_roles(const std::vector<Role>& roles);
// "rank 2 of 8, sharding parameter and optimizer_state": what a summary says of a spec.
std::string describe_shard_spec(const ShardSpec& spec);

// The first and one-past-last element of a tensor of `elements` that `rank` holds.
struct ShardRange {
    uint64_t begin = 0, end = 0;
};
ShardRange shard_range(uint64_t elements, const ShardSpec& spec);

} // namespace tmmu
