#pragma once
// Compiled regions (seed 004, sections 1.6, 8 and 15). Internal to engine/lazy.
//
// A call of a compiled function stages the function on the engine itself: its ops emit lazy
// nodes as any caller's would, except that nothing is forced. When the function returns, the
// nodes it emitted leave the graph and become the body of one CompiledCall node, whose inputs
// are the values and tokens the body read from outside and whose outputs are the values
// something outside holds (returned tensors, saved slots, bases) and one fresh token, which
// becomes tokGlobal and the token of every loc the body touched. The body's normalized form
// (values numbered by position, locs and bases by first access, runtime ids left out) is the
// variant cache's key; a miss compiles a variant: the fusion groups and the region's arena,
// where our planner places every temporary of the call (a value made and last read inside it)
// and from which the call runs them. Before that, mutation in the body is functionalized
// (functionalize.cpp): loads after the body's own store read the stored value and only the last
// store to a loc writes it, at the body's end. At plan time the call expands into its body's
// subevents in emission order, a linear extension of its internal dependencies, so base commit
// versions are assigned exactly where the uncompiled program would assign them (8.6.0).
#include "core/digest.h"
#include "lazy/engine.h"
#include "lazy/lazy_graph.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace tmmu::lazy {

// Elementwise nodes of one body that run as one kernel (15.1, 15.2). Indices are positions in
// the body. Invariant: every member's value that is not an output is read by members only; each
// output is read only after `position` (never by a member), so running the whole group at its
// last member's position is what running its members one by one would compute.
struct FusedGroup {
    std::vector<uint32_t> members; // in body order
    std::vector<uint32_t> outputs; // members whose value leaves the group, in body order
    uint32_t position = 0;         // the last member: where the group runs
    Shape shape;                   // every member's shape
    int vector_width = 1;          // 4, 2 or 1 (15.3)
};

// What a cache miss compiles, reused by every call with the same key.
struct CompiledVariant {
    Digest key{};
    std::vector<FusedGroup> groups;
    std::vector<int32_t> group_of; // per body node: its group, or -1
    // The region arena (15): the bytes our planner (auto) needs for the call's temporaries, and
    // per body node where its output lives in it, or -1 when the output is a pool buffer of its
    // own (it escapes, a loc keeps it, or it is an effect's or a fused member's that no kernel
    // writes). Invariant: two temporaries overlap in bytes only if no node of the call runs
    // while both are live (a fused group runs, and reads, at its last member's position).
    uint64_t planned_bytes = 0;
    std::vector<int64_t> arena_offset;
};

// One compiled function: its body and its variants, least recently used first.
struct CompiledFnRec {
    std::string name;
    CompiledBody body;
    std::list<std::shared_ptr<const CompiledVariant>> variants;
};
// 8.5's variant-explosion bound. 8.5's universal may-alias fallback variant has no counterpart:
// a call is staged against its real binding every time, and the staged dataflow itself
// depends on the aliasing (with f(a, b) = {a *= 2; b += a}, f(x, x) adds a value to itself
// where f(x, y) adds two), so a variant is only ever used for a body traced with its binding
// and no variant could serve every alias pattern; this bound is what keeps their number down.
inline constexpr size_t kMaxVariantsPerFunction = 16;

// One call: the staged body, which leaves the graph for the call node.
struct CompiledCallRec {
    uint64_t fn = 0;
    bool hit = false;
    std::vector<Node> body; // in emission order
    std::shared_ptr<const CompiledVariant> variant;
};

// Staging's view of a body: which values leave it, for the key and the fusion analysis.
struct BodyFacts {
    std::map<ValueId, uint32_t> position; // producing body node of each value made inside
    std::map<ValueId, std::vector<uint32_t>> readers; // body nodes reading each value
    std::set<ValueId> escaping;                       // made inside, held outside
};
BodyFacts body_facts(const std::vector<Node>& body, const std::map<ValueId, Value>& values);

// The normalized identity and abstract signature of a body (8.1-8.5) as text: ops, attributes,
// output shapes, inputs by position (external ones as abstract arguments with their shapes),
// constants as little-endian f32 bit patterns (8.2.1), locs and bases as state slots numbered
// by first access with their roles (the pinned ordered state signature), which values escape.
// Runtime ids (value, node, loc, base and mutation ids, draw nonces) are left out.
struct EngineState;
std::string normalized_body(const EngineState& s, const std::vector<Node>& body,
                            const BodyFacts& facts);

// The bind-time signature of a call's arguments (8.3, 8.5, 8.8), by position: the base each
// argument is a view of, numbered by first appearance (so two arguments sharing a base show
// it), with its view against the base when it is not the whole base; an absent argument (an
// empty handle) is the stable sentinel `absent`, never an alias of another position.
std::string argument_binding(const EngineState& s, std::span<const Tensor> args);

// The fusion groups of a body (15.1-15.4): elementwise chains (and one-element constants they
// read, as literals) merged producer into consumer, then groups sharing a subexpression merged
// into one multi-output kernel. Random draws, reductions, matmuls, views and effects never fuse.
std::vector<FusedGroup> fusion_groups(const std::vector<Node>& body,
                                      const std::map<ValueId, Value>& values,
                                      const BodyFacts& facts);

} // namespace tmmu::lazy
