#include "session_diff.h"

#include "session_iterations.h"

#include "core/failure.h"
#include "core/units.h"
#include "encoding/sha256.h"
#include "ir/dynamic_dims.h"
#include "plan/shard_spec.h"

#include <fmt/format.h>

namespace tmmu::sessions {

int64_t ArenaDelta::peak_delta() const {
    return int64_t((after ? after->peak_bytes : 0) - (before ? before->peak_bytes : 0));
}

int64_t ArenaDelta::lower_bound_delta() const {
    return int64_t((after ? after->lower_bound : 0) - (before ? before->lower_bound : 0));
}

bool ArenaDelta::changed() const {
    if (!before || !after) return true;
    return before->peak_bytes != after->peak_bytes || before->lower_bound != after->lower_bound ||
           before->slot_count != after->slot_count || before->buffers != after->buffers;
}

namespace {

std::vector<ArenaDelta> arena_deltas(const Plan& a, const Plan& b) {
    std::vector<ArenaDelta> out;
    for (const ArenaPlan& x : a.arenas)
        out.push_back({x.config.name, x.metrics, std::nullopt});
    for (const ArenaPlan& y : b.arenas) {
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const ArenaDelta& d) { return d.arena == y.config.name; });
        if (it != out.end())
            it->after = y.metrics;
        else
            out.push_back({y.config.name, std::nullopt, y.metrics});
    }
    return out;
}

const std::string& arena_name(const Plan& p, const PlannedTensor& t) {
    return p.arenas.at(t.arena).config.name;
}

// Both tensor lists are sorted by id (Plan invariant), so one merge pass matches them.
std::vector<TensorMove> tensor_moves(const Plan& a, const Plan& b) {
    std::vector<TensorMove> out;
    size_t i = 0, j = 0;
    while (i < a.tensors.size() || j < b.tensors.size()) {
        const PlannedTensor* x = i < a.tensors.size() ? &a.tensors[i] : nullptr;
        const PlannedTensor* y = j < b.tensors.size() ? &b.tensors[j] : nullptr;
        if (x && (!y || x->id < y->id)) {
            out.push_back({x->id, arena_name(a, *x), "", x->offset, 0, x->name});
            ++i;
        } else if (y && (!x || y->id < x->id)) {
            out.push_back({y->id, "", arena_name(b, *y), 0, y->offset, y->name});
            ++j;
        } else {
            if (x->offset != y->offset || arena_name(a, *x) != arena_name(b, *y))
                out.push_back(
                    {x->id, arena_name(a, *x), arena_name(b, *y), x->offset, y->offset, x->name});
            ++i;
            ++j;
        }
    }
    return out;
}

std::string different_models(const Plan& before, const Plan& after) {
    if (before.ir_hash == after.ir_hash) return "";
    auto ir = [](const Plan& p) { return to_hex(p.ir_hash).substr(0, 12); };
    if (before.source == after.source)
        return fmt::format("the model differs: {} had IR {} and then IR {} (another batch, "
                           "sequence or file content)",
                           before.source, ir(before), ir(after));
    return fmt::format("different models: {} (IR {}) and {} (IR {})", before.source, ir(before),
                       after.source, ir(after));
}

std::string capacity_text(uint64_t capacity) {
    return capacity == UINT64_MAX ? "unlimited" : format_bytes(capacity);
}

std::string page_text(uint64_t page_size) {
    return page_size == 0 ? "none" : format_bytes(page_size);
}

// A schedule's length and the node it runs at step `at` (the first step where two differ).
std::string schedule_text(const std::vector<std::string>& order, size_t at) {
    return fmt::format("{} steps{}", order.size(),
                       at < order.size() ? fmt::format(", step {} runs '{}'", at, order[at]) : "");
}

void add_schedule_change(const Plan& a, const Plan& b, std::vector<SettingChange>& out) {
    if (a.execution_order == b.execution_order) return;
    size_t at = 0;
    while (at < a.execution_order.size() && at < b.execution_order.size() &&
           a.execution_order[at] == b.execution_order[at])
        ++at;
    out.push_back(
        {"schedule", schedule_text(a.execution_order, at), schedule_text(b.execution_order, at)});
}

