#include "plan_choices.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"
#include "plan/strategies/optimal.h"
#include "plan/strategy.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

namespace tmmu::app {
namespace {

constexpr const char* kProblemArena = "arena"; // the one arena of an offset problem

[[noreturn]] void bad(std::string_view where, std::string message) {
    fail(FailureCode::InvalidArgument, std::string(where), std::move(message));
}

// A second route for one role would silently replace the first: refuse it.
void apply_routes(const RouteList& routes, ArenaPolicy& policy) {
    for (size_t i = 0; i < routes.size(); ++i) {
        const auto& [role, arena] = routes[i];
        for (size_t j = 0; j < i; ++j)
            if (routes[j].first == role)
                bad(fmt::format("--route {}", role_name(role)),
                    fmt::format("given twice (to {} and to {}); a role goes to one arena",
                                routes[j].second, arena));
        if (!policy.find(arena)) policy.set_capacity(arena, UINT64_MAX);
        policy.route(role, arena);
    }
}

// A setting for an arena that nothing is routed to would silently do nothing, and a second
// setting for one arena would silently replace the first: refuse both.
void check_arena_settings(const ArenaSettings& settings, bool problem, const ArenaPolicy& policy) {
    for (size_t i = 0; i < settings.size(); ++i) {
        const std::string& name = settings[i].name;
        if (!settings[i].capacity && !settings[i].alignment && !settings[i].page_size)
            bad("--arena " + name, "gives no capacity, alignment or page size");
        for (size_t j = 0; j < i; ++j)
            if (settings[j].name == name)
                bad("--arena " + name, "given twice; give its capacity, alignment and page "
                                       "size in one setting, e.g. activations=8GiB:256:2MiB");
        bool routed = problem && name == kProblemArena;
        for (const std::string& target : policy.arena_of_role)
            routed |= !problem && target == name;
        if (!routed)
            bad("--arena " + name,
                problem ? "offset-assignment problems have one arena, named 'arena'"
                        : "no role is routed to this arena; arenas: parameters, activations, "
                          "gradients, optimizer, or route a role to it (ROLE=ARENA)");
    }
}

void check_alignment(uint64_t alignment, const std::string& where) {
    if (!is_power_of_two(alignment))
        fail(FailureCode::AlignmentViolation, where,
             fmt::format("{} is not a power of two", alignment));
}

// After the global alignment: an arena's own alignment is the more specific choice; its page
// size is its own.
void apply_arena_alignments_and_pages(const ArenaSettings& settings, ArenaPolicy& policy) {
    for (const ArenaSetting& s : settings) {
        if (s.alignment) check_alignment(*s.alignment, "--arena " + s.name);
        if (s.page_size && !is_power_of_two(*s.page_size))
            bad("--arena " + s.name,
                fmt::format("page size {} is not a power of two", *s.page_size));
        for (ArenaConfig& a : policy.arenas) {
            if (a.name != s.name) continue;
            if (s.alignment) a.alignment = *s.alignment;
            if (s.page_size) a.page_size = *s.page_size;
            // Such an arena holds no whole page, so no buffer: surely a slip in the option.
            if (a.page_size > a.capacity)
                bad("--arena " + s.name,
                    fmt::format("page size {} is larger than the capacity {}: no whole page fits",
                                a.page_size, a.capacity));
        }
    }
}

// Arena names are words, so a list of settings or routes reads back as it was written (the
// studio's fields separate entries with commas and spaces).
std::string check_arena_name(std::string_view name, std::string_view where) {
    for (char c : name)
        if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
            c != '_' && c != '-' && c != '.')
            bad(where, fmt::format("arena name '{}': use letters, digits, '_', '-' and '.'", name));
    return std::string(name);
}

// `text` cut at every `sep` (empty parts kept: "8GiB::2MiB" is three parts).
std::vector<std::string_view> split_on(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
        const size_t at = text.find(sep, start);
        parts.push_back(text.substr(start, at - start));
        if (at == std::string_view::npos) return parts;
        start = at + 1;
    }
}

