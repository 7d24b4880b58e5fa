#include "onnx/tensor_types.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tmmu::onnx {
namespace {

DType dtype_or_fail(int32_t elem, const std::string& where) {
    if (auto d = dtype_of(elem)) return *d;
    fail(FailureCode::InvalidIrShapes, where,
         fmt::format("element type {} ({}) has no fixed size", elem,
                     lib::TensorProto_DataType_Name(lib::TensorProto_DataType(elem))));
}

const char* kind_of(const lib::TypeProto& t) {
    switch (t.value_case()) {
    case lib::TypeProto::kSequenceType:
        return "a sequence";
    case lib::TypeProto::kMapType:
        return "a map";
    case lib::TypeProto::kOptionalType:
        return "an optional";
    case lib::TypeProto::kSparseTensorType:
        return "a sparse tensor";
    default:
        return "of no known type";
    }
}

} // namespace

std::string UnboundDims::text() const {
    // Inference makes up a name ('unk__3') per value it could not follow, hundreds in a deep
    // model: a few say what is wrong. Every other entry (a name the user can bind, an unnamed
    // or data-dependent dim) is listed, first.
    constexpr size_t kShownMadeUp = 8;
    auto made_up = [](const std::string& what) { return what.starts_with("'unk__"); };
    std::vector<std::string> parts;
    size_t shown = 0, left_out = 0;
    for (const bool listing_made_up : {false, true})
        for (const auto& [what, used] : unbound_) {
            if (made_up(what) != listing_made_up) continue;
            if (listing_made_up && shown == kShownMadeUp) {
                ++left_out;
                continue;
            }
            shown += listing_made_up;
            const size_t places = std::min<size_t>(used.size(), 3);
            std::string list =
                fmt::format("{}", fmt::join(used.begin(), used.begin() + long(places), ", "));
            if (used.size() > places) list += fmt::format(" and {} more", used.size() - places);
            parts.push_back(fmt::format("{} (used by {})", what, list));
        }
    if (left_out > 0) parts.push_back(fmt::format("and {} more names inference made up", left_out));
    return fmt::format("{}", fmt::join(parts, "; "));
}

TypeTable::TypeTable(const lib::GraphProto& g, const std::map<std::string, int64_t>& dims,
                     UnboundDims& unbound, const TypeTable* outer, std::string scope)
    : dims_(dims), unbound_(unbound), outer_(outer), scope_(std::move(scope)) {
    for (const auto& t : g.initializer()) {
        TensorType tt;
        tt.dtype = dtype_or_fail(t.data_type(), place(t.name()));
        tt.shape.assign(t.dims().begin(), t.dims().end());
        initializers_[t.name()] = tt;
    }
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list)
            types_.emplace(v.name(), &v.type());
    for (const lib::NodeProto& n : g.node())
        for (const std::string& o : n.output())
            producers_.emplace(o, &n);
}

std::string TypeTable::place(const std::string& name) const {
    return scope_.empty() ? fmt::format("'{}'", name) : fmt::format("'{}' in {}", name, scope_);
}

const lib::TypeProto* TypeTable::find(const std::string& name) const {
    if (auto it = types_.find(name); it != types_.end()) return it->second;
    return nullptr;
}

// Inference takes a dim from the values that size a node's output (a ConstantOfShape of
// [N+1, -1]), or the file declares it: the node that makes the value is where to look.
void TypeTable::negative_dim(const std::string& name, int axis, int64_t dim) const {
    const auto it = producers_.find(name);
    const std::string made_by =
        it == producers_.end()
            ? std::string()
            : fmt::format("; node '{}' ({}) makes it", it->second->name(), it->second->op_type());
    fail(FailureCode::InvalidIrShapes, fmt::format("{} dim {}", place(name), axis),
         fmt::format("dimension {} is negative{}", dim, made_by));
}

std::optional<TensorType> TypeTable::of(const std::string& name) const {
    if (auto it = initializers_.find(name); it != initializers_.end()) return it->second;
    const lib::TypeProto* type = find(name);
    if (!type && outer_) return outer_->of(name);
    if (type && !type->has_tensor_type() && type->value_case() != lib::TypeProto::VALUE_NOT_SET)
        fail(FailureCode::InvalidIrShapes, place(name),
             fmt::format("the value is {}, not a tensor: only tensors can be planned",
                         kind_of(*type)));
    if (!type || !type->tensor_type().has_shape()) {
        unbound_.add("no inferred shape (the shape depends on data)", place(name));
        return std::nullopt;
    }
    const auto& tt = type->tensor_type();
    TensorType out;
    out.dtype = dtype_or_fail(tt.elem_type(), place(name));
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value() && d.dim_value() < 0) {
            negative_dim(name, i, d.dim_value());
        } else if (d.has_dim_value()) {
            out.shape.push_back(d.dim_value());
        } else if (d.has_dim_param() && dims_.count(d.dim_param())) {
            out.shape.push_back(dims_.at(d.dim_param()));
        } else {
            // Named dims are listed once with where they are used; unnamed ones each.
            const std::string key =
                d.has_dim_param() ? "'" + d.dim_param() + "'" : "an unnamed dim";
            unbound_.add(key, fmt::format("{} dim {}", place(name), i));
            out.shape.push_back(1);
        }
    }
    return out;
}

} // namespace tmmu::onnx
