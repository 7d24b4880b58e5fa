#pragma once
// The graph one rank of a sharded run plans (seed 000 II.I, the contract in shard_spec.h):
// the tensors of sharded roles cut to the rank's flat chunk, views of them cut to the part of
// the chunk they cover, every forward or backward read of a sharded parameter preceded by an
// all_gather node writing it whole into a workspace tensor the reader reads instead, and, with
// gradients sharded, every parameter gradient followed by a reduce_scatter node writing the
// rank's shard of it, which the optimizer reads instead.
#include "ir/graph.h"
#include "plan/shard_spec.h"

#include <string>
#include <vector>

namespace tmmu {

struct ShardedGraph {
    Graph graph;                    // finalized
    std::vector<std::string> notes; // what was sharded and gathered, for the plan's notes
};

// `g` is finalized and `spec` checked (check_shard_spec). A view follows its base's storage:
// it is cut when the tensor at the end of its view chain is sharded, whatever its own role.
// Gathered tensors are named "<tensor>@gathered:<reader node>", their nodes
// "all_gather:<tensor>@<reader node>"; gradient shards "<gradient>@shard", their nodes
// "reduce_scatter:<gradient>".
// Throws Failure(InvalidIrShapes) for a view whose part on this rank is not a whole number of
// its elements, or a gather name the graph already uses.
ShardedGraph shard_graph(const Graph& g, const ShardSpec& spec);

} // namespace tmmu