// The largest binary unit that holds the size exactly ("8GiB", "4KiB", "96"), so the text reads
// as a person writes it and parses back to the same bytes.
std::string exact_size_text(uint64_t bytes) {
    for (auto [unit, shift] :
         {std::pair("TiB", 40), std::pair("GiB", 30), std::pair("MiB", 20), std::pair("KiB", 10)})
        if (bytes != 0 && bytes % (uint64_t(1) << shift) == 0)
            return fmt::format("{}{}", bytes >> shift, unit);
    return std::to_string(bytes);
}

} // namespace

// Failures name the CLI option, as the docs name each setting (the studio shows the same text).
PlanOptions make_plan_options(const PlanChoices& c, ModelKind kind) {
    const bool problem = kind == ModelKind::DsaCsv;
    parse_strategy(c.strategy, "--strategy");
    if (problem && !c.routes.empty())
        bad("--route", "offset-assignment problems have one arena; routes apply to model graphs");
    if (problem && !c.shard.single_rank())
        bad(!c.shard.roles.empty()   ? "--shard"
            : c.shard.world_size > 1 ? "--world-size"
                                     : "--rank",
            "offset-assignment problems have no roles and no ranks; sharding applies to model "
            "graphs");
    check_shard_spec(c.shard, c.shard.rank >= c.shard.world_size ? "--rank" : "--shard");
    const uint64_t alignment = c.alignment != 0 ? c.alignment : (problem ? 1 : 128);
    check_alignment(alignment, "--align");
    if ((c.search_budget || c.search_budget_ms) && c.strategy != "optimal")
        bad("--budget",
            fmt::format("applies to strategy optimal only; '{}' does not search", c.strategy));
    PlanOptions o;
    o.strategy = c.strategy;
    o.search_budget = c.search_budget;
    o.search_budget_ms = c.search_budget_ms;
    o.replay_token = c.replay_token;
    o.memory_budget = c.memory_budget;
    o.shard = c.shard;
    // An offset problem plans into the policy's arena "arena" (plan_problem), its only one:
    // no roles, so every role names it, and sessions record just the arena that was used.
    if (problem) {
        o.policy.arenas = {ArenaConfig{kProblemArena, UINT64_MAX, 1}};
        o.policy.arena_of_role.fill(kProblemArena);
    }
    // Capacities first, then routes: new arenas are created (and so ordered in the plan and
    // its hash) in the order `tmmu` has always used.
    for (const ArenaSetting& s : c.arenas)
        if (s.capacity || !o.policy.find(s.name))
            o.policy.set_capacity(s.name, s.capacity.value_or(UINT64_MAX));
    apply_routes(c.routes, o.policy);
    check_arena_settings(c.arenas, problem, o.policy);
    o.policy.set_alignment(alignment);
    apply_arena_alignments_and_pages(c.arenas, o.policy);
    return o;
}

std::string parse_strategy(std::string_view name, std::string_view where) {
    if (find_strategy(name)) return std::string(name);
    std::string known;
    for (const OffsetStrategy* s : all_strategies())
        known += fmt::format("{}{}", known.empty() ? "" : ", ", s->name());
    bad(where, fmt::format("unknown strategy '{}'; expected one of {}", name, known));
}

uint64_t parse_alignment(std::string_view text, std::string_view where) {
    const uint64_t alignment = parse_byte_size(text, where);
    if (alignment == 0) bad(where, "must be a power of two, at least 1");
    return alignment;
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> entries;
    std::string entry;
    const auto flush = [&] {
        if (!entry.empty()) entries.push_back(std::move(entry));
        entry.clear();
    };
    for (char c : text) {
        if (c == ',' || c == ';' || c == ' ' || c == '\t')
            flush();
        else
            entry += c;
    }
    flush();
    return entries;
}

