#include "onnx/onnx_loader.h"

#include "core/failure.h"
#include "ir/validate.h"
#include "onnx/graph_builder.h"
#include "onnx/model_reading.h"
#include "onnx/shape_folding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tmmu::onnx {
namespace {

std::string folding_note(const std::map<std::string, int>& folded) {
    int total = 0;
    std::vector<std::string> ops;
    for (const auto& [op, n] : folded) {
        total += n;
        ops.push_back(fmt::format("{} {}", n, op));
    }
    return fmt::format("{} shape-computing nodes ({}) were folded into constants, as runtimes do: "
                       "their outputs are small parameters and the shapes they fed are static",
                       total, fmt::join(ops, ", "));
}

// Only names the user bound: in a model that loaded, every other symbolic dim was resolved by
// inference or folding (names like "unk__3" that inference made up for a Reshape it could not
// follow say nothing about where the final size came from).
void annotate_dims(const Graph& g, const DimNames& names, const OnnxBindings& b,
                   ModelAnnotations& out) {
    out.dim_names.assign(g.tensors.size(), {});
    for (size_t i = 0; i < g.tensors.size(); ++i) {
        auto it = names.find(g.tensors[i].id);
        if (it == names.end() || it->second.size() != g.tensors[i].shape.size()) continue;
        std::vector<std::string> bound = it->second;
        bool any = false;
        for (std::string& name : bound) {
            if (!b.dims.count(name)) name.clear();
            any |= !name.empty();
        }
        if (any) out.dim_names[i] = std::move(bound);
    }
}

// A --dim for a name the model does not use is a typo more often than not: binding nothing
// silently would leave the user wondering why the size did not change.
void check_dims_exist(const OnnxBindings& b, const std::vector<std::string>& symbolic,
                      const std::string& path) {
    for (const auto& [name, value] : b.dims)
        if (!std::binary_search(symbolic.begin(), symbolic.end(), name))
            fail(FailureCode::InvalidArgument, "--dim " + name,
                 fmt::format("'{}' is not a symbolic dimension of {} (its symbolic dimensions: "
                             "{})",
                             name, path,
                             symbolic.empty() ? "none"
                                              : fmt::format("{}", fmt::join(symbolic, ", "))));
}

// Read and checked, its inputs recorded as the file declares them, then shape inference (no
// bindings yet) and every symbolic name it leaves: what both a load and a dims dialog start from.
lib::ModelProto read_and_infer(const std::string& path, ModelAnnotations& out) {
    lib::ModelProto m = read_model(path);
    check_ops_known(m, path);
    out.inputs = declared_inputs_of(m.graph());
    infer_shapes(m, path);
    out.symbolic_dims = symbolic_names(m.graph());
    return m;
}

// Past the checker a load reads initializers' types and shapes, the values of integer ones
// (folding, and shape inference's data propagation through Slice or Gather, of tables of any
// size) and of small float ones (a Resize's scales). A large float one's bytes are weights, most
// of a model with inline weights, which every load would copy.
constexpr int64_t kKeptInitializerElements = 4096;

// A tensor's values, where they are weights; its capacity goes too (a copy holds none), since
// an OnnxFile lives with a model run over iterations.
void drop_weight_values(lib::TensorProto& t) {
    if (t.data_type() == lib::TensorProto_DataType_INT64 ||
        t.data_type() == lib::TensorProto_DataType_INT32)
        return;
    uint64_t elements = 1; // at most kKeptInitializerElements + 1: no overflow
    for (int64_t d : t.dims())
        elements =
            std::min(elements * uint64_t(std::clamp<int64_t>(d, 0, kKeptInitializerElements + 1)),
                     uint64_t(kKeptInitializerElements + 1));
    if (elements <= uint64_t(kKeptInitializerElements)) return;
    t.clear_raw_data();
    t.clear_float_data();
    t.clear_double_data();
    t.clear_int32_data(); // f16, bf16 and the narrower integer types
    t = lib::TensorProto(t);
}

// Initializers and Constant nodes (some exporters write weights as constants).
void drop_weight_bytes(lib::GraphProto& g) {
    for (lib::TensorProto& t : *g.mutable_initializer())
        drop_weight_values(t);
    for (lib::NodeProto& n : *g.mutable_node())
        if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx"))
            for (lib::AttributeProto& a : *n.mutable_attribute())
                if (a.has_t()) drop_weight_values(*a.mutable_t());
}

} // namespace

struct OnnxFile::Read {
    std::string path;
    lib::ModelProto inferred; // read_and_infer's, before any binding
    ModelAnnotations declared;
};

OnnxFile::OnnxFile(const std::string& path) {
    auto read = std::make_unique<Read>();
    read->path = path;
    read->inferred = read_and_infer(path, read->declared);
    drop_weight_bytes(*read->inferred.mutable_graph());
    read_ = std::move(read);
}

OnnxFile::~OnnxFile() = default;

OnnxModel load_onnx(const std::string& path, const OnnxBindings& bindings) {
    return OnnxFile(path).load(bindings);
}

OnnxModel OnnxFile::load(const OnnxBindings& bindings) const {
    const std::string& path = read_->path;
    OnnxModel out;
    out.annotations = read_->declared;
    lib::ModelProto m = read_->inferred; // binding and folding change it
    // The names dims had before binding, to show where a bound size came from.
    const DimNames names = symbolic_dim_names(m.graph());
    check_dims_exist(bindings, out.annotations.symbolic_dims, path);
    if (apply_bindings(*m.mutable_graph(), bindings, path)) infer_shapes(m, path);
    if (const auto folded = fold_shape_chains(m, read_->inferred.graph(), path); !folded.empty())
        out.annotations.notes.push_back(folding_note(folded));

    UnboundDims unbound;
    const TypeTable types(m.graph(), bindings.dims, unbound, nullptr, "");
    BuildContext ctx{bindings.dims, unbound, bindings.aliasing, out.annotations.notes};
    GraphBuilder builder(m.graph(), types, ctx, Role::Input);
    out.graph = builder.build(m.graph().name().empty() ? path : m.graph().name());
    if (!unbound.empty())
        fail(FailureCode::UnboundDimension, path,
             fmt::format("{}{}", kUnboundPrefix, unbound.text()));
    if (!bindings.aliasing)
        out.annotations.notes.insert(out.annotations.notes.begin(),
                                     "aliasing is off (--no-aliasing): every Reshape, Flatten, "
                                     "Squeeze, Unsqueeze and Identity output and every "
                                     "elementwise result gets bytes of its own");
    finalize_graph(out.graph);
    out.annotations.node_attributes = builder.take_attributes();
    annotate_dims(out.graph, names, bindings, out.annotations);
    out.producer = m.producer_name();
    for (const auto& o : m.opset_import())
        if (is_default_domain(o.domain())) out.opset = o.version();
    return out;
}

ModelAnnotations declared_inputs(const std::string& path) {
    ModelAnnotations out;
    (void)read_and_infer(path, out);
    return out;
}

} // namespace tmmu::onnx
