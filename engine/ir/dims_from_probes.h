#pragma once
// Dynamic dimensions for a graph that a builder makes at fixed shapes (a transformer config, an
// ONNX model): which axes follow which dimension is read from the graph built again with that
// dimension moved (above its value, or below where the model does not hold above), then checked
// against builds with every dimension moved at once. The
// builder's shapes name no dimension, so an axis may follow dimensions only as a product with a
// factor (N, batch*seq, 4*N: what a Reshape that flattens makes); an axis that moves otherwise
// (N+1, the larger of two dimensions) cannot vary, and is refused by name.
#include "ir/dynamic_dims.h"
#include "ir/graph.h"

#include <functional>
#include <string>
#include <vector>

namespace tmmu {

// Builds the model with its dimensions bound there (every name of the dims given).
using BuildAtBinding = std::function<Graph(const DimBinding&)>;

// `g` is the graph built at the dims' values; `dims` declares each dimension (name, envelope,
// value). Sets g.dims (in name order), each dynamic axis's shape_dims and the replan policy,
// finalizes g and checks the envelope's corners. Throws INVALID_IR_SHAPES at `where` when a
// build at other values has other tensors, or an axis changes other than as a
// product of dimensions, naming the tensor, the axis and both bindings; what build_at throws
// otherwise.
void make_dims_from_probes(Graph& g, std::vector<DynamicDim> dims, ReplanPolicy policy,
                           const BuildAtBinding& build_at, const std::string& where);

// The probes sample a few bindings; an axis may follow its dimensions otherwise in between (the
// larger of two, taken for the one that was larger at every probe). A run over iterations
// checks what it plans and runs against the model built there, tensor by tensor (by id): the
// same tensors and roles, every byte sharing the plan makes (the model may share more), and
// the sizes below. Both throw INVALID_IR_SHAPES at `where`, naming the tensor, and place a
// failed load there.
// A plan's graph: the model built at `bound`'s binding has exactly `bound`'s shapes.
void check_built_at(const Graph& bound, const BuildAtBinding& build_at, const std::string& where);
// An iteration at `at` run on a plan of `planned`: no tensor of the model built there is larger
// than `planned` holds it.
void check_fits_built_at(const Graph& planned, const DimBinding& at, const BuildAtBinding& build_at,
                         const std::string& where);

} // namespace tmmu
