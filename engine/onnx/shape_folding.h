#pragma once
// Folding of shape-computing chains (Shape -> Gather/Slice -> Unsqueeze -> Concat -> Reshape) into
// constants, for exports from opset 9-12: the library's data propagation only follows the
// opset >= 13 versions of those ops, so older models keep symbolic shapes even with every input
// dim bound. Exports of any opset slice by values computed from shapes (a causal mask up to the
// sequence length), whose shapes close only once those values fold. Runtimes fold these chains
// the same way before they plan memory, torch's guards too (its expand writes
// Where(Equal(s, -1), 1, s) over the sizes). Only small integer and bool tensors whose inputs
// are all known are folded; the folded node disappears and its output becomes an initializer (a
// parameter of a few bytes).
#include "onnx/model_reading.h"

#include <map>
#include <string>

namespace tmmu::onnx {

// Folds what can be folded in the main graph: one pass in node order, each node's shape
// inference run as the values before it fold (NodeShapes), then graph inference again, until
// nothing more folds. Nothing folds where every shape is known already. `unbound` is the graph
// as inferred before any dimension was bound: a ConstantOfShape sized by values that follow the
// axes it left open (zeros(batch, seq)) is data, not folded at any binding. Returns how many
// nodes of each op type were folded.
std::map<std::string, int> fold_shape_chains(lib::ModelProto& m, const lib::GraphProto& unbound,
                                             const std::string& path);

} // namespace tmmu::onnx
