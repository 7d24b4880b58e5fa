#pragma once
// Reading and preparing an ONNX ModelProto before it becomes a graph: the checker, the ops the
// library knows, dimension bindings and shape inference. Internal to the onnx module.
#include "ir/annotations.h"
#include "ir/dtype.h"
#include "onnx/onnx_loader.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tmmu::onnx {

namespace lib = ::onnx;

// The default ONNX domain is spelled "" or "ai.onnx".
inline bool is_default_domain(const std::string& domain) {
    return domain.empty() || domain == "ai.onnx";
}

// Element types with a fixed size; empty for strings and complex numbers.
std::optional<DType> dtype_of(int32_t elem);

// The parse, then what the library would read unchecked (every name must be UTF-8 text, as
// ids and binding names are; inline raw_data must be exactly as long as its dims need), then
// the checker (file form: external data resolves relative to the model).
lib::ModelProto read_model(const std::string& path);

// Every node, in subgraphs too, must be an op the library's opset tables (or the model's own
// functions) know: the library skips unknown ones silently. Window attributes (strides,
// dilations, kernel_shape) must be at least 1: the library's shape inference divides by them.
void check_ops_known(const lib::ModelProto& m, const std::string& path);

// --input-shape replaces a graph input's dims, --dim fills symbolic ones; inferred shapes are
// cleared so inference computes them again for the bound values. False when nothing was bound.
bool apply_bindings(lib::GraphProto& g, const OnnxBindings& b, const std::string& path);

// The library's shape inference with data propagation, subgraphs included.
void infer_shapes(lib::ModelProto& m, const std::string& path);

// Per value of the main graph, the symbolic name of each dim ("" for a fixed or unnamed dim);
// only values with at least one symbolic dim are listed.
using DimNames = std::unordered_map<std::string, std::vector<std::string>>;
DimNames symbolic_dim_names(const lib::GraphProto& g);

// Per value of the main graph with a shape, whether each axis lacks a fixed value (an
// initializer has none); a value graph inference gave no shape is not listed.
using OpenAxes = std::unordered_map<std::string, std::vector<bool>>;
OpenAxes open_axes(const lib::GraphProto& g);

// The graph inputs (initializers left out) with their dims as declared.
std::vector<ModelAnnotations::Input> declared_inputs_of(const lib::GraphProto& g);
// Every symbolic dim name the graph's values and its subgraphs' use, sorted.
std::vector<std::string> symbolic_names(const lib::GraphProto& g);

} // namespace tmmu::onnx
