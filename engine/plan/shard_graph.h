#pragma once
// The graph one rank of a sharded run plans (seed 000 II.I, the contract in shard_spec.h):
// the tensors of sharded roles cut to the rank's flat chunk, views of them cut to the part of
// the chunk they cover, every forward or backward read of a sharded parameter preceded by an
// all_gather node writing it whole into a workspace tensor the reader reads instead, and, with
// gradients sharded, every parameter gradient followed by a reduce_scatter node writing the
// rank's shard of it, which the optimizer reads instead.
#include "ir/graph.h"
#include "ir/mode.h"
#include "plan/shard_spec.h"

#include <string>
#include <vector>

namespace tmmu {

struct ShardedGraph {
    Graph graph;                    // finalized
    std::vector<std::string> notes; // what was sharded and gathered, for the plan's notes
};

// `g` is finalized and `spec` checked (check_shard_spec); collectives are added for the nodes
// `mode` runs. Tensors sharing bytes (views, alias groups, in-place writes) are cut as one
// storage, and only when all of them have roles that are cut; otherwise they stay whole, as
// does a gradient the optimizer updates in place. Gathered tensors are named
// "<tensor>@gathered:<reader node>", their nodes "all_gather:<tensor>@<reader node>"; a node
// reading a parameter and views of it gathers the parameter once and reads each view as a view
// of that copy, "<view>@gathered:<reader node>" with no collective of its own. Gradient shards
// are "<gradient>@shard", their nodes "reduce_scatter:<gradient>".
// Throws Failure(InvalidIrShapes) for a view whose part on this rank is not a whole number of
// its elements, a collective's name the graph already uses, or what finalize_graph refuses in
// the rank's graph; Failure(AllocationOverflow) for a shard of more than 2^63 - 1 elements.
ShardedGraph shard_graph(const Graph& g, const ShardSpec& spec, Mode mode);

} // namespace tmmu
