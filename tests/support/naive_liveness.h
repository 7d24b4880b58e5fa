#pragma once
// A second liveness, written for the tests from the rules in resources/docs/ir-format.md
// ("Liveness semantics per field") and seed 000 (AnalyzeLiveness_v1, II.G), deliberately naive:
// quadratic loops, no union-find, nothing shared with engine/liveness. The oracle suite compares
// it with the engine over thousands of random graphs; the plan checker below uses it, so a
// liveness bug cannot make the planner, the validator and the tests wrong together.
#include "ir/graph.h"
#include "ir/mode.h"
#include "plan/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmmu::test {

struct NaiveLiveness {
    std::vector<NodeIndex> schedule;  // the mode's nodes in execution order
    std::vector<bool> active;         // per tensor: used by the schedule, or persistent
    std::vector<uint32_t> begin, end; // per active tensor: [begin, end)
    // Per active tensor: the smallest tensor index of its storage (tensors sharing bytes share
    // it), and its byte offset inside that storage.
    std::vector<TensorIndex> storage;
    std::vector<uint64_t> offset;
    std::vector<bool> in_place_accepted; // per tensor with in_place_of set
};

NaiveLiveness naive_liveness(const Graph& g, Mode mode);

// Per storage representative: lifetime (the hull of its members'), bytes (the largest member
// end), the member owning the bytes (the largest tensor that is not a view, the first of equal
// ones; the first member when all are views), alignment (the largest member's), and the pinned
// offset of the storage's start that its members' pins imply; pin_conflict says why they
// cannot all hold (a view pinned below its base, two different starts).
struct NaiveStorage {
    uint32_t begin = 0, end = 0;
    uint64_t bytes = 0;
    TensorIndex root = kNone;
    uint64_t alignment = 0;
    std::optional<uint64_t> pinned;
    std::string pin_conflict;
};
NaiveStorage naive_storage(const Graph& g, const NaiveLiveness& lv, TensorIndex representative);

// Checks a plan of g in mode against the naive liveness, with its own loops: every active
// tensor is planned; tensors of one storage keep their offsets inside it; tensors of different
// storages in one arena whose storages live at the same time, and must_not_alias pairs at any
// time, never share a byte. "" when the plan is right, else what is wrong.
std::string check_plan_lifetimes(const Graph& g, Mode mode, const Plan& plan);

} // namespace tmmu::test
