#pragma once
// What a person asks of a planning run, from `tmmu`'s flags or the studio's toolbar and command
// line, and the one place both turn it into engine options: the two front ends accept and
// refuse exactly the same things, with the same messages.
#include "core/digest.h"
#include "ir/graph.h"
#include "ir/mode.h"
#include "plan/planner.h"
#include "source/model_source.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tmmu::app {

// One arena's settings (`--arena NAME=CAPACITY[:ALIGN[:PAGE]]`, seed 000 I.B's arena_config):
// a capacity, an alignment, a page size, or any of them together.
struct ArenaSetting {
    std::string name;
    std::optional<uint64_t> capacity{};  // none: unbounded
    std::optional<uint64_t> alignment{}; // none: --align, else the model kind's default
    std::optional<uint64_t> page_size{}; // none: not paged (ArenaConfig::page_size)
    bool operator==(const ArenaSetting&) const = default;
};
using ArenaSettings = std::vector<ArenaSetting>;
using RouteList = std::vector<std::pair<Role, std::string>>;

struct PlanChoices {
    std::string strategy = "auto";
    uint64_t search_budget = 0;    // search nodes of "optimal"; 0: its default
    uint64_t search_budget_ms = 0; // milliseconds instead of nodes (not reproducible)
    uint64_t alignment = 0;        // every arena's; 0: the kind's default, 128 graphs, 1 problems
    ArenaSettings arenas;          // per arena, over `alignment`; each name at most once
    RouteList routes;              // role -> arena (graphs only; a new name makes a new arena)
    uint64_t memory_budget = 0;    // all arenas' bytes together at most; 0: no budget
    ShardSpec shard;               // --world-size, --rank, --shard (graphs only)
    Digest replay_token{};
};

// Engine options for a model of this kind. Throws Failure(InvalidArgument) for an unknown
// strategy, a search budget for a strategy other than optimal, an arena setting naming an arena no
// role is routed to (offset problems have the single arena "arena"), an arena set twice or a
// setting with no capacity, alignment or page size, a role routed twice, routes or sharding
// given for an offset problem, a rank outside the world or roles sharded over one rank;
// Failure(AlignmentViolation) for an alignment (global or an
// arena's) that is not a power of two; Failure(InvalidArgument) for a page size that is not.
PlanOptions make_plan_options(const PlanChoices& choices, ModelKind kind);

// The text forms both front ends accept; `where` names the option or field in errors.
std::string parse_strategy(std::string_view name, std::string_view where); // a registered one
// --align: a size, not 0 (0 stands for "the default" in PlanChoices); the power-of-two check
// is make_plan_options', which names AlignmentViolation.
uint64_t parse_alignment(std::string_view text, std::string_view where);
// "NAME=CAPACITY", "NAME=CAPACITY:ALIGNMENT", "NAME=:ALIGNMENT", "NAME=CAPACITY:ALIGN:PAGE",
// "NAME=CAPACITY::PAGE" or "NAME=::PAGE"; sizes as parse_byte_size.
ArenaSetting parse_arena_setting(std::string_view spec, std::string_view where);
// The same setting as text, each size in the largest binary unit that holds it exactly
// ("activations=8GiB:256", "parameters=:4KiB", "activations=8GiB::2MiB").
std::string format_arena_setting(const ArenaSetting& setting);
// "ROLE=ARENA" (--route): a role by its name (parameter, gradient, workspace, ...) and an arena,
// an existing one or a new one. Arena names, here and in arena settings, are letters, digits,
// '_', '-' and '.'.
RouteList::value_type parse_route(std::string_view spec, std::string_view where);
std::string format_route(const RouteList::value_type& route); // "workspace=scratch"
// The entries of a list, separated by commas, semicolons or white space (empty ones dropped):
// --shard's roles, the studio's fields.
std::vector<std::string> split_list(std::string_view text);
// --world-size: 1 to 2^32 - 1 ranks. --rank: 0 to 2^32 - 2 (make_plan_options checks it against
// the world size).
uint32_t parse_world_size(std::string_view text, std::string_view where);
uint32_t parse_rank(std::string_view text, std::string_view where);
// --shard: "gradient,optimizer_state" (commas or spaces), roles that can be sharded
// (shardable_role), each once; returned in ascending role order.
std::vector<Role> parse_shard_roles(std::string_view text, std::string_view where);
// --memory-budget: a size, not 0 (0 stands for "no budget" in PlanChoices).
uint64_t parse_memory_budget(std::string_view text, std::string_view where);
// "N" search nodes (reproducible) or "Nms" milliseconds; sets one of the two budgets.
void parse_budget(std::string_view text, PlanChoices& choices, std::string_view where);
Mode parse_mode_choice(std::string_view text, std::string_view where);
// A positive integer (batch, sequence length, session id).
uint64_t parse_positive(std::string_view text, std::string_view where);
// "NAME=VALUE" (--dim): a symbolic dimension's value, positive.
std::pair<std::string, int64_t> parse_dim_binding(std::string_view text, std::string_view where);
// "batch=2,seq=512" (--iteration): one iteration's dimensions, each named once, at least one.
DimBinding parse_iteration(std::string_view text, std::string_view where);
// "INPUT=1x3x640x640" (--input-shape): a whole input shape, every dim positive.
std::pair<std::string, std::vector<int64_t>> parse_input_shape(std::string_view text,
                                                               std::string_view where);

// Bundled resources: $TMMU_RESOURCES, else share/tmmu beside the running binary's bin/ (an
// install or an unpacked package), else the source tree's resources/, else the configured
// install prefix's share/tmmu.
std::string resource_dir();
// The bundled default model: the GPT-2 small config.
std::string default_model_path();

} // namespace tmmu::app
