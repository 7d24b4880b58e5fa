#pragma once
// ONNX models as model IR, read with the ONNX project's own library (libonnx 1.12): the checker
// first (corrupt models must never reach shape inference, which crashes on some), then shape
// inference with data propagation, then our own folding of the Shape -> Gather/Slice -> Concat
// chains older opsets leave symbolic, then every tensor's bytes from its inferred type and shape.
// Symbolic dimensions are bound by name (--dim NAME=VALUE) or whole input shapes
// (--input-shape INPUT=1x3x640x640); anything left unknown is UNBOUND_DIMENSION listing every
// name or input and where it is used. Ops the library's opset tables do not know are reported by
// name and domain, never skipped. If/Loop/Scan bodies are planned as nested scopes whose peak
// becomes the owning node's workspace.
#include "ir/annotations.h"
#include "ir/graph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::onnx {

struct OnnxBindings {
    std::map<std::string, int64_t> dims;                      // symbolic name -> value
    std::map<std::string, std::vector<int64_t>> input_shapes; // graph input -> whole shape
    bool aliasing = true; // views for shape-only ops, in-place elementwise ops
};

struct OnnxModel {
    Graph graph; // finalized
    std::string producer;
    int64_t opset = 0; // of the default domain
    ModelAnnotations annotations;
};

OnnxModel load_onnx(const std::string& path, const OnnxBindings& bindings);

// A model read, checked and shape-inferred once, then built at as many bindings as asked: a run
// over iterations builds it again at other values of its dimensions to see which axes follow
// them, and parsing and checking a model with inline weights is most of a load.
class OnnxFile {
  public:
    // Throws what load_onnx throws for a file that does not read or check.
    explicit OnnxFile(const std::string& path);
    ~OnnxFile();
    OnnxFile(const OnnxFile&) = delete;
    OnnxFile& operator=(const OnnxFile&) = delete;

    // What load_onnx(path, bindings) gives.
    OnnxModel load(const OnnxBindings& bindings) const;

  private:
    struct Read;
    std::unique_ptr<const Read> read_;
};

// How UNBOUND_DIMENSION's message starts; what follows names the shapes left unknown.
inline constexpr std::string_view kUnboundPrefix =
    "unbound dimensions (bind them with --dim NAME=VALUE or --input-shape INPUT=AxBxC): ";

// The inputs and symbolic dims as the file declares them, without binding or planning: what a
// dialog asks the user to bind. Throws what load_onnx throws for files that do not check.
ModelAnnotations declared_inputs(const std::string& path);

} // namespace tmmu::onnx