std::string exact_bytes(uint64_t bytes) {
    return bytes == UINT64_MAX ? "unlimited" : fmt::format("{} bytes", bytes);
}

// Lists `what` when x and y differ, in `text`'s words, or in `exact`'s when the words of the
// two are the same (16.00 MiB and 16777217 bytes, two tokens with one prefix).
template <class T, class Text, class Exact>
void add_if_differs(std::vector<SettingChange>& out, std::string what, const T& x, const T& y,
                    Text text, Exact exact) {
    if (x == y) return;
    std::string before = text(x), after = text(y);
    if (before == after) {
        before = exact(x);
        after = exact(y);
    }
    out.push_back({std::move(what), std::move(before), std::move(after)});
}

void add_if_differs(std::vector<SettingChange>& out, std::string what, const std::string& x,
                    const std::string& y) {
    const auto same = [](const std::string& v) { return v; };
    add_if_differs(out, std::move(what), x, y, same, same);
}

// Per arena present in both plans (arenas on one side only show in the arena deltas).
void add_arena_changes(const Plan& a, const Plan& b, std::vector<SettingChange>& out) {
    for (const ArenaPlan& x : a.arenas)
        for (const ArenaPlan& y : b.arenas) {
            if (x.config.name != y.config.name) continue;
            const std::string arena = "arena '" + x.config.name + "' ";
            add_if_differs(out, arena + "capacity", x.config.capacity, y.config.capacity,
                           capacity_text, exact_bytes);
            add_if_differs(out, arena + "alignment", x.config.alignment, y.config.alignment,
                           format_bytes, exact_bytes);
            add_if_differs(out, arena + "page size", x.config.page_size, y.config.page_size,
                           page_text, exact_bytes);
            add_if_differs(out, arena + "strategy used", x.strategy, y.strategy);
        }
}

std::string arena_names(const Plan& p) {
    std::string names;
    for (const ArenaPlan& a : p.arenas)
        names += (names.empty() ? "" : ", ") + a.config.name;
    return names;
}

// Every input of the plan hash other than the model and the placements themselves, so that a
// reader learns why two hashes differ when the metrics do not say. The schedule is listed only
// for one model: another model's schedule differs as a matter of course.
std::vector<SettingChange> setting_changes(const Plan& a, const Plan& b) {
    std::vector<SettingChange> out;
    add_if_differs(out, "mode", std::string(mode_name(a.mode)), std::string(mode_name(b.mode)));
    add_if_differs(out, "strategy", a.strategy, b.strategy);
    add_if_differs(out, "arenas", arena_names(a), arena_names(b)); // their order is hashed too
    add_arena_changes(a, b, out);
    auto dims = [](const Plan& p) { return p.dims.empty() ? "fixed" : binding_text(p.dims); };
    add_if_differs(out, "dims", dims(a), dims(b));
    add_if_differs(out, "sharding", describe_shard_spec(a.shard), describe_shard_spec(b.shard));
    add_if_differs(
        out, "replay token", a.replay_token, b.replay_token,
        [](const Digest& d) { return to_hex(d).substr(0, 12); },
        [](const Digest& d) { return to_hex(d); });
    if (a.ir_hash == b.ir_hash) add_schedule_change(a, b, out);
    return out;
}

std::string history_or_none(const std::optional<IterationHistory>& h) {
    return h ? history_text(*h) : std::string("one plan, no iterations");
}

// One iteration as it was decided, the plan it ran on and the one a replan replaced, which
// history_text does not say.
std::string decided_text(const IterationOutcome& i) {
    return fmt::format("{}, planned at {}{}", iteration_decision(i), binding_text(i.plan_binding),
                       i.replanned ? ", was " + to_hex(i.old_plan_hash).substr(0, 16) : "");
}

// Every field of the iteration: where the short forms read alike, the hashes differ beyond
// their first digits or only the replan key does.
std::string decided_exactly(const IterationOutcome& i) {
    return fmt::format("{}, plan {}{}, replan key {}", decided_text(i), to_hex(i.plan_hash),
                       i.replanned ? ", was " + to_hex(i.old_plan_hash) : "", to_hex(i.replan_key));
}

