#include "plan/planner.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"
#include "plan/linear_scan.h"
#include "plan/memory_series.h"
#include "plan/plan_hash.h"
#include "plan/plan_summary.h"
#include "plan/shard_graph.h"
#include "plan/strategies/optimal.h"
#include "plan/strategy.h"
#include "plan/validator.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <numeric>
#include <optional>

namespace tmmu {

ArenaPolicy ArenaPolicy::defaults(uint64_t alignment) {
    ArenaPolicy p;
    for (const char* name : {"parameters", "activations", "gradients", "optimizer"})
        p.arenas.push_back({name, UINT64_MAX, alignment});
    p.route(Role::Parameter, "parameters");
    p.route(Role::Input, "activations");
    p.route(Role::Output, "activations");
    p.route(Role::Activation, "activations");
    p.route(Role::Workspace, "activations");
    p.route(Role::Gradient, "gradients");
    p.route(Role::OptimizerState, "optimizer");
    return p;
}

void ArenaPolicy::set_capacity(const std::string& arena, uint64_t capacity) {
    for (auto& a : arenas)
        if (a.name == arena) {
            a.capacity = capacity;
            return;
        }
    uint64_t alignment = arenas.empty() ? 128 : arenas.front().alignment;
    arenas.push_back({arena, capacity, alignment});
}

void ArenaPolicy::set_alignment(uint64_t alignment) {
    for (auto& a : arenas)
        a.alignment = alignment;
}

void ArenaPolicy::route(Role role, const std::string& arena) {
    arena_of_role[static_cast<size_t>(role)] = arena;
}

const ArenaConfig* ArenaPolicy::find(const std::string& arena) const {
    for (const auto& a : arenas)
        if (a.name == arena) return &a;
    return nullptr;
}

namespace {

const OffsetStrategy& require_strategy(const std::string& name) {
    if (const OffsetStrategy* s = find_strategy(name)) return *s;
    std::string known;
    for (const OffsetStrategy* s : all_strategies())
        known += fmt::format(" {}", s->name());
    fail(FailureCode::InvalidArgument, "strategy",
         fmt::format("unknown strategy '{}'; expected one of:{}", name, known));
}

void check_policy(const ArenaPolicy& policy) {
    for (const auto& a : policy.arenas) {
        if (!is_power_of_two(a.alignment))
            fail(FailureCode::AlignmentViolation, fmt::format("arena '{}'.alignment", a.name),
                 fmt::format("alignment {} is not a power of two", a.alignment));
        if (a.page_size != 0 && !is_power_of_two(a.page_size))
            fail(FailureCode::InvalidArgument, fmt::format("arena '{}'.page_size", a.name),
                 fmt::format("page size {} is not a power of two", a.page_size));
    }
}

// The seed operators planning runs as (section 5): a failure names the one it left.
constexpr std::string_view kPlanMemory = "UML_OS.TMMU.PlanMemory_v2";
constexpr std::string_view kAnalyzeLiveness = "UML_OS.Model.AnalyzeLiveness_v1";
constexpr std::string_view kMapToVirtualAddresses = "UML_OS.TMMU.MapToVirtualAddresses_v1";
constexpr std::string_view kAssignLogicalSlots = "UML_OS.TMMU.AssignLogicalSlots_v1";

// Runs one stage of planning as seed operator `op`: a Failure leaving it names the operator
// (a trace's failure record, seed 0.Z) unless a stage inside it already did.
template <typename Stage>
decltype(auto) as_operator(std::string_view op, Stage&& stage) {
    try {
        return stage();
    } catch (Failure& f) {
        f.name_operator(op);
        throw;
    }
}

// Solves one arena with the requested strategy (the offsets: MapToVirtualAddresses), then has
// the independent validator check it and the seed's linear scan label its buffers with logical
// slots (slots == max live).
void solve_arena(ArenaPlan& arena, const OffsetStrategy& strategy, const Progress& progress) {
    auto start = std::chrono::steady_clock::now();
    auto stop = start;
    as_operator(kMapToVirtualAddresses, [&] {
        try {
            arena.solution = strategy.solve(arena.problem, progress);
            stop = std::chrono::steady_clock::now();
            const auto& names = arena.buffer_names;
            validate_solution(arena.problem, arena.solution.offsets, arena.config.name,
                              [&names](size_t i) { return fmt::format("'{}'", names[i]); });
        } catch (const Failure& f) {
            const ArenaConfig& c = arena.config;
            if (f.code() != FailureCode::ArenaTooSmall || c.usable_capacity() == c.capacity) throw;
            throw Failure(f.code(), f.where(),
                          fmt::format("{} (its capacity of {} bytes in whole pages of {} bytes)",
                                      f.message(), c.capacity, c.page_size),
                          f.step());
        }
    });
    arena.strategy =
        arena.solution.producer.empty() ? std::string(strategy.name()) : arena.solution.producer;
    SlotAssignment slots =
        as_operator(kAssignLogicalSlots, [&] { return assign_slots(arena.problem, 1); });
    arena.slot_of_buffer = std::move(slots.slot_of);
    ArenaMetrics& m = arena.metrics;
    m.peak_bytes = arena.solution.height;
    m.lower_bound = lower_bound_bytes(arena.problem);
    m.slot_count = slots.slot_count;
    m.max_live = slots.max_live;
    m.buffers = static_cast<uint32_t>(arena.problem.buffers.size());
    m.plan_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
}

void solve_all(Plan& plan, const PlanOptions& options, const Progress& progress) {
    // "optimal" with a budget of its own; the registry's instance keeps the default.
    std::optional<OptimalStrategy> optimal;
    if (options.strategy == "optimal" && (options.search_budget != 0 || options.search_budget_ms))
        optimal.emplace(
            OptimalOptions{options.search_budget ? options.search_budget : kDefaultOptimalBudget,
                           options.search_budget_ms});
    const OffsetStrategy& strategy = optimal ? *optimal : require_strategy(options.strategy);
    const double arenas = double(plan.arenas.size());
    for (size_t a = 0; a < plan.arenas.size(); ++a) {
        progress.check_cancel("planning");
        progress.report(double(a) / arenas, fmt::format("arena {}", plan.arenas[a].config.name));
        // A strategy reports its own [0, 1]: that is this arena's share of the bar.
        solve_arena(plan.arenas[a], strategy, progress.part(double(a) / arenas, (a + 1) / arenas));
        plan.total_plan_ns += plan.arenas[a].metrics.plan_ns;
    }
    // A search that was cancelled returns its best plan so far (strategies may stop early),
    // but a cancelled planning run is not a result: the caller asked it to stop.
    progress.check_cancel("planning");
    // Every front end shows the plan's totals: they must fit in 64 bits like every other size
    // (Failure(AllocationOverflow) at totals.peak_bytes otherwise), so no reader of a Plan ever
    // meets a sum it cannot represent.
    plan_totals(plan);
    progress.report(1.0, "done");
}

// must_not_alias: two tensors that may never share bytes get overlapping lifetimes, so that no
// strategy can place them on the same bytes. Tensors sharing one storage cannot honour it. Two
// storages in different arenas never share bytes, so they keep their lifetimes: widening them
// would hold a gradient's bytes from the first step for a parameter it must not alias.
void widen_must_not_alias(const Graph& g, const ArenaPolicy& policy, Liveness& lv) {
    auto arena_of = [&](uint32_t storage) -> const std::string& {
        return policy.arena_of_role[static_cast<size_t>(g.tensors[lv.storages[storage].root].role)];
    };
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (!lv.active[t]) continue;
        for (TensorIndex u : g.tensors[t].must_not_alias) {
            if (!lv.active[u]) continue;
            uint32_t a = lv.storage_of[t], b = lv.storage_of[u];
            if (a == b)
                fail(FailureCode::InvalidIrShapes,
                     fmt::format("tensor '{}'.must_not_alias", g.tensors[t].id),
                     fmt::format("'{}' shares storage with it (view, alias group or in-place "
                                 "write), so they cannot be kept apart",
                                 g.tensors[u].id));
            if (arena_of(a) != arena_of(b)) continue;
            Lifetime span{std::min(lv.storages[a].life.begin, lv.storages[b].life.begin),
                          std::max(lv.storages[a].life.end, lv.storages[b].life.end)};
            lv.storages[a].life = span;
            lv.storages[b].life = span;
        }
    }
}

// Splits storages into arenas by their root tensor's role; within an arena buffers are ordered
// by root tensor id, the seed's tie-break key, which makes every strategy deterministic.
std::vector<ArenaPlan> build_arenas(const Graph& g, const Liveness& lv, const ArenaPolicy& policy,
                                    std::vector<std::vector<uint32_t>>& storages_of_arena) {
    std::vector<ArenaPlan> arenas;
    std::vector<std::vector<uint32_t>> members(policy.arenas.size());
    for (uint32_t s = 0; s < lv.storages.size(); ++s) {
        Role role = g.tensors[lv.storages[s].root].role;
        const std::string& name = policy.arena_of_role[static_cast<size_t>(role)];
        auto it = std::find_if(policy.arenas.begin(), policy.arenas.end(),
                               [&](const ArenaConfig& a) { return a.name == name; });
        if (it == policy.arenas.end())
            fail(FailureCode::InvalidArgument, fmt::format("role '{}'", role_name(role)),
                 fmt::format("routed to arena '{}', which is not configured", name));
        members[it - policy.arenas.begin()].push_back(s);
    }
    for (size_t a = 0; a < policy.arenas.size(); ++a) {
        if (members[a].empty()) continue;
        auto& list = members[a];
        std::sort(list.begin(), list.end(), [&](uint32_t x, uint32_t y) {
            return g.tensors[lv.storages[x].root].id < g.tensors[lv.storages[y].root].id;
        });
        ArenaPlan arena;
        arena.config = policy.arenas[a];
        for (uint32_t s : list) {
            const Storage& st = lv.storages[s];
            Buffer b{st.life.begin, st.life.end, st.bytes,
                     std::max(st.alignment, arena.config.alignment), st.pinned_offset};
            arena.problem.buffers.push_back(b);
            arena.buffer_names.push_back(g.tensors[st.root].id);
        }
        arena.problem.capacity = arena.config.usable_capacity();
        arenas.push_back(std::move(arena));
        storages_of_arena.push_back(std::move(list));
    }
    return arenas;
}

void map_tensors(const Graph& g, const Liveness& lv,
                 const std::vector<std::vector<uint32_t>>& storages_of_arena, Plan& plan) {
    std::vector<std::pair<uint32_t, uint32_t>> place(
        lv.storages.size()); // storage -> (arena, buffer)
    for (uint32_t a = 0; a < storages_of_arena.size(); ++a)
        for (uint32_t b = 0; b < storages_of_arena[a].size(); ++b)
            place[storages_of_arena[a][b]] = {a, b};
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (!lv.active[t]) continue;
        const Tensor& tensor = g.tensors[t];
        auto [a, b] = place[lv.storage_of[t]];
        ArenaPlan& arena = plan.arenas[a];
        PlannedTensor p;
        p.id = tensor.id;
        p.name = tensor.name;
        p.role = tensor.role;
        p.arena = a;
        p.buffer = b;
        p.slot = arena.slot_of_buffer[b];
        p.offset = arena.solution.offsets[b] + lv.offset_in_storage[t];
        p.size = tensor.bytes;
        p.alignment = std::max(tensor.alignment, arena.config.alignment);
        p.life = lv.tensor_life[t];
        arena.metrics.tensors++;
        plan.tensors.push_back(std::move(p));
    }
    std::sort(plan.tensors.begin(), plan.tensors.end(),
              [](const PlannedTensor& x, const PlannedTensor& y) { return x.id < y.id; });
}