uint32_t parse_world_size(std::string_view text, std::string_view where) {
    const uint64_t n = parse_positive(text, where);
    if (n > UINT32_MAX) bad(where, fmt::format("{} ranks is more than this build plans for", n));
    return static_cast<uint32_t>(n);
}

uint32_t parse_rank(std::string_view text, std::string_view where) {
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || n >= UINT32_MAX)
        bad(where,
            fmt::format("'{}' is not a rank: expected 0, 1, 2, ... (below the world size)", text));
    return static_cast<uint32_t>(n);
}

std::vector<Role> parse_shard_roles(std::string_view text, std::string_view where) {
    std::vector<Role> roles;
    for (const std::string& name : split_list(text)) {
        const std::optional<Role> role = parse_role(name);
        if (!role || !shardable_role(*role))
            bad(where, fmt::format("'{}' is not a role that can be sharded; expected parameter, "
                                   "activation, gradient or optimizer_state",
                                   name));
        if (std::find(roles.begin(), roles.end(), *role) != roles.end())
            bad(where, fmt::format("'{}' is given twice", name));
        roles.push_back(*role);
    }
    if (roles.empty()) bad(where, "expected one or more roles, e.g. parameter,optimizer_state");
    std::sort(roles.begin(), roles.end());
    return roles;
}

uint64_t parse_memory_budget(std::string_view text, std::string_view where) {
    const uint64_t budget = parse_byte_size(text, where);
    if (budget == 0) bad(where, "must be at least 1 byte; leave it out for no budget");
    return budget;
}

ArenaSetting parse_arena_setting(std::string_view spec, std::string_view where) {
    constexpr auto npos = std::string_view::npos;
    const size_t eq = spec.find('=');
    const std::vector<std::string_view> parts =
        eq == npos ? std::vector<std::string_view>{} : split_on(spec.substr(eq + 1), ':');
    // Every part given may be empty but one, and a trailing ':' gives nothing after it.
    const bool some = std::any_of(parts.begin(), parts.end(), [](auto p) { return !p.empty(); });
    if (eq == 0 || parts.empty() || parts.size() > 3 || !some || parts.back().empty())
        bad(where, fmt::format("'{}': expected NAME=CAPACITY[:ALIGN[:PAGE]], e.g. "
                               "activations=8GiB, activations=8GiB:256, activations=:4KiB or "
                               "activations=8GiB::2MiB",
                               spec));
    const std::string what = fmt::format("{} {}", where, spec);
    ArenaSetting s{check_arena_name(spec.substr(0, eq), what)};
    if (!parts[0].empty()) s.capacity = parse_byte_size(parts[0], what);
    if (parts.size() > 1 && !parts[1].empty()) s.alignment = parse_alignment(parts[1], what);
    if (parts.size() > 2) {
        s.page_size = parse_byte_size(parts[2], what);
        if (*s.page_size == 0) bad(what, "a page size must be a power of two, at least 1");
    }
    return s;
}

std::string format_arena_setting(const ArenaSetting& s) {
    std::string text = s.name + "=";
    if (s.capacity) text += exact_size_text(*s.capacity);
    if (s.alignment || s.page_size) text += ":";
    if (s.alignment) text += exact_size_text(*s.alignment);
    if (s.page_size) text += ":" + exact_size_text(*s.page_size);
    return text;
}

RouteList::value_type parse_route(std::string_view spec, std::string_view where) {
    const size_t eq = spec.find('=');
    const auto role = eq == std::string_view::npos ? std::nullopt : parse_role(spec.substr(0, eq));
    if (!role || eq + 1 == spec.size())
        bad(where, fmt::format("'{}': expected ROLE=ARENA, e.g. gradients=activations; roles: "
                               "parameter input output activation gradient optimizer_state "
                               "workspace",
                               spec));
    return {*role, check_arena_name(spec.substr(eq + 1), fmt::format("{} {}", where, spec))};
}

