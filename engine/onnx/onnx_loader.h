#pragma once
// ONNX models as model IR, read with the ONNX project's own library (libonnx 1.12): the checker
// first (corrupt models must never reach shape inference, which crashes on some), then shape
// inference with data propagation, then every tensor's bytes from its inferred type and shape.
// Symbolic dimensions are bound by name (--dim NAME=VALUE) or whole input shapes
// (--input-shape INPUT=1x3x640x640); anything left unknown is UNBOUND_DIMENSION listing every
// name or input and where it is used. Ops the library's opset tables do not know are reported by
// name and domain, never skipped.
#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tmmu::onnx {

struct OnnxBindings {
    std::map<std::string, int64_t> dims;                      // symbolic name -> value
    std::map<std::string, std::vector<int64_t>> input_shapes; // graph input -> whole shape
};

struct OnnxModel {
    Graph graph; // finalized
    std::string producer;
    int64_t opset = 0;                      // of the default domain
    std::vector<std::string> symbolic_dims; // names the file uses, sorted
};

OnnxModel load_onnx(const std::string& path, const OnnxBindings& bindings);

} // namespace tmmu::onnx
