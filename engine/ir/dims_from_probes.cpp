#include "ir/dims_from_probes.h"

#include "core/failure.h"
#include "ir/validate.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace tmmu {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A value `step` away from `value` that a dimension can take: above it, else below it.
int64_t moved_value(int64_t value, int64_t step) {
    return value <= kMaxDynamicDim - step ? value + step : value - step;
}

// Probes go below a value only to 2 or more: at 1 an ONNX model broadcasts or squeezes the axis,
// so a model that holds there says nothing about the values a run takes.
constexpr int64_t kLowestProbeBelow = 2;

// `value` moved `step` below it, where a probe may go there.
std::optional<int64_t> value_below(int64_t value, int64_t step) {
    if (value - step < kLowestProbeBelow) return std::nullopt;
    return value - step;
}

// What the builder decided otherwise for a tensor at other values, beyond its shape: one
// plan's roles, views and in-place writes must hold at every binding.
std::string difference(const Tensor& here, const Tensor& there) {
    if (there.id != here.id) return fmt::format("another tensor ('{}') is in its place", there.id);
    if (there.shape.size() != here.shape.size())
        return fmt::format("rank {}, not {}", there.shape.size(), here.shape.size());
    if (there.role != here.role)
        return fmt::format("role {}, not {}", role_name(there.role), role_name(here.role));
    if (there.view.has_value() != here.view.has_value() || there.in_place_of != here.in_place_of ||
        there.alias_group != here.alias_group)
        return "it shares bytes with other tensors otherwise (a view or an in-place write)";
    return {};
}

// Why `other`, the model built at `b`, is not `g`, built at `base`, with other shapes; empty
// when it is.
std::string other_model(const Graph& g, const DimBinding& base, const Graph& other,
                        const DimBinding& b) {
    if (other.tensors.size() != g.tensors.size())
        return fmt::format("the model has {} tensors at {} and {} at {}", g.tensors.size(),
                           binding_text(base), other.tensors.size(), binding_text(b));
    for (size_t t = 0; t < g.tensors.size(); ++t)
        if (const std::string what = difference(g.tensors[t], other.tensors[t]); !what.empty())
            return fmt::format("tensor '{}' differs at {} from {}: {}", g.tensors[t].id,
                               binding_text(b), binding_text(base), what);
    return {};
}

// Why `bound`, a graph bound at `b`, does not have the shapes of `built`, the model built
// there; empty when it does.
std::string other_shapes(const Graph& bound, const Graph& built, const DimBinding& b) {
    for (size_t t = 0; t < bound.tensors.size(); ++t)
        if (bound.tensors[t].shape != built.tensors[t].shape)
            return fmt::format("tensor '{}' is {} at {}, where its axes that follow dimensions "
                               "say {}",
                               bound.tensors[t].id, shape_text(built.tensors[t].shape),
                               binding_text(b), shape_text(bound.tensors[t].shape));
    return {};
}

class Prober {
  public:
    Prober(Graph& g, const std::vector<DynamicDim>& dims, const BuildAtBinding& build_at,
           const std::string& where)
        : g_(g), dims_(dims), build_at_(build_at), where_(where) {
        for (const DynamicDim& d : dims_)
            base_[d.name] = d.value;
    }

    // Each dimension moved by one on its own: an axis that moves follows it, as a factor.
    void mark_axes() {
        for (uint32_t i = 0; i < dims_.size(); ++i) {
            DimBinding moved = base_;
            moved[dims_[i].name] = moved_value(dims_[i].value, 1);
            const Graph other = built_alone_at(moved, i);
            for (size_t t = 0; t < g_.tensors.size(); ++t)
                mark_tensor(t, other.tensors[t].shape, i, moved);
            if (!followed(i))
                refuse(fmt::format("no tensor's shape follows {} (is it fixed another way, by a "
                                   "whole input shape?)",
                                   dims_[i].name));
        }
        for (Tensor& t : g_.tensors)
            for (size_t k = 0; k < t.shape_dims.size(); ++k)
                if (!t.shape_dims[k].fixed()) set_factor(t, k);
    }

