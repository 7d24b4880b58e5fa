#pragma once
#include "ir/graph.h"

namespace tmmu {

// Checks a Graph and fills its derived fields (bytes, producer, consumers, execution_order,
// step_of). Throws Failure naming the tensor/node and field:
//   INVALID_IR_SHAPES   duplicate ids, dangling references, negative dims, two producers,
//                       views outside their base, in_place_of/shape mismatches, bad order
//   LIVENESS_CYCLE      a cycle in the dataflow or an order that reads before a write
//   ALLOCATION_OVERFLOW shape * dtype overflows uint64
//   ALIGNMENT_VIOLATION alignment not a power of two, pinned offset not aligned
// Linear in nodes + edges (plus the sort for a derived order).
void finalize_graph(Graph& g);

} // namespace tmmu