// II.J: a quota failure instead of a plan, naming what each arena needs and whether any plan
// could fit. The budget covers what the arenas commit: a paged arena holds its peak in whole
// pages, so its share is the peak rounded up to pages; the aligned bounds (aligned_bound: the
// lower bound and the padding no plan avoids), rounded alike, add up to what no strategy can
// go below.
void check_memory_budget(const Plan& plan, const PlanOptions& options) {
    const uint64_t budget = options.memory_budget;
    if (budget == 0) return;
    uint64_t total = 0, bound = 0;
    bool padded = false; // an aligned bound above its lower bound: the message says it counts
    std::string arenas;
    for (const ArenaPlan& a : plan.arenas) {
        const uint64_t committed = a.config.committed_bytes(a.metrics.peak_bytes);
        total = checked_add(total, committed, "--memory-budget");
        const uint64_t least = aligned_bound(a);
        padded = padded || least > a.metrics.lower_bound;
        bound = checked_add(bound, a.config.committed_bytes(least), "--memory-budget");
        arenas += fmt::format("{}{} {}", arenas.empty() ? "" : ", ", a.config.name,
                              format_bytes(committed));
        if (a.config.page_size)
            arenas += fmt::format(" (a peak of {} in {} pages)", format_bytes(a.metrics.peak_bytes),
                                  format_bytes(a.config.page_size));
    }
    if (total <= budget) return;
    const char* bounds =
        padded ? "their lower bounds with the padding no plan avoids" : "their lower bounds";
    const std::string fits =
        bound > budget
            ? fmt::format("no plan of these arenas fits: {} alone add up to {}", bounds,
                          format_bytes(bound))
            : fmt::format("{} add up to {}, so a tighter plan could fit{}", bounds,
                          format_bytes(bound),
                          options.strategy == "optimal" ? " (a larger --budget searches further)"
                                                        : " (--strategy optimal searches for one)");
    fail(FailureCode::MemoryBudgetExceeded, "--memory-budget",
         fmt::format("the plan needs {} ({} bytes: {}), over the budget of {} ({} bytes); {}",
                     format_bytes(total), total, arenas, format_bytes(budget), budget, fits));
}