    // Every dimension at its largest value: what a replan can ask for. A builder that decides
    // otherwise there (an ONNX value folded only where it is not empty) is refused there, and so is
    // an axis that follows another dimension there (the larger of two, taken at the base values for
    // the one that was larger then).
    void check_at_largest(const std::vector<DynamicDim>& declared) const {
        DimBinding largest;
        for (const DynamicDim& d : dims_)
            largest[d.name] = d.max;
        if (largest == base_) return;
        std::optional<Graph> built;
        try {
            built = built_at(largest);
        } catch (const Failure& f) {
            if (!does_not_hold_there(f)) throw;
            // Where the load failed (the model, a tensor's dim) stays; the message starts with
            // the binding.
            throw Failure(
                f.code(), f.where(),
                fmt::format("the iterations go past what the model holds: {}", f.message()));
        }
        check_shapes_at(largest, *built, declared);
    }

    // Every dimension moved at once, each by another step: the axes marked must give exactly
    // the shapes the builder gives there (a product of dimensions seen at 1 would not). Each
    // moves as its own probe did; where the model does not hold there, every dimension that can
    // goes below its value (a GPT-2 at seq=126 has positions for one step up, not three).
    void check_at_other_values(const std::vector<DynamicDim>& declared) const {
        DimBinding moved = other_values(false);
        std::optional<Graph> built;
        try {
            built = built_at(moved);
        } catch (const Failure& f) {
            const DimBinding below = other_values(true);
            if (!does_not_hold_there(f) || below == moved) throw;
            built = built_if_it_holds(below);
            if (!built) throw;
            moved = below;
        }
        check_shapes_at(moved, *built, declared);
    }

  private:
    // The builder's shapes at `moved` (`built`) against the graph's axes bound there.
    void check_shapes_at(const DimBinding& moved, const Graph& built,
                         const std::vector<DynamicDim>& declared) const {
        Graph bound = g_;
        bound.dims = declared;
        for (DynamicDim& d : bound.dims) {
            d.value = moved.at(d.name);
            d.min = 1;
            d.max = std::max(d.max, d.value);
        }
        try {
            finalize_graph(bound);
        } catch (const Failure& f) {
            refuse(
                fmt::format("at {} the model does not hold: {}", binding_text(moved), f.message()));
        }
        if (const std::string what = other_shapes(bound, built, moved); !what.empty())
            refuse(what + ": an axis follows them other than as a product");
    }

    // The model built with dimension `dim` moved alone. Where it does not hold above the value
    // (a GPT-2 at its 128 positions) the probe goes one below, and `moved` says so; where it
    // holds at neither, it is refused (refuse_moved_alone).
    Graph built_alone_at(DimBinding& moved, uint32_t dim) {
        try {
            return built_at(moved);
        } catch (const Failure& f) {
            if (!does_not_hold_there(f)) throw;
            if (std::optional<Graph> there = built_below(moved, dim)) return std::move(*there);
            refuse_moved_alone(moved, dim, f);
        }
    }

    // The model built with `dim` one below its value, where `moved` went above it and a probe
    // may go below; `moved` and the dimension's direction then say so.
    std::optional<Graph> built_below(DimBinding& moved, uint32_t dim) {
        const std::string& name = dims_[dim].name;
        const std::optional<int64_t> under = value_below(dims_[dim].value, 1);
        if (!under || moved.at(name) < dims_[dim].value) return std::nullopt;
        DimBinding below = base_;
        below[name] = *under;
        std::optional<Graph> there = built_if_it_holds(below);
        if (there) {
            moved = std::move(below);
            down_[dim] = true;
        }
        return there;
    }

