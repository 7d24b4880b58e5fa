#include "session_iterations.h"

#include "core/digest.h"
#include "core/failure.h"
#include "core/json_text.h"
#include "core/units.h"
#include "io/plan_json.h"
#include "ir/dynamic_dims.h"
#include "plan/plan_summary.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tmmu::sessions {
namespace {

using json = nlohmann::json;

// Reads the fields of a stored or exported history, naming the one that is missing or of
// another type ("iterations[1].peak_bytes"): json's own messages name neither the field nor the
// row, and would wrap a negative number into a huge one.
struct HistoryReader {
    const std::string& where;

    [[noreturn]] void bad(const std::string& field, const std::string& what) const {
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("the iterations are not valid: {} {}", field, what));
    }
    const json& at(const json& j, const char* key, const std::string& path) const {
        if (!j.is_object()) bad(path.empty() ? "the history" : path, "is not an object");
        if (!j.contains(key)) bad(path + key, "is missing");
        return j.at(key);
    }
    uint64_t count(const json& j, const char* key, const std::string& path) const {
        const json& v = at(j, key, path);
        if (!v.is_number_unsigned()) bad(path + key, fmt::format("is {}, not a count", v.dump()));
        return v.get<uint64_t>();
    }
    Digest digest(const json& j, const char* key, const std::string& path) const {
        const json& v = at(j, key, path);
        if (!v.is_string()) bad(path + key, fmt::format("is {}, not a digest", v.dump()));
        try {
            return digest_from_hex(v.get<std::string>(), where);
        } catch (const Failure& f) {
            bad(path + key, f.message());
        }
    }
    // {name: value}, every value a dimension's (1 to kMaxDynamicDim).
    DimBinding binding(const json& j, const char* key, const std::string& path) const {
        const json& v = at(j, key, path);
        if (!v.is_object()) bad(path + key, fmt::format("is {}, not a binding", v.dump()));
        DimBinding b;
        for (const auto& [name, value] : v.items()) {
            if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
                value.get<int64_t>() > kMaxDynamicDim)
                bad(fmt::format("{}{}.{}", path, key, name),
                    fmt::format("is {}, not a dimension from 1 to {}", value.dump(),
                                kMaxDynamicDim));
            b[name] = value.get<int64_t>();
        }
        return b;
    }

    IterationOutcome iteration(const json& j, size_t row) const {
        const std::string path = fmt::format("iterations[{}].", row);
        IterationOutcome i;
        const uint64_t number = count(j, "iteration", path);
        if (number > UINT32_MAX) bad(path + "iteration", "is past the last iteration a run has");
        i.iteration = uint32_t(number);
        i.dims = binding(j, "dims", path);
        const json& replanned = at(j, "replanned", path);
        if (!replanned.is_boolean()) bad(path + "replanned", "is not true or false");
        i.replanned = replanned.get<bool>();
        if (i.replanned) i.old_plan_hash = digest(j, "old_plan_hash", path);
        i.plan_hash = digest(j, "plan_hash", path);
        i.plan_binding = binding(j, "plan_dims", path);
        i.peak_bytes = count(j, "peak_bytes", path);
        i.replan_key = digest(j, "replan_key", path);
        return i;
    }
};

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
    return in.iterations ? json_text(history_json(*in.iterations)) : std::string();
}

IterationHistory read_history_json(const json& j, const std::string& where) {
    const HistoryReader r{where};
    IterationHistory h;
    h.start = r.binding(j, "start", "");
    const json& rows = r.at(j, "iterations", "");
    if (!rows.is_array()) r.bad("iterations", "is not a list");
    for (size_t row = 0; row < rows.size(); ++row)
        h.decided.push_back(r.iteration(rows[row], row));
    return h;
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
    if (history->start.empty()) return "a run over iterations from no binding";
    if (decided.empty()) return "a run over iterations without an iteration";
    for (size_t i = 0; i < decided.size(); ++i) {
        const IterationOutcome& now = decided[i];
        if (now.iteration != i)
            return fmt::format("iteration {} of the run is numbered {}", i, now.iteration);
        if (!binding_fits(now.plan_binding, now.dims))
            return fmt::format("iteration {} at {} ran on a plan made for {}", i,
                               binding_text(now.dims), binding_text(now.plan_binding));
        if (i == 0) continue;
        // Each iteration runs on the plan in force before it, or on the one its replan made.
        const Digest& before = decided[i - 1].plan_hash;
        if (now.replanned && now.old_plan_hash != before)
            return fmt::format("iteration {} replaced plan {}, but iteration {} ran on plan {}", i,
                               to_hex(now.old_plan_hash), i - 1, to_hex(before));
        if (!now.replanned && now.plan_hash != before)
            return fmt::format("iteration {} was not replanned, but runs on plan {}, not on "
                               "iteration {}'s plan {}",
                               i, to_hex(now.plan_hash), i - 1, to_hex(before));
    }
    const IterationOutcome& last = decided.back();
    if (last.plan_hash != plan.plan_hash)
        return fmt::format("the last iteration ran on plan {}, the session's plan is {}",
                           to_hex(last.plan_hash), to_hex(plan.plan_hash));
    if (last.peak_bytes != plan_totals(plan).peak_bytes)
        return fmt::format("the last iteration's plan peaks at {} bytes, the session's plan at {}",
                           last.peak_bytes, plan_totals(plan).peak_bytes);
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
