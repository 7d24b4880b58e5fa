#include "session_jobs.h"

#include "core/failure.h"
#include "io/file_io.h"
#include "report/session_json_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace tmmu::studio {
namespace {

// What a session of `o` stores as its input. A run over iterations is stored as tmmu plan
// --iteration records it: asked for at the first plan's binding (the toolbar holds the last),
// the plans after it in its history.
sessions::SessionInput inputOf(const PlanOutcome& o) {
    ModelRequest request = o.settings.request();
    if (o.iterations) {
        const DimBinding& start = o.iterations->start;
        if (o.model->kind == ModelKind::TransformerConfig) {
            request.batch = uint64_t(start.at("batch"));
            request.seq = uint64_t(start.at("seq"));
        } else if (o.model->kind == ModelKind::Onnx) {
            request.dims = start;
        }
    }
    sessions::SessionInput input =
        sessions::input_from_model(*o.model, request, make_options(o.settings, o.model->kind));
    input.iterations = o.iterations;
    return input;
}

// A plan that was not recorded, as the session recording it would hold.
sessions::Session sessionOf(const PlanOutcome* shown) {
    if (!shown || !shown->model || !shown->plan)
        fail(FailureCode::InvalidArgument, "File > Export", "no plan is shown");
    const PlanOutcome& o = *shown;
    if (!o.model->graph && !o.model->problem)
        fail(FailureCode::InvalidArgument, "File > Export",
             fmt::format("the plan on screen was read from {}, which holds a plan but not its "
                         "model; export the session it was recorded as (tmmu export ID)",
                         o.model->path));
    return sessions::session_from_run(
        {inputOf(o), *o.plan, std::filesystem::path(o.model->path).stem().string(), "", {}});
}

// The alignment most arenas have (the first arena's among equals); 0 when there are none.
uint64_t most_common_alignment(const std::vector<ArenaConfig>& arenas) {
    uint64_t best = 0;
    ptrdiff_t best_count = 0;
    for (const ArenaConfig& a : arenas) {
        const ptrdiff_t n = std::count_if(arenas.begin(), arenas.end(), [&](const ArenaConfig& b) {
            return b.alignment == a.alignment;
        });
        if (n > best_count) best = a.alignment, best_count = n;
    }
    return best;
}

// The routes that differ from the default ones, in the order of their arenas (settings_of gives
// every new arena a setting, so no route creates one).
RouteList routes_of(const ArenaPolicy& policy) {
    const ArenaPolicy defaults = ArenaPolicy::defaults();
    RouteList routes;
    for (const ArenaConfig& a : policy.arenas)
        for (size_t r = 0; r < kRoleCount; ++r)
            if (policy.arena_of_role[r] == a.name && defaults.arena_of_role[r] != a.name)
                routes.emplace_back(Role(r), a.name);
    return routes;
}

} // namespace

sessions::SessionStore StoreRef::open() const {
    if (probe) probe();
    return sessions::SessionStore(path);
}

RecordedRun record_run(const StoreRef& store, const PlanOutcome& run, const std::string& title) {
    const auto start = std::chrono::steady_clock::now();
    sessions::NewSession n{inputOf(run), *run.plan, title, "", {}};
    RecordedRun r;
    r.id = store.open().record(n);
    r.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
}

PlanSettings settings_of(const sessions::SessionInput& in) {
    PlanSettings s;
    s.mode = in.request.mode;
    s.batch = in.request.batch;
    s.seq = in.request.seq;
    if (in.onnx) s.bindings = {in.request.dims, in.request.input_shapes, in.request.aliasing};
    // A run over iterations shows the plan in force after it: the toolbar holds its binding.
    if (in.iterations && !in.iterations->decided.empty()) {
        const DimBinding& last = in.iterations->decided.back().plan_binding;
        if (in.onnx) s.bindings.dims = last;
        if (last.contains("batch") && last.contains("seq")) {
            s.batch = uint64_t(last.at("batch"));
            s.seq = uint64_t(last.at("seq"));
        }
    }
    s.strategy = in.options.strategy;
    // A problem plans into its arena "arena" (absent in sessions recorded before --align
    // applied to problems: their default then). A graph's arenas mostly share --align's
    // alignment; an arena with another one keeps it as its own setting. An arena the defaults
    // lack always gets a setting: settings create new arenas before routes do, in the order
    // given, and the arena order is part of the plan's hash, so every new arena is created by
    // a setting in the order the policy holds them.
    const ArenaConfig* problem_arena = in.is_problem ? in.options.policy.find("arena") : nullptr;
    if (problem_arena) s.alignment = problem_arena->alignment;
    if (!in.is_problem) s.alignment = most_common_alignment(in.options.policy.arenas);
    const ArenaPolicy defaults = ArenaPolicy::defaults();
    for (const ArenaConfig& a : in.options.policy.arenas) {
        app::ArenaSetting setting{a.name, std::nullopt, std::nullopt};
        if (a.capacity != UINT64_MAX) setting.capacity = a.capacity;
        const bool added = !in.is_problem && !defaults.find(a.name);
        if (s.alignment != 0 && (a.alignment != s.alignment || (added && !setting.capacity)))
            setting.alignment = a.alignment;
        if (a.page_size != 0) setting.page_size = a.page_size;
        if (setting.capacity || setting.alignment || setting.page_size)
            s.arenas.push_back(std::move(setting));
    }
    if (!in.is_problem) s.routes = routes_of(in.options.policy);
    s.shard = in.options.shard;
    return s;
}

bool looks_like_session_export_file(const std::string& path) {
    return sessions::report::looks_like_session_json(read_file_head(path, 4096));
}

ExportedShown read_session_export(const std::string& path) {
    sessions::report::ExportedSession exported =
        sessions::report::read_session_json(read_text_file(path), path);
    ExportedShown shown;
    shown.id = exported.id;
    shown.title = exported.title;
    if (exported.altered) shown.altered_reason = exported.altered_reason;
    shown.outcome = stored_plan_outcome(
        std::move(exported.plan), path,
        fmt::format("session {} exported as JSON: its plan, not its model", exported.id));
    shown.outcome.iterations = std::move(exported.iterations);
    return shown;
}

OpenedSession open_stored(const StoreRef& store, int64_t id) {
    OpenedSession r;
    r.session = store.open().load(id);
    if (!r.session.plan) return r;
    auto outcome = std::make_shared<PlanOutcome>();
    outcome->model = std::make_shared<const LoadedModel>(sessions::load_input(r.session.input));
    outcome->plan = std::make_shared<const Plan>(std::move(*r.session.plan));
    outcome->settings = settings_of(r.session.input);
    outcome->iterations = r.session.input.iterations;
    r.session.plan.reset();
    r.outcome = std::move(outcome);
    return r;
}

ReplayedSession replay_stored(const StoreRef& store, int64_t id, const Progress& progress) {
    ReplayedSession r;
    r.stored = store.open().load(id);
    if (!r.stored.altered) r.result = sessions::replay_session(r.stored, progress);
    return r;
}

ComparedSessions compare_stored(const StoreRef& store, int64_t before, int64_t after) {
    sessions::SessionStore db = store.open();
    ComparedSessions r;
    r.before = db.load(before);
    r.after = db.load(after);
    if (r.before.plan && r.after.plan) r.comparison = sessions::diff_sessions(r.before, r.after);
    return r;
}

void export_shown(const StoreRef& store, int64_t id, const PlanOutcome* shown,
                  sessions::ExportFormat format, const std::string& path) {
    sessions::write_export(id != 0 ? store.open().load(id) : sessionOf(shown), format, path);
}

} // namespace tmmu::studio
