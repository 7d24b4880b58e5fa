#pragma once
// Aliasing as ONNX runtimes do it, on a built (not yet finalized) graph: the output of a
// shape-only op (Reshape, Flatten, Squeeze, Unsqueeze, Identity) is a view of its data input,
// and an elementwise op whose input has no other reader asks to write over it (in_place_of, so
// liveness applies the same rules as for our IR: refusals become plan notes). Every decision is
// a note naming the tensors and why.
#include "ir/graph.h"

#include <string>
#include <vector>

namespace tmmu::onnx {

void alias_like_runtimes(Graph& g, std::vector<std::string>& notes);

} // namespace tmmu::onnx
