#include "session_iterations.h"

#include "core/digest.h"
#include "core/failure.h"
#include "core/units.h"
#include "io/plan_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tmmu::sessions {
namespace {

using json = nlohmann::json;

IterationOutcome read_iteration(const json& j, const std::string& where) {
    IterationOutcome i;
    i.iteration = j.at("iteration").get<uint32_t>();
    i.dims = j.at("dims").get<DimBinding>();
    i.replanned = j.at("replanned").get<bool>();
    if (i.replanned)
        i.old_plan_hash = digest_from_hex(j.at("old_plan_hash").get<std::string>(), where);
    i.plan_hash = digest_from_hex(j.at("plan_hash").get<std::string>(), where);
    i.plan_binding = j.at("plan_dims").get<DimBinding>();
    i.peak_bytes = j.at("peak_bytes").get<uint64_t>();
    i.replan_key = digest_from_hex(j.at("replan_key").get<std::string>(), where);
    return i;
}

std::string replans_text(const std::vector<IterationOutcome>& decided) {
    const auto replans =
        std::count_if(decided.begin(), decided.end(), [](const auto& i) { return i.replanned; });
    return count_of(uint64_t(replans), "replan");
}

// "replanned onto plan 35e84fa111292eee" or "fits plan 35e84fa111292eee": one decision, for a
// difference.
std::string decision_text(const IterationOutcome& i) {
    return fmt::format("{} {}", i.replanned ? "replanned onto plan" : "fits plan",
                       to_hex(i.plan_hash).substr(0, 16));
}

} // namespace

nlohmann::ordered_json history_json(const IterationHistory& h) {
    return {{"start", binding_json(h.start)}, {"iterations", tmmu::iterations_json(h.decided)}};
}

std::string iterations_json(const SessionInput& in) {
    // binding_json and std::map keep names in order: one text per history.
    return in.iterations ? history_json(*in.iterations).dump() : std::string();
}

IterationHistory read_history_json(const json& j, const std::string& where) {
    try {
        IterationHistory h;
        h.start = j.at("start").get<DimBinding>();
        for (const json& row : j.at("iterations"))
            h.decided.push_back(read_iteration(row, where));
        return h;
    } catch (const json::exception& e) {
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("the iterations are not valid: {}", e.what()));
    } catch (const Failure& f) { // a digest that is not hex
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("the iterations are not valid: {}", f.message()));
    }
}

void read_iterations_json(const std::string& text, SessionInput& in, const std::string& where) {
    if (text.empty()) return;
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("the stored iterations are not JSON: {}", e.what()));
    }
    in.iterations = read_history_json(j, where);
}

std::string iterations_problem(const std::optional<IterationHistory>& history, const Plan& plan) {
    if (!history) return {};
    const std::vector<IterationOutcome>& decided = history->decided;
    if (decided.empty()) return "a run over iterations without an iteration";
    for (size_t i = 0; i < decided.size(); ++i)
        if (decided[i].iteration != i)
            return fmt::format("iteration {} of the run is numbered {}", i, decided[i].iteration);
    if (decided.back().plan_hash != plan.plan_hash)
        return fmt::format("the last iteration ran on plan {}, the session's plan is {}",
                           to_hex(decided.back().plan_hash), to_hex(plan.plan_hash));
    return {};
}

std::vector<std::string> iterations_lines(const SessionInput& in) {
    if (!in.iterations) return {};
    const IterationHistory& h = *in.iterations;
    std::vector<std::string> lines{history_text(h)};
    for (const IterationOutcome& i : h.decided)
        lines.push_back(iteration_text(i));
    return lines;
}

std::string history_text(const IterationHistory& h) {
    return fmt::format("{} from {}, {}", count_of(h.decided.size(), "iteration"),
                       binding_text(h.start), replans_text(h.decided));
}

std::string iteration_decision(const IterationOutcome& i) {
    return fmt::format("{}: {} ({})", binding_text(i.dims), decision_text(i),
                       format_bytes(i.peak_bytes));
}

IterationsReplay compare_iterations(const IterationHistory& recorded,
                                    std::vector<IterationOutcome> replayed) {
    IterationsReplay r;
    r.replayed = std::move(replayed);
    const std::vector<IterationOutcome>& was = recorded.decided;
    for (size_t i = 0; i < std::min(was.size(), r.replayed.size()); ++i) {
        const IterationOutcome &a = was[i], &b = r.replayed[i];
        if (a == b) continue;
        r.same = false;
        // The same decision on the same plan, with another binding, peak or replan key.
        const std::string detail =
            decision_text(a) == decision_text(b)
                ? fmt::format(" (recorded at {}, {}; replayed at {}, {})",
                              binding_text(a.plan_binding), format_bytes(a.peak_bytes),
                              binding_text(b.plan_binding), format_bytes(b.peak_bytes))
                : "";
        r.verdict = fmt::format("iteration {} ({}) differs: recorded {}, replayed {}{}", i,
                                binding_text(a.dims), decision_text(a), decision_text(b), detail);
        return r;
    }
    if (was.size() != r.replayed.size()) {
        r.same = false;
        r.verdict = fmt::format("{} recorded, {} replayed", count_of(was.size(), "iteration"),
                                count_of(r.replayed.size(), "iteration"));
        return r;
    }
    r.verdict = fmt::format("{} decided as recorded ({})", count_of(was.size(), "iteration"),
                            replans_text(was));
    return r;
}

} // namespace tmmu::sessions