    // Why the model does not hold with `dim` moved alone (to `moved`, failing with `f`): as tied
    // to dimensions of the same value it holds with when they move along (x[N] + y[M] needs
    // N = M), which iterations cannot keep; else naming where it failed (a Squeeze needs its
    // axis at 1, or the loader could not infer shapes there).
    [[noreturn]] void refuse_moved_alone(const DimBinding& moved, uint32_t dim,
                                         const Failure& f) const {
        const std::string& name = dims_[dim].name;
        std::vector<std::string> along;
        for (const DynamicDim& d : dims_)
            if (d.name != name && d.value == dims_[dim].value) along.push_back(d.name);
        // Most ties are one other dimension (x[N] + y[M]): named exactly when one is.
        for (const std::string& other : along)
            if (builds_with(moved, name, {other}))
                refuse(fmt::format("{} must stay equal to {}: the model holds with them moved "
                                   "together, not with {} moved alone ({})",
                                   name, other, name, f.message()));
        if (!along.empty() && builds_with(moved, name, along)) {
            // Those it also holds without are free; what stays may hold ties of its own.
            for (size_t k = along.size(); k-- > 0;) {
                std::vector<std::string> fewer = along;
                fewer.erase(fewer.begin() + ptrdiff_t(k));
                if (builds_with(moved, name, fewer)) along = std::move(fewer);
            }
            refuse(fmt::format("{} is tied to some of {}: the model holds with them all moved "
                               "together, not with {} moved alone ({})",
                               name, fmt::join(along, ", "), name, f.message()));
        }
        refuse(fmt::format("{} cannot move on its own from {}: {}", name, binding_text(base_),
                           f.message()));
    }

    // Each dimension moved by its own step (its index + 2): below its value where its probe
    // went below or, with `all_below`, wherever a probe may go below. Below, a step that passes
    // the lowest value a probe takes is cut to one, so a dimension whose probe went below never
    // goes above, where the model does not hold.
    DimBinding other_values(bool all_below) const {
        DimBinding b = base_;
        for (uint32_t i = 0; i < dims_.size(); ++i) {
            const int64_t value = dims_[i].value, step = int64_t(i) + 2;
            std::optional<int64_t> under = value_below(value, step);
            if (!under) under = value_below(value, 1);
            b[dims_[i].name] = under && (all_below || down_[i]) ? *under : moved_value(value, step);
        }
        return b;
    }

    // Whether the model holds, as built at the base values, with `along` moved as `name` is.
    bool builds_with(DimBinding moved, const std::string& name,
                     const std::vector<std::string>& along) const {
        for (const std::string& other : along)
            moved[other] = moved.at(name);
        if (along.empty()) return false; // moved alone: known not to
        return built_if_it_holds(moved).has_value();
    }

    std::optional<Graph> built_if_it_holds(const DimBinding& b) const {
        try {
            return built_at(b);
        } catch (const Failure&) {
            return std::nullopt;
        }
    }

    // A load that failed because the model does not hold at the binding, which other values may
    // avoid; not one refused for what it built there, nor one that failed otherwise (I/O).
    static bool does_not_hold_there(const Failure& f) {
        return f.code() == FailureCode::InvalidIrShapes && !f.message().starts_with(kRefusal);
    }

    bool followed(uint32_t dim) const {
        return std::any_of(g_.tensors.begin(), g_.tensors.end(), [&](const Tensor& t) {
            return std::any_of(t.shape_dims.begin(), t.shape_dims.end(), [&](const AxisDims& a) {
                return std::find(a.dims.begin(), a.dims.end(), dim) != a.dims.end();
            });
        });
    }

    Graph built_at(const DimBinding& b) const {
        Graph other = build_at_(b);
        if (const std::string what = other_model(g_, base_, other, b); !what.empty())
            refuse(what + "; start from other values");
        return other;
    }