Plan plan_graph_stages(const Graph& model, Mode mode, const PlanOptions& options,
                       const Progress& progress, const std::string& source) {
    check_policy(options.policy);
    check_shard_spec(options.shard, "shard");
    // A sharded rank plans a graph of its own; the plan keeps the model's IR hash.
    std::optional<ShardedGraph> sharded;
    if (!options.shard.roles.empty()) sharded = shard_graph(model, options.shard, mode);
    const Graph& g = sharded ? sharded->graph : model;
    progress.report(0.0, "liveness");
    Liveness lv = as_operator(kAnalyzeLiveness, [&] {
        Liveness l = analyze_liveness(g, mode);
        widen_must_not_alias(g, options.policy, l);
        return l;
    });
    Plan plan;
    plan.source = source;
    plan.mode = mode;
    plan.strategy = options.strategy;
    plan.replay_token = options.replay_token;
    plan.shard = options.shard;
    plan.dims = binding_of(model);
    if (sharded) plan.notes = std::move(sharded->notes);
    plan.notes.insert(plan.notes.end(), lv.notes.begin(), lv.notes.end());
    for (NodeIndex n : lv.schedule)
        plan.execution_order.push_back(g.nodes[n].id);
    std::vector<std::vector<uint32_t>> storages_of_arena;
    plan.arenas = build_arenas(g, lv, options.policy, storages_of_arena);
    solve_all(plan, options, progress);
    check_memory_budget(plan, options);
    map_tensors(g, lv, storages_of_arena, plan);
    for (auto& arena : plan.arenas)
        arena.metrics.derive_ratios();
    plan.retention = activation_retention(g, lv);
    std::vector<uint64_t> steps(std::max<uint32_t>(lv.steps(), 1));
    std::iota(steps.begin(), steps.end(), 0);
    plan.series = build_memory_series(plan.arenas, std::move(steps));
    plan.ir_hash = ir_hash(model);
    plan.plan_hash = compute_plan_hash(plan);
    return plan;
}

