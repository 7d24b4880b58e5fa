#include "ir/dynamic_dims.h"

#include "core/failure.h"
#include "ir/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace tmmu {
namespace {

void check_corner(const Graph& g, bool at_max) {
    Graph corner = g;
    for (DynamicDim& d : corner.dims)
        d.value = at_max ? d.max : d.min;
    try {
        finalize_graph(corner);
    } catch (const Failure& f) {
        throw Failure(f.code(), f.where(),
                      fmt::format("at the envelope's {} ({}): {}", at_max ? "max" : "min",
                                  binding_text(corner), f.message()));
    }
}

} // namespace

std::string dim_name_problem(const std::string& name) {
    if (name.empty()) return "a dimension name is empty";
    if (name.find('*') != std::string::npos)
        return fmt::format("dimension name '{}' holds '*', which joins the dimensions of a "
                           "product (as in batch*seq)",
                           name);
    if (name.find_first_not_of("0123456789") == std::string::npos)
        return fmt::format("dimension name '{}' is a number, which a product reads as a factor "
                           "(as in 4*seq)",
                           name);
    return {};
}

void check_inside_envelope(const DynamicDim& d, int64_t value, const std::string& where) {
    if (value < d.min || value > d.max)
        fail(FailureCode::ShapeEnvelopeViolation, where,
             fmt::format("{}={} is outside the model's shape envelope [{}, {}]", d.name, value,
                         d.min, d.max));
}

void check_binding(const Graph& g, const DimBinding& values, const std::string& where) {
    for (const auto& [name, value] : values) {
        const uint32_t k = g.find_dim(name);
        if (k == kNone)
            fail(FailureCode::InvalidArgument, where,
                 g.dims.empty() ? fmt::format("the model has no dynamic dimension '{}' (its "
                                              "shapes are fixed: it declares no shape_envelope)",
                                              name)
                                : fmt::format("the model has no dynamic dimension '{}'; it "
                                              "declares {}",
                                              name, declared_dim_names(g)));
        check_inside_envelope(g.dims[k], value, where);
    }
}

Graph bound_at(const Graph& g, const DimBinding& values, const std::string& where) {
    check_binding(g, values, where);
    Graph bound = g;
    for (const auto& [name, value] : values)
        bound.dims[bound.find_dim(name)].value = value;
    try {
        finalize_graph(bound);
    } catch (const Failure& f) {
        throw Failure(f.code(), f.where(),
                      fmt::format("at {}: {}", binding_text(bound), f.message()));
    }
    return bound;
}

void bind_dims(Graph& g, const DimBinding& values, const std::string& where) {
    if (!values.empty()) g = bound_at(g, values, where);
}

void check_envelope_corners(const Graph& g) {
    if (g.dims.empty()) return;
    check_corner(g, false);
    check_corner(g, true);
}

std::string axis_text(const Graph& g, const AxisDims& a) {
    std::vector<std::string> parts;
    if (a.factor != 1) parts.push_back(std::to_string(a.factor));
    for (uint32_t d : a.dims)
        parts.push_back(g.dims[d].name);
    return fmt::format("{}", fmt::join(parts, "*"));
}

int64_t axis_extent(const Graph& g, const AxisDims& a, const std::string& where) {
    int64_t extent = a.factor;
    for (uint32_t d : a.dims)
        if (__builtin_mul_overflow(extent, g.dims[d].value, &extent))
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("{} at {} is larger than {}", axis_text(g, a), binding_text(g),
                             INT64_MAX));
    return extent;
}

ModelAnnotations dim_annotations(const Graph& g) {
    ModelAnnotations a;
    if (g.dims.empty()) return a;
    a.dim_names.resize(g.tensors.size());
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& tensor = g.tensors[t];
        if (!tensor.dynamic()) continue;
        for (const AxisDims& axis : tensor.shape_dims)
            a.dim_names[t].push_back(axis.fixed() ? std::string() : axis_text(g, axis));
    }
    for (const DynamicDim& d : g.dims)
        a.symbolic_dims.push_back(d.name);
    return a;
}

std::string declared_dim_names(const Graph& g) {
    std::vector<std::string> names;
    for (const DynamicDim& d : g.dims)
        names.push_back(d.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

DimBinding binding_of(const Graph& g) {
    DimBinding b;
    for (const DynamicDim& d : g.dims)
        b[d.name] = d.value;
    return b;
}

std::string envelope_text(const Graph& g) {
    if (g.dims.empty()) return {};
    std::vector<std::string> parts;
    for (const DynamicDim& d : g.dims)
        parts.push_back(fmt::format("{}={} of [{}, {}]", d.name, d.value, d.min, d.max));
    return fmt::format("{}; replan_policy {}", fmt::join(parts, ", "),
                       replan_policy_name(g.replan_policy));
}

std::string binding_text(const Graph& g) {
    return binding_text(binding_of(g));
}

std::string binding_text(const DimBinding& b) {
    std::vector<std::string> parts;
    for (const auto& [name, value] : b)
        parts.push_back(fmt::format("{}={}", name, value));
    return fmt::format("{}", fmt::join(parts, ", "));
}

bool binding_fits(const DimBinding& planned, const DimBinding& next) {
    for (const auto& [name, value] : next) {
        auto it = planned.find(name);
        if (it != planned.end() && value > it->second) return false;
    }
    return true;
}

} // namespace tmmu