    // An axis that moves with `dim` alone must scale as it does: at value v it is v times the
    // rest, which the other dimensions (and a factor) make and which stays while only `dim`
    // moves. N, 4*N and N*S do; N+4 and N*N do not.
    void mark_tensor(size_t t, const std::vector<int64_t>& there, uint32_t dim,
                     const DimBinding& moved) {
        Tensor& x = g_.tensors[t];
        const DynamicDim& d = dims_[dim];
        const int64_t to = moved.at(d.name);
        for (size_t k = 0; k < x.shape.size(); ++k) {
            if (x.shape[k] == there[k]) continue;
            int64_t scaled = 0;
            if (x.shape[k] % d.value != 0 ||
                __builtin_mul_overflow(x.shape[k] / d.value, to, &scaled) || scaled != there[k])
                refuse(fmt::format("axis {} of tensor '{}' is {} at {} and {} at {}: it follows {} "
                                   "other than as a factor (as N, 4*N or N*S do)",
                                   k, x.id, x.shape[k], binding_text(base_), there[k],
                                   binding_text(moved), d.name));
            x.shape_dims.resize(x.shape.size());
            x.shape_dims[k].dims.push_back(dim);
        }
    }

    // What the axis's dimensions leave at the base values is its factor; each divides the axis
    // alone, but their product may not (an axis of N+S-2 at N=S=2 scales with each).
    void set_factor(Tensor& t, size_t k) const {
        AxisDims& axis = t.shape_dims[k];
        int64_t product = 1;
        std::vector<std::string> names;
        bool divides = true;
        for (uint32_t d : axis.dims) {
            names.push_back(dims_[d].name);
            divides = divides && !__builtin_mul_overflow(product, dims_[d].value, &product);
        }
        if (!divides || t.shape[k] % product != 0)
            refuse(fmt::format("axis {} of tensor '{}' is {} at {}: it scales with each of {}, "
                               "but is not a multiple of their product{}",
                               k, t.id, t.shape[k], binding_text(base_), fmt::join(names, ", "),
                               divides ? "" : " (which passes 2^63 - 1)"));
        axis.factor = t.shape[k] / product;
    }

    static constexpr std::string_view kRefusal = "the dimensions cannot vary over iterations: ";

    [[noreturn]] void refuse(const std::string& why) const {
        fail(FailureCode::InvalidIrShapes, where_, fmt::format("{}{}", kRefusal, why));
    }

    Graph& g_;
    const std::vector<DynamicDim>& dims_;
    const BuildAtBinding& build_at_;
    const std::string& where_;
    DimBinding base_;
    // Per dimension: its probes go below its value, as the model does not hold above it.
    std::vector<bool> down_ = std::vector<bool>(dims_.size(), false);
};

} // namespace

void make_dims_from_probes(Graph& g, std::vector<DynamicDim> dims, ReplanPolicy policy,
                           const BuildAtBinding& build_at, const std::string& where) {
    std::sort(dims.begin(), dims.end(),
              [](const DynamicDim& a, const DynamicDim& b) { return a.name < b.name; });
    Prober prober(g, dims, build_at, where);
    prober.mark_axes();
    prober.check_at_other_values(dims);
    prober.check_at_largest(dims);
    g.dims = std::move(dims);
    g.replan_policy = policy;
    finalize_graph(g);
    check_envelope_corners(g);
}

