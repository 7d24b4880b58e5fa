#pragma once
// Binding a graph's dynamic dimensions (seed 000, II.H). A graph with a shape envelope is
// always bound to one value per dimension (Graph::dims); binding again re-finalizes it, so
// shapes, bytes and dynamic views follow the new values.
#include "ir/annotations.h"
#include "ir/graph.h"

#include <climits>
#include <cstdint>
#include <map>
#include <string>

namespace tmmu {

using DimBinding = std::map<std::string, int64_t>; // dimension name -> value

// The largest value a dynamic dimension may take, as --dim takes it (1 is the smallest).
inline constexpr int64_t kMaxDynamicDim = INT32_MAX;

// Why `name` cannot name a dimension (empty, holding the '*' that joins a product of
// dimensions, or all digits, which a product reads as a factor); empty when it can.
std::string dim_name_problem(const std::string& name);

// SHAPE_ENVELOPE_VIOLATION at `where` unless d.min <= value <= d.max.
void check_inside_envelope(const DynamicDim& d, int64_t value, const std::string& where);

// Sets the named dimensions (the others keep theirs) and finalizes the graph again. Throws
// InvalidArgument at `where` for a name the graph does not declare, SHAPE_ENVELOPE_VIOLATION
// for a value outside its envelope, and what finalize_graph throws for a binding at which the
// graph does not hold (a view beyond its base). The graph is unchanged when it throws.
void bind_dims(Graph& g, const DimBinding& values, const std::string& where);
// A copy of the graph bound there, for checks that keep the graph as it is: one copy, where
// bind_dims on a copy would make two. Throws what bind_dims throws.
Graph bound_at(const Graph& g, const DimBinding& values, const std::string& where);
// The checks of bind_dims that need no finalizing: names declared, values inside the envelope.
void check_binding(const Graph& g, const DimBinding& values, const std::string& where);

// Finalizes copies of the graph at both corners of its envelope (every dimension at its min,
// then at its max), so that a view which fits at one binding but not at another is refused when
// the model loads; the failure says which corner. Nothing to do without dynamic dimensions.
void check_envelope_corners(const Graph& g);

// "batch", "batch*seq", "4*N": an axis as IR JSON, hashes and views name it (the factor first,
// then the dimensions in index order). Every index must be one of g.dims.
std::string axis_text(const Graph& g, const AxisDims& a);
// The axis's size at the graph's binding. INVALID_IR_SHAPES at `where` when it passes
// INT64_MAX (a product of dimensions at their max).
int64_t axis_extent(const Graph& g, const AxisDims& a, const std::string& where);

// The dynamic axes' names per tensor (ModelAnnotations::dim_names) and every declared name, so
// views label shapes as they do an ONNX model's; empty without dynamic dimensions.
ModelAnnotations dim_annotations(const Graph& g);

DimBinding binding_of(const Graph& g);
// "batch, seq": the declared names, for messages.
std::string declared_dim_names(const Graph& g);
// "batch=2 of [1, 8], seq=512 of [1, 2048]; replan_policy REPLAN_AT_SAFEPOINT": the binding,
// the envelope and the policy, for summaries; empty without dynamic dimensions.
std::string envelope_text(const Graph& g);
// "batch=8, seq=512" in name order; empty without dynamic dimensions.
std::string binding_text(const Graph& g);
std::string binding_text(const DimBinding& b);

// Whether shapes at `next` fit a plan made at `planned`: no dimension is larger (a tensor's
// bytes only grow with its dimensions). Names absent from `next` keep their planned value.
bool binding_fits(const DimBinding& planned, const DimBinding& next);

} // namespace tmmu