std::string format_route(const RouteList::value_type& route) {
    return fmt::format("{}={}", role_name(route.first), route.second);
}

void parse_budget(std::string_view text, PlanChoices& c, std::string_view where) {
    const bool ms = text.size() > 2 && text.ends_with("ms");
    const std::string_view digits = ms ? text.substr(0, text.size() - 2) : text;
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value == 0)
        bad(where, fmt::format("'{}': expected a positive node count (e.g. 200000) or "
                               "milliseconds (e.g. 500ms)",
                               text));
    if (ms && value > kMaxTimeBudgetMs)
        bad(where, fmt::format("'{}': at most {}ms (24 hours)", text, kMaxTimeBudgetMs));
    (ms ? c.search_budget_ms : c.search_budget) = value;
}

Mode parse_mode_choice(std::string_view text, std::string_view where) {
    auto mode = parse_mode(text);
    if (!mode)
        bad(where, fmt::format("unknown mode '{}'; expected inference, forward or training", text));
    return *mode;
}

uint64_t parse_positive(std::string_view text, std::string_view where) {
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0)
        bad(where, fmt::format("'{}' is not a positive integer", text));
    return value;
}

namespace {

// NAME and the text after '=', both non-empty.
std::pair<std::string, std::string_view>
split_binding(std::string_view text, std::string_view where, std::string_view form) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        bad(where, fmt::format("'{}' is not {}", text, form));
    return {std::string(text.substr(0, eq)), text.substr(eq + 1)};
}

int64_t positive_dim(std::string_view text, std::string_view where) {
    const uint64_t v = parse_positive(text, where);
    if (v > uint64_t(INT32_MAX)) bad(where, fmt::format("{} is too large for a dimension", v));
    return int64_t(v);
}

} // namespace

std::pair<std::string, int64_t> parse_dim_binding(std::string_view text, std::string_view where) {
    const auto [name, value] = split_binding(text, where, "NAME=VALUE");
    return {name, positive_dim(value, where)};
}

DimBinding parse_iteration(std::string_view text, std::string_view where) {
    DimBinding b;
    for (const std::string& part : split_list(text)) {
        const auto [name, value] = parse_dim_binding(part, where);
        if (!b.emplace(name, value).second)
            fail(FailureCode::InvalidArgument, std::string(where),
                 fmt::format("'{}' names {} twice", text, name));
    }
    if (b.empty())
        fail(FailureCode::InvalidArgument, std::string(where),
             "an iteration names at least one dimension, e.g. seq=512");
    return b;
}

std::pair<std::string, std::vector<int64_t>> parse_input_shape(std::string_view text,
                                                               std::string_view where) {
    auto [name, dims] = split_binding(text, where, "INPUT=AxBxC");
    std::vector<int64_t> shape;
    for (size_t start = 0;;) {
        const size_t x = dims.find('x', start);
        shape.push_back(positive_dim(dims.substr(start, x - start), where));
        if (x == std::string_view::npos) break;
        start = x + 1;
    }
    return {name, std::move(shape)};
}

namespace {

// An installed tmmu keeps its resources at <prefix>/share/tmmu beside <prefix>/bin: found from
// the running binary, so an unpacked package or a moved prefix needs no TMMU_RESOURCES.
std::optional<std::string> resources_beside_binary() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    const std::filesystem::path dir = exe.parent_path().parent_path() / "share" / "tmmu";
    if (!std::filesystem::is_directory(dir / "models", ec)) return std::nullopt;
    return dir.string();
}

} // namespace

std::string resource_dir() {
    if (const char* env = std::getenv("TMMU_RESOURCES")) return env;
    if (auto installed = resources_beside_binary()) return *installed;
    if (std::filesystem::exists(TMMU_SOURCE_RESOURCES)) return TMMU_SOURCE_RESOURCES;
    return TMMU_INSTALL_RESOURCES;
}

std::string default_model_path() {
    return resource_dir() + "/models/gpt2-small.json";
}

} // namespace tmmu::app