std::vector<SettingChange> history_changes(const std::optional<IterationHistory>& a,
                                           const std::optional<IterationHistory>& b) {
    std::vector<SettingChange> out;
    if (a == b) return out;
    add_if_differs(out, "iterations", history_or_none(a), history_or_none(b));
    if (!a || !b) return out;
    for (size_t i = 0; i < std::min(a->decided.size(), b->decided.size()); ++i) {
        const IterationOutcome &x = a->decided[i], &y = b->decided[i];
        if (x == y) continue;
        add_if_differs(out, fmt::format("iteration {}", i), x, y, decided_text, decided_exactly);
        break;
    }
    return out;
}

} // namespace

PlanComparison compare_plans(const Plan& before, const Plan& after) {
    PlanComparison c;
    c.hash_before = to_hex(before.plan_hash);
    c.hash_after = to_hex(after.plan_hash);
    c.identical = before.plan_hash == after.plan_hash;
    c.different_models = different_models(before, after);
    c.settings = setting_changes(before, after);
    c.arenas = arena_deltas(before, after);
    c.moved = tensor_moves(before, after);
    return c;
}

PlanComparison diff_sessions(const Session& a, const Session& b) {
    for (const Session* s : {&a, &b})
        if (!s->plan)
            fail(FailureCode::CorruptCheckpoint, fmt::format("session {}", s->summary.id),
                 s->altered_reason);
    PlanComparison c = compare_plans(*a.plan, *b.plan);
    c.history = history_changes(a.input.iterations, b.input.iterations);
    return c;
}

std::string format_comparison(const PlanComparison& c, size_t max_moves) {
    std::string out;
    if (!c.different_models.empty())
        out += c.different_models + "; the deltas compare plans of different inputs\n";
    out += fmt::format("plan hash  {}\n        -> {}\n", c.hash_before, c.hash_after);
    auto section = [&out](const char* title, const std::vector<SettingChange>& changes) {
        if (!changes.empty()) out += fmt::format("\n{}\n", title);
        for (const SettingChange& s : changes)
            out += fmt::format("  {:<30} {} -> {}\n", s.what, s.before, s.after);
    };
    if (c.identical) {
        out += c.history.empty() ? "identical\n" : "identical plans, reached otherwise\n";
        section("history", c.history);
        return out;
    }
    section("settings", c.settings);
    section("history", c.history);
    out += fmt::format("\n{:<14} {:>14} {:>14} {:>12} {:>14} {:>14} {:>12}\n", "arena",
                       "peak before", "peak after", "delta", "LB before", "LB after", "delta");
    for (const ArenaDelta& d : c.arenas) {
        auto peak = [](const std::optional<ArenaMetrics>& m) {
            return m ? format_bytes(m->peak_bytes) : std::string("-");
        };
        auto bound = [](const std::optional<ArenaMetrics>& m) {
            return m ? format_bytes(m->lower_bound) : std::string("-");
        };
        out +=
            fmt::format("{:<14} {:>14} {:>14} {:>12} {:>14} {:>14} {:>12}\n", d.arena,
                        peak(d.before), peak(d.after), format_byte_delta(d.peak_delta()),
                        bound(d.before), bound(d.after), format_byte_delta(d.lower_bound_delta()));
    }
    out += fmt::format("\n{} moved\n", count_of(c.moved.size(), "tensor"));
    for (size_t k = 0; k < c.moved.size() && k < max_moves; ++k) {
        const TensorMove& m = c.moved[k];
        if (m.arena_after.empty())
            out +=
                fmt::format("  {}  only before ({} @ {})\n", m.id, m.arena_before, m.offset_before);
        else if (m.arena_before.empty())
            out += fmt::format("  {}  only after ({} @ {})\n", m.id, m.arena_after, m.offset_after);
        else
            out += fmt::format("  {}  {} @ {} -> {} @ {}\n", m.id, m.arena_before, m.offset_before,
                               m.arena_after, m.offset_after);
    }
    if (c.moved.size() > max_moves)
        out += fmt::format("  ... and {} more\n", c.moved.size() - max_moves);
    return out;
}

} // namespace tmmu::sessions
