#pragma once
// Differences between two plans (two sessions, or a session and its replay): per-arena metric
// deltas and per-tensor placement changes, matched by arena name and tensor id.
#include "session_store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmmu::sessions {

struct ArenaDelta {
    std::string arena;
    std::optional<ArenaMetrics> before; // empty when the arena is only in the second plan
    std::optional<ArenaMetrics> after;  // empty when the arena is only in the first plan
    int64_t peak_delta() const;
    int64_t lower_bound_delta() const;
    bool changed() const;
};

struct TensorMove {
    std::string id;
    std::string arena_before, arena_after; // "" when the tensor is absent on that side
    uint64_t offset_before = 0, offset_after = 0;
    std::string name; // the tensor's name in the first plan that has it (what people read)
};

// One input of the plan hash that differs between the plans, in words: what, and its value in
// each plan ("arena 'activations' capacity", "8.00 GiB", "4.00 GiB"). Without these, two plans
// of other arena configs or seeds could differ in hash with every delta 0.
struct SettingChange {
    std::string what;
    std::string before, after;
};

struct PlanComparison {
    bool identical = false; // plan hashes equal
    std::string hash_before, hash_after;
    // Empty when both plans are of the same model (IR hash); else says which models, so that a
    // reader takes the deltas below as between different inputs.
    std::string different_models;
    // Mode, requested strategy, the arenas in order, per arena on both sides its capacity,
    // alignment, page size and the strategy used, the binding of dynamic dimensions, the rank and
    // sharding, the replay token, and for one model its schedule; each listed only when it
    // differs (in exact bytes or the whole token when the short form reads the same).
    std::vector<SettingChange> settings;
    std::vector<ArenaDelta> arenas; // first plan's arena order, then arenas only in the second
    std::vector<TensorMove> moved;  // ascending id; includes tensors present on one side only
    // diff_sessions only: how each session reached its plan when that differs (seed 000 II.H),
    // since two sessions can end on one plan, one planned once and one over iterations: the
    // histories in short, then the first iteration decided otherwise.
    std::vector<SettingChange> history;
};

PlanComparison compare_plans(const Plan& before, const Plan& after);

// compare_plans of the sessions' plans, with their iteration histories compared. Throws
// CorruptCheckpoint when either session is altered beyond decoding.
PlanComparison diff_sessions(const Session& a, const Session& b);

// Human-readable report (the CLI prints it); at most max_moves tensor lines, then a count.
std::string format_comparison(const PlanComparison& c, size_t max_moves = 50);

} // namespace tmmu::sessions
