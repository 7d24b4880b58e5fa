#pragma once
// The exact part of "optimal": a decision search that places every buffer of a time-connected
// group under a target height, or proves that no placement fits. Our own code, after the
// techniques of minimalloc (Moffitt, ASPLOS 2023):
//   - canonical placements: buffers go in non-decreasing (offset, rank) order, each at its
//     lowest offset above the buffers already placed that it meets in time ("min offset");
//   - section inference: per section (a maximal time interval with a constant live set), the
//     unplaced buffers stack above the lowest min offset among them and above the last offset;
//   - dominance: a buffer is not placed at an offset that some unplaced buffer would fit
//     entirely below, at its own min offset (that buffer could drop into the gap);
//   - symmetry: of two siblings that put buffers of the same shape at the same offset, only the
//     first is explored;
//   - dynamic decomposition: when no unplaced buffer spans some time, the two sides are
//     independent and searched one after the other.
// Every solution of height <= target that minimises the sum of offsets survives all of these,
// so an exhausted search proves that nothing fits under the target (without pinned buffers;
// pins are obstacles the canonical offsets step over, which keeps it sound but not complete).
#include "plan/offset_problem.h"
#include "plan/strategies/placement.h"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace tmmu::optimal {

// One searched buffer: its section range and the pinned buffers it must avoid.
struct Item {
    uint32_t buffer;
    uint32_t first, last; // sections [first, last) of its lifetime
    uint64_t size, alignment;
    std::vector<placement::Span> pins; // byte spans of pinned buffers alive at the same time
};

// A group of buffers that no lifetime links to the others, with its sections (the elementary
// intervals between the group's distinct begin and end times), the time overlaps between its
// items and the items alive in each section (both as flat adjacency lists).
struct Component {
    std::vector<Item> items;
    uint32_t sections = 0;
    std::vector<uint32_t> overlap_start, overlaps;      // items meeting item i in time, i excluded
    std::vector<uint32_t> section_start, section_items; // items alive in section s
    // Rank arrays (rank[item], 0 = tried first among equal offsets), one per order; orders[k]
    // names ranks[k]'s keys (see build_ranks), which also re-rank the parts of a split search.
    std::vector<std::vector<uint32_t>> ranks;
    std::vector<std::array<char, 3>> orders;
    std::vector<placement::Bytes> width, area; // per item: lifetime length, size x length
};

// Splits the searched buffers (not pinned, size > 0) into components; pinned buffers become
// obstacles of the items they overlap in time. Deterministic. Leaves the adjacency and ranks
// empty: prepare_component builds them (quadratic in the items: only for searched components).
std::vector<Component> split_components(const OffsetProblem& p);
void prepare_component(const OffsetProblem& p, Component& c);

enum class Outcome { Found, Exhausted, OutOfNodes };

// Node accounting shared by every search of one solve: nodes are counted in spent, and a search
// stops (OutOfNodes) when spent reaches limit or poll() returns true (checked every
// kPollEvery nodes); then stopped is set and every later search stops at once.
// work counts the section entries the searches scan (a deterministic measure of their cost,
// which differs tenfold between instances); a search also stops when work reaches work_limit.
struct NodeBudget {
    uint64_t spent = 0;
    uint64_t limit = 0;
    uint64_t work = 0;
    uint64_t work_limit = UINT64_MAX;
    std::function<bool()> poll;
    bool stopped = false;
};
// Often enough that a time budget ends within about a millisecond of its deadline even where
// nodes are expensive (~15 us each on dense instances such as minimalloc's J).
inline constexpr uint64_t kPollEvery = 64;

// Searches one component for a placement with height <= target, using order k of c.ranks to
// order ties. On Found, offsets[item.buffer] holds the placement of every item of the component.
Outcome search_component(const Component& c, size_t order, uint64_t target, NodeBudget& budget,
                         std::vector<uint64_t>& offsets);

} // namespace tmmu::optimal
