#include "session_jobs.h"

#include "core/failure.h"
#include "io/sha256.h"

#include <filesystem>
#include <fmt/format.h>

namespace tmmu::studio {
namespace {

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\u{:04x}", int(c));
        else
            out += c;
    }
    return out + '"';
}

// Same shape as the store's metrics_json column.
std::string metricsJson(const Plan& plan) {
    std::string out = "[";
    for (const ArenaPlan& a : plan.arenas)
        out += fmt::format("{}{{\"arena\":{},\"peak_bytes\":{},\"lower_bound\":{}}}",
                           out.size() > 1 ? "," : "", jsonString(a.config.name),
                           a.metrics.peak_bytes, a.metrics.lower_bound);
    return out + "]";
}

// A plan that was not recorded, as the session recording it would hold.
sessions::Session sessionOf(const PlanOutcome* shown) {
    if (!shown || !shown->model || !shown->plan)
        fail(FailureCode::InvalidArgument, "File > Export", "no plan is shown");
    const PlanOutcome& o = *shown;
    const Plan& plan = *o.plan;
    sessions::Session s;
    s.summary.title = std::filesystem::path(o.model->path).stem().string();
    s.summary.source_path = o.model->path;
    s.summary.mode = plan.mode ? std::string(mode_name(*plan.mode)) : "none";
    s.summary.strategy = plan.strategy;
    s.summary.plan_hash = to_hex(plan.plan_hash);
    s.summary.peak_bytes = total_height(plan);
    s.summary.lower_bound = total_lower_bound(plan);
    s.input = sessions::input_from_model(*o.model, o.settings.request(),
                                         make_options(o.settings, o.model->kind));
    s.program_version = TMMU_VERSION;
    s.ir_hash = to_hex(plan.ir_hash);
    s.metrics_json = metricsJson(plan);
    s.plan = plan;
    return s;
}

} // namespace

sessions::SessionStore StoreRef::open() const {
    if (probe) probe();
    return sessions::SessionStore(path);
}

PlanSettings settings_of(const sessions::SessionInput& in) {
    PlanSettings s;
    s.mode = in.request.mode;
    s.batch = in.request.batch;
    s.seq = in.request.seq;
    s.strategy = in.options.strategy;
    if (!in.is_problem && !in.options.policy.arenas.empty())
        s.alignment = in.options.policy.arenas.front().alignment;
    for (const ArenaConfig& a : in.options.policy.arenas)
        if (a.capacity != UINT64_MAX) s.capacities.emplace_back(a.name, a.capacity);
    return s;
}

OpenedSession open_stored(const StoreRef& store, int64_t id) {
    OpenedSession r;
    r.session = store.open().load(id);
    if (!r.session.plan) return r;
    auto outcome = std::make_shared<PlanOutcome>();
    outcome->model = std::make_shared<const LoadedModel>(sessions::load_input(r.session.input));
    outcome->plan = std::make_shared<const Plan>(std::move(*r.session.plan));
    outcome->settings = settings_of(r.session.input);
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