Plan plan_problem_stages(const OffsetProblem& problem, const std::vector<std::string>& ids,
                         const PlanOptions& options, const Progress& progress,
                         const std::string& source) {
    if (ids.size() != problem.buffers.size())
        fail(FailureCode::InvalidArgument, "plan_problem",
             fmt::format("{} ids for {} buffers", ids.size(), problem.buffers.size()));
    check_policy(options.policy);
    if (!options.shard.single_rank())
        fail(FailureCode::InvalidArgument, "shard",
             "an offset-assignment problem has no roles to shard and no ranks: it plans as given");
    for (size_t i = 0; i < problem.buffers.size(); ++i)
        if (problem.buffers[i].end > kMaxTimeStep)
            fail(FailureCode::InvalidArgument, fmt::format("{}: buffer '{}'", source, ids[i]),
                 "lifetimes beyond 2^32 - 1 time steps are not supported");
    Plan plan;
    plan.source = source;
    plan.strategy = options.strategy;
    plan.replay_token = options.replay_token;
    ArenaPlan arena;
    const ArenaConfig* cfg = options.policy.find("arena");
    arena.config = cfg ? *cfg : ArenaConfig{"arena", UINT64_MAX, 1};
    arena.problem = problem;
    arena.config.capacity = std::min(problem.capacity, arena.config.capacity);
    arena.problem.capacity = arena.config.usable_capacity();
    for (auto& b : arena.problem.buffers)
        b.alignment = std::max(b.alignment, arena.config.alignment);
    arena.buffer_names = ids;
    plan.arenas.push_back(std::move(arena));
    solve_all(plan, options, progress);
    check_memory_budget(plan, options);
    ArenaPlan& solved = plan.arenas.front();
    for (uint32_t b = 0; b < ids.size(); ++b) {
        const Buffer& buf = solved.problem.buffers[b];
        PlannedTensor p;
        p.id = p.name = ids[b];
        p.buffer = b;
        p.slot = solved.slot_of_buffer[b];
        p.offset = solved.solution.offsets[b];
        p.size = buf.size;
        p.alignment = buf.alignment;
        p.life = {static_cast<uint32_t>(buf.begin), static_cast<uint32_t>(buf.end)};
        plan.tensors.push_back(std::move(p));
    }
    solved.metrics.tensors = static_cast<uint32_t>(ids.size());
    solved.metrics.derive_ratios();
    std::sort(plan.tensors.begin(), plan.tensors.end(),
              [](const PlannedTensor& x, const PlannedTensor& y) { return x.id < y.id; });
    plan.series = build_memory_series(plan.arenas, event_times(plan.arenas));
    plan.ir_hash = problem_hash(solved.problem, ids);
    plan.plan_hash = compute_plan_hash(plan);
    return plan;
}

} // namespace

Plan plan_graph(const Graph& g, Mode mode, const PlanOptions& options, const Progress& progress,
                const std::string& source) {
    return as_operator(kPlanMemory,
                       [&] { return plan_graph_stages(g, mode, options, progress, source); });
}

Plan plan_problem(const OffsetProblem& problem, const std::vector<std::string>& ids,
                  const PlanOptions& options, const Progress& progress, const std::string& source) {
    return as_operator(
        kPlanMemory, [&] { return plan_problem_stages(problem, ids, options, progress, source); });
}

} // namespace tmmu