namespace {

constexpr std::string_view kBetweenProbes =
    "an axis follows its dimensions otherwise between the values the model was probed at";

// The model built at `b` for a check of a run at `where`: a load that fails there is placed
// at the run's step, naming what failed.
Graph built_for_check(const BuildAtBinding& build_at, const DimBinding& b,
                      const std::string& where) {
    try {
        return build_at(b);
    } catch (const Failure& f) {
        throw Failure(f.code(), where, fmt::format("{}: {}", f.where(), f.message()));
    }
}

// What `g` (a plan's graph) counts on for tensor t that the model built elsewhere does not do:
// the same role, and every byte sharing the plan makes (the model may share more, as an in-place
// write the loader makes only where two sizes are equal, which the plan's own buffers hold).
std::string sharing_lost(const Graph& g, const Tensor& t, const Graph& built, const Tensor& there) {
    if (there.role != t.role)
        return fmt::format("role {} there, {} in the plan", role_name(there.role),
                           role_name(t.role));
    const auto id = [](const Graph& in, TensorIndex i) {
        return i == kNone ? std::string_view() : std::string_view(in.tensors[i].id);
    };
    if ((t.view && (!there.view || id(g, t.view->base) != id(built, there.view->base))) ||
        (t.in_place_of != kNone && id(g, t.in_place_of) != id(built, there.in_place_of)) ||
        (!t.alias_group.empty() && there.alias_group != t.alias_group))
        return "the plan shares its bytes with another tensor, and the model there does not";
    return {};
}

// The tensors of `built` in the order of `g`'s, matched by id (a binding may fold a shape
// computation a round later, which changes the order): the same tensors, each as the plan
// counts on it (sharing_lost).
std::vector<const Tensor*> matched(const Graph& g, const Graph& built, const std::string& prefix,
                                   const std::string& where) {
    std::unordered_map<std::string_view, const Tensor*> by_id;
    for (const Tensor& t : built.tensors)
        by_id.emplace(t.id, &t);
    std::vector<const Tensor*> out;
    for (const Tensor& t : g.tensors) {
        const auto it = by_id.find(t.id);
        if (it == by_id.end())
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("{}it has no tensor '{}'", prefix, t.id));
        if (const std::string why = sharing_lost(g, t, built, *it->second); !why.empty())
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("{}tensor '{}' is built otherwise: {}", prefix, t.id, why));
        out.push_back(it->second);
    }
    if (built.tensors.size() != g.tensors.size())
        fail(FailureCode::InvalidIrShapes, where,
             fmt::format("{}it has {} tensors, the plan {}", prefix, built.tensors.size(),
                         g.tensors.size()));
    return out;
}

} // namespace

void check_built_at(const Graph& bound, const BuildAtBinding& build_at, const std::string& where) {
    const DimBinding b = binding_of(bound);
    const Graph built = built_for_check(build_at, b, where);
    const std::string prefix =
        fmt::format("checking the plan at {} against the model loaded there: ", binding_text(b));
    const std::vector<const Tensor*> there = matched(bound, built, prefix, where);
    // The first tensor the axes make too small, else the first they make otherwise.
    const size_t n = bound.tensors.size();
    size_t pick = n;
    for (size_t t = 0; t < n; ++t) {
        if (bound.tensors[t].shape == there[t]->shape) continue;
        if (pick == n) pick = t;
        if (there[t]->bytes > bound.tensors[t].bytes) {
            pick = t;
            break;
        }
    }
    if (pick != n)
        fail(FailureCode::InvalidIrShapes, where,
             fmt::format("{}tensor '{}' is {} there, where its axes that follow dimensions say "
                         "{}: {}",
                         prefix, bound.tensors[pick].id, shape_text(there[pick]->shape),
                         shape_text(bound.tensors[pick].shape), kBetweenProbes));
}

void check_fits_built_at(const Graph& planned, const DimBinding& at, const BuildAtBinding& build_at,
                         const std::string& where) {
    const Graph built = built_for_check(build_at, at, where);
    const std::string prefix = fmt::format("checking the iteration at {} against the model "
                                           "loaded there: ",
                                           binding_text(at));
    const std::vector<const Tensor*> there = matched(planned, built, prefix, where);
    for (size_t t = 0; t < planned.tensors.size(); ++t) {
        const Tensor& need = *there[t];
        const Tensor& held = planned.tensors[t];
        if (need.bytes > held.bytes)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("{}tensor '{}' is {} ({} bytes) there, more than the plan made at {} "
                             "holds ({}, {} bytes): {}",
                             prefix, need.id, shape_text(need.shape), need.bytes,
                             binding_text(planned), shape_text(held.shape), held.bytes,
                             kBetweenProbes));
    }
}

} // namespace tmmu
