#include "onnx/shape_folding.h"

#include "onnx/node_shapes.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

namespace tmmu::onnx {
namespace {

constexpr size_t kMaxFoldedElements = 1024; // shape tensors are tiny; data tensors are not folded
// A pass folds all it can (node_shapes.h closes shapes as it goes); a later one folds what only
// graph inference's data propagation could see. More than a few rounds means something loops.
constexpr int kMaxRounds = 16;

// What of a known value may differ between bindings: its values (a Shape of x[batch, seq]),
// its dims (a Slice up to the sequence length).
struct Variation {
    bool values = false;
    bool dims = false;
};

// A small integer tensor whose value is known at load time.
struct Known {
    int32_t elem = lib::TensorProto_DataType_INT64;
    std::vector<int64_t> dims;
    std::vector<int64_t> values;
    Variation varies;
};

// Which values a binding may change, for a load at one: the axes graph inference left open
// before any dimension was bound, and how values folded from them vary (later rounds read them
// back as initializers).
struct BindingDependence {
    OpenAxes open;
    std::unordered_map<std::string, Variation> folded;

    // Whether axes [begin, end) of `value` may differ between bindings: a value without a shape
    // before binding may.
    bool axes_vary(const std::string& value, int64_t begin, int64_t end) const {
        const auto it = open.find(value);
        if (it == open.end()) return true;
        const std::vector<bool>& axes = it->second;
        const auto last = std::min(end, int64_t(axes.size()));
        return std::find(axes.begin() + std::min(begin, last), axes.begin() + last, true) !=
               axes.begin() + last;
    }
};

// Ops whose inputs after the first set the result's dims (a Slice's ends, a Reshape's shape).
bool sized_by_later_inputs(const std::string& op) {
    return op == "Slice" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze";
}

bool is_integer(int32_t elem) {
    return elem == lib::TensorProto_DataType_INT64 || elem == lib::TensorProto_DataType_INT32;
}

// Shape computations compare and select too (torch's expand: Where(Equal(s, -1), 1, s)).
bool is_foldable(int32_t elem) {
    return is_integer(elem) || elem == lib::TensorProto_DataType_BOOL;
}

bool fits(int64_t v, int32_t elem) {
    return elem != lib::TensorProto_DataType_INT32 || (v >= INT32_MIN && v <= INT32_MAX);
}

size_t element_width(int32_t elem) {
    return elem == lib::TensorProto_DataType_INT64  ? 8
           : elem == lib::TensorProto_DataType_BOOL ? 1
                                                    : 4;
}

std::optional<Known> from_tensor(const lib::TensorProto& t) {
    if (!is_foldable(t.data_type()) || t.data_location() == lib::TensorProto_DataLocation_EXTERNAL)
        return std::nullopt;
    Known k;
    k.elem = t.data_type();
    k.dims.assign(t.dims().begin(), t.dims().end());
    size_t count = 1;
    for (int64_t d : k.dims)
        count *= size_t(std::max<int64_t>(d, 0));
    if (count > kMaxFoldedElements) return std::nullopt;
    if (t.has_raw_data()) {
        const size_t width = element_width(t.data_type());
        if (t.raw_data().size() != count * width) return std::nullopt;
        for (size_t i = 0; i < count; ++i) {
            int64_t v = 0;
            if (width == 8) {
                std::memcpy(&v, t.raw_data().data() + i * 8, 8);
            } else if (width == 4) {
                int32_t v32 = 0;
                std::memcpy(&v32, t.raw_data().data() + i * 4, 4);
                v = v32;
            } else {
                v = t.raw_data()[i] != 0;
            }
            k.values.push_back(v);
        }
    } else if (t.data_type() == lib::TensorProto_DataType_INT64) {
        k.values.assign(t.int64_data().begin(), t.int64_data().end());
    } else {
        k.values.assign(t.int32_data().begin(), t.int32_data().end());
    }
    if (k.values.size() != count) return std::nullopt;
    return k;
}

lib::TensorProto to_tensor(const Known& k, const std::string& name) {
    lib::TensorProto t;
    t.set_name(name);
    t.set_data_type(k.elem);
    for (int64_t d : k.dims)
        t.add_dims(d);
    for (int64_t v : k.values)
        if (k.elem == lib::TensorProto_DataType_INT64)
            t.add_int64_data(v);
        else
            t.add_int32_data(int32_t(v));
    return t;
}

const lib::AttributeProto* attr(const lib::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

int64_t attr_int(const lib::NodeProto& n, const char* name, int64_t fallback) {
    const auto* a = attr(n, name);
    return a ? a->i() : fallback;
}

std::optional<std::vector<int64_t>> attr_ints(const lib::NodeProto& n, const char* name) {
    const auto* a = attr(n, name);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Known vector_of(std::vector<int64_t> values) {
    Known k;
    k.dims = {int64_t(values.size())};
    k.values = std::move(values);
    return k;
}

Known scalar_of(int64_t v) {
    Known k;
    k.values = {v};
    return k;
}

int64_t wrap(int64_t i, int64_t n) {
    return i < 0 ? i + n : i;
}

class Folder {
  public:
    Folder(lib::GraphProto& g, int64_t opset, BindingDependence& dependence,
           const std::string& path)
        : g_(g), dependence_(dependence), shapes_(g, opset, path) {
        for (const auto& t : g.initializer())
            if (auto k = from_tensor(t)) {
                if (const auto it = dependence_.folded.find(t.name());
                    it != dependence_.folded.end())
                    k->varies = it->second;
                known_[t.name()] = *k;
            }
        for (const auto& o : g.output())
            outputs_.insert(o.name());
    }

    // One pass in node order (the checker guarantees a topological order).
    void run(std::map<std::string, int>& folded) {
        lib::GraphProto kept_nodes;
        for (lib::NodeProto& n : *g_.mutable_node()) {
            std::optional<Known> k = evaluate(n);
            if (k && n.output_size() == 1) known_[n.output(0)] = *k;
            // Empty results stay nodes (their value still feeds the chain): the library's data
            // propagation through Concat fails on an empty initializer ("axis must be in
            // [-rank, rank-1]").
            const bool foldable =
                k && n.output_size() == 1 && !outputs_.count(n.output(0)) && !k->values.empty();
            if (!foldable) {
                if (k) shapes_.add_value(to_tensor(*k, n.output(0)));
                shapes_.infer(n);
                *kept_nodes.add_node() = std::move(n);
                continue;
            }
            if (n.op_type() != "Constant") ++folded[n.op_type()];
            if (k->varies.values || k->varies.dims) dependence_.folded[n.output(0)] = k->varies;
            lib::TensorProto* value = g_.add_initializer();
            *value = to_tensor(*k, n.output(0));
            shapes_.add_constant(*value);
        }
        g_.mutable_node()->Swap(kept_nodes.mutable_node());
    }

    const NodeShapes& shapes() const { return shapes_; }

  private:
    const Known* in(const lib::NodeProto& n, int i) const {
        if (i >= n.input_size() || n.input(i).empty()) return nullptr;
        auto it = known_.find(n.input(i));
        return it == known_.end() ? nullptr : &it->second;
    }

    std::optional<Known> evaluate(const lib::NodeProto& n) const {
        if (!is_default_domain(n.domain())) return std::nullopt;
        static const std::unordered_map<std::string, std::optional<Known> (Folder::*)(
                                                         const lib::NodeProto&) const>
            ops = {{"Shape", &Folder::shape},
                   {"Size", &Folder::size},
                   {"Constant", &Folder::constant},
                   {"Gather", &Folder::gather},
                   {"Unsqueeze", &Folder::unsqueeze},
                   {"Squeeze", &Folder::squeeze},
                   {"Concat", &Folder::concat},
                   {"Slice", &Folder::slice},
                   {"Cast", &Folder::cast},
                   {"Identity", &Folder::identity},
                   {"Add", &Folder::arithmetic},
                   {"Sub", &Folder::arithmetic},
                   {"Mul", &Folder::arithmetic},
                   {"Div", &Folder::arithmetic},
                   {"Max", &Folder::arithmetic},
                   {"Min", &Folder::arithmetic},
                   {"Equal", &Folder::comparison},
                   {"Less", &Folder::comparison},
                   {"Greater", &Folder::comparison},
                   {"Not", &Folder::logical_not},
                   {"Where", &Folder::where},
                   {"Reshape", &Folder::reshape},
                   {"Neg", &Folder::neg},
                   {"ConstantOfShape", &Folder::constant_of_shape}};
        auto it = ops.find(n.op_type());
        if (it == ops.end()) return std::nullopt;
        std::optional<Known> out = (this->*(it->second))(n);
        if (out && n.op_type() != "Shape" && n.op_type() != "Size") // they read dims only
            out->varies = variation_from_inputs(n);
        return out;
    }

    // Values follow every input's values and dims; dims follow the inputs' dims and the values
    // of inputs that size the result.
    Variation variation_from_inputs(const lib::NodeProto& n) const {
        Variation v;
        const bool sized_by_values = sized_by_later_inputs(n.op_type());
        for (int i = 0; i < n.input_size(); ++i)
            if (const Known* k = in(n, i)) {
                v.values |= k->varies.values || k->varies.dims;
                v.dims |= k->varies.dims || (i > 0 && sized_by_values && k->varies.values);
            }
        return v;
    }

    // How a Shape of axes [begin, end) of `value` varies: its values with those axes (all of
    // them for a value inference gave no shape before binding, as it does after a Slice with
    // computed ends), its dims with a known value's dims. A rank no binding changes: shapes
    // computed from values have the length of what computes them.
    Variation shape_variation(const std::string& value, int64_t begin, int64_t end) const {
        if (const auto it = known_.find(value); it != known_.end())
            return {it->second.varies.dims, it->second.varies.dims};
        return {dependence_.axes_vary(value, begin, end), false};
    }

    std::optional<Known> shape(const lib::NodeProto& n) const {
        auto dims = shapes_.static_shape(n.input(0));
        if (!dims) return std::nullopt;
        const int64_t rank = int64_t(dims->size());
        const int64_t start = std::clamp(wrap(attr_int(n, "start", 0), rank), int64_t(0), rank);
        const int64_t end = std::clamp(wrap(attr_int(n, "end", rank), rank), start, rank);
        Known out = vector_of({dims->begin() + start, dims->begin() + end});
        out.varies = shape_variation(n.input(0), start, end);
        return out;
    }

    std::optional<Known> size(const lib::NodeProto& n) const {
        auto dims = shapes_.static_shape(n.input(0));
        if (!dims) return std::nullopt;
        int64_t count = 1;
        for (int64_t d : *dims)
            count *= d;
        Known out = scalar_of(count);
        out.varies = {shape_variation(n.input(0), 0, int64_t(dims->size())).values, false};
        return out;
    }

    std::optional<Known> constant(const lib::NodeProto& n) const {
        if (const auto* a = attr(n, "value"); a && a->has_t()) return from_tensor(a->t());
        if (const auto* a = attr(n, "value_int")) return scalar_of(a->i());
        if (auto v = attr_ints(n, "value_ints")) return vector_of(*v);
        return std::nullopt;
    }

    std::optional<Known> gather(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        const Known* idx = in(n, 1);
        if (!data || !idx || data->dims.size() != 1 || idx->dims.size() > 1) return std::nullopt;
        Known out = *idx;
        out.elem = data->elem;
        const int64_t count = int64_t(data->values.size());
        for (int64_t& v : out.values) {
            v = wrap(v, count);
            if (v < 0 || v >= count) return std::nullopt;
            v = data->values[size_t(v)];
        }
        return out;
    }

    // Unsqueeze/Squeeze take axes as an attribute before opset 13 and as input 1 after.
    std::optional<std::vector<int64_t>> axes(const lib::NodeProto& n) const {
        if (auto a = attr_ints(n, "axes")) return a;
        if (const Known* k = in(n, 1)) return k->values;
        return std::nullopt;
    }

    std::optional<Known> unsqueeze(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        auto ax = axes(n);
        if (!data || !ax) return std::nullopt;
        Known out = *data;
        const int64_t rank = int64_t(data->dims.size() + ax->size());
        std::vector<int64_t> sorted;
        for (int64_t a : *ax)
            sorted.push_back(wrap(a, rank));
        std::sort(sorted.begin(), sorted.end());
        for (int64_t a : sorted) {
            if (a < 0 || a > int64_t(out.dims.size())) return std::nullopt;
            out.dims.insert(out.dims.begin() + a, 1);
        }
        return out;
    }

    std::optional<Known> squeeze(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        if (!data) return std::nullopt;
        auto ax = axes(n);
        const int64_t rank = int64_t(data->dims.size());
        Known out = *data;
        out.dims.clear();
        for (int64_t i = 0; i < rank; ++i) {
            const bool listed = !ax || std::any_of(ax->begin(), ax->end(),
                                                   [&](int64_t a) { return wrap(a, rank) == i; });
            if (listed && data->dims[size_t(i)] == 1) continue;
            out.dims.push_back(data->dims[size_t(i)]);
        }
        return out;
    }

    std::optional<Known> concat(const lib::NodeProto& n) const {
        std::vector<int64_t> values;
        int32_t elem = lib::TensorProto_DataType_INT64;
        for (int i = 0; i < n.input_size(); ++i) {
            const Known* k = in(n, i);
            if (!k || k->dims.size() != 1) return std::nullopt;
            values.insert(values.end(), k->values.begin(), k->values.end());
            elem = k->elem;
        }
        Known out = vector_of(std::move(values));
        out.elem = elem;
        return out;
    }

    std::optional<Known> slice(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        if (!data || data->dims.size() != 1) return std::nullopt;
        std::optional<std::vector<int64_t>> starts = attr_ints(n, "starts");
        std::optional<std::vector<int64_t>> ends = attr_ints(n, "ends");
        int64_t step = 1;
        if (!starts) { // opset 10+: starts, ends, axes, steps are inputs
            const Known* s = in(n, 1);
            const Known* e = in(n, 2);
            const Known* st = in(n, 4);
            if (!s || !e || (n.input_size() > 4 && !n.input(4).empty() && !st)) return std::nullopt;
            starts = s->values;
            ends = e->values;
            if (st && st->values.size() == 1) step = st->values[0];
        }
        if (starts->size() != 1 || ends->size() != 1 || step == 0) return std::nullopt;
        const int64_t count = int64_t(data->values.size());
        std::vector<int64_t> values;
        if (step > 0) {
            const int64_t b = std::clamp(wrap((*starts)[0], count), int64_t(0), count);
            const int64_t e = std::clamp(wrap((*ends)[0], count), int64_t(0), count);
            for (int64_t i = b; i < e; i += step)
                values.push_back(data->values[size_t(i)]);
        } else {
            const int64_t b = std::clamp(wrap((*starts)[0], count), int64_t(-1), count - 1);
            const int64_t e = std::clamp(wrap((*ends)[0], count), int64_t(-1), count - 1);
            for (int64_t i = b; i > e; i += step)
                values.push_back(data->values[size_t(i)]);
        }
        Known out = vector_of(std::move(values));
        out.elem = data->elem;
        return out;
    }

    std::optional<Known> cast(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        const int64_t to = attr_int(n, "to", 0);
        if (!data || !is_foldable(int32_t(to))) return std::nullopt;
        Known out = *data;
        out.elem = int32_t(to);
        for (int64_t& v : out.values)
            if (out.elem == lib::TensorProto_DataType_BOOL)
                v = v != 0;
            else if (!fits(v, out.elem))
                return std::nullopt; // a wrapping cast is left to run
        return out;
    }

    std::optional<Known> neg(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        if (!data) return std::nullopt;
        Known out = *data;
        for (int64_t& v : out.values)
            v = -v;
        return out;
    }

    // Only an integer or bool fill is a shape computation (the default fill is a float 0), and
    // only one of a size no binding changes (ones of the rank, as torch's expand writes). One
    // sized by the data (torch.zeros(batch, seq), a mask of ones) is data: folded while small,
    // it would be a parameter at one binding and computed at another, which a run over
    // iterations refuses.
    std::optional<Known> constant_of_shape(const lib::NodeProto& n) const {
        const Known* shape = in(n, 0);
        const auto* value = attr(n, "value");
        if (!shape || shape->varies.values || !value || !value->has_t()) return std::nullopt;
        std::optional<Known> fill = from_tensor(value->t());
        if (!fill || fill->values.size() != 1) return std::nullopt;
        size_t count = 1;
        for (int64_t d : shape->values) {
            if (d < 0) return std::nullopt;
            count *= size_t(d);
            if (count > kMaxFoldedElements) return std::nullopt;
        }
        Known out;
        out.elem = fill->elem;
        out.dims = shape->values;
        out.values.assign(count, fill->values[0]);
        return out;
    }

    std::optional<Known> identity(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        return data ? std::optional<Known>(*data) : std::nullopt;
    }

    // Operands broadcast as shape computations use them: each has the widest one's dims, or one
    // element and no more axes (a scalar, or [1] against a vector). fn gets one value of each.
    template <typename Fn>
    std::optional<Known> elementwise(const lib::NodeProto& n, int32_t elem, Fn fn) const {
        std::vector<const Known*> operands;
        for (int i = 0; i < n.input_size(); ++i) {
            const Known* k = in(n, i);
            if (!k || k->values.empty()) return std::nullopt;
            operands.push_back(k);
        }
        if (operands.empty()) return std::nullopt;
        const Known* wide = operands[0];
        for (const Known* k : operands)
            if (std::pair(k->values.size(), k->dims.size()) >
                std::pair(wide->values.size(), wide->dims.size()))
                wide = k;
        for (const Known* k : operands)
            if (k->dims != wide->dims &&
                (k->values.size() != 1 || k->dims.size() > wide->dims.size()))
                return std::nullopt;
        Known out;
        out.elem = elem;
        out.dims = wide->dims;
        std::vector<int64_t> args(operands.size());
        for (size_t i = 0; i < wide->values.size(); ++i) {
            for (size_t k = 0; k < operands.size(); ++k)
                args[k] = operands[k]->values[operands[k]->values.size() == 1 ? 0 : i];
            const std::optional<int64_t> v = fn(args);
            if (!v || !fits(*v, elem)) return std::nullopt; // what overflows is left to run
            out.values.push_back(*v);
        }
        return out;
    }

    // Integer arithmetic of shape computations; division truncates, as runtimes' does. What
    // overflows is left to run (it is no shape).
    std::optional<Known> arithmetic(const lib::NodeProto& n) const {
        const std::string& op = n.op_type();
        const Known* first = in(n, 0);
        if (!first || (n.input_size() != 2 && op != "Max" && op != "Min")) return std::nullopt;
        return elementwise(n, first->elem, [&op](const std::vector<int64_t>& v) {
            std::optional<int64_t> out = int64_t(0);
            if (op == "Max") {
                out = *std::max_element(v.begin(), v.end());
            } else if (op == "Min") {
                out = *std::min_element(v.begin(), v.end());
            } else if (op == "Div") {
                if (v[1] == 0 || (v[0] == INT64_MIN && v[1] == -1)) return std::optional<int64_t>();
                out = v[0] / v[1];
            } else if (op == "Add"   ? __builtin_add_overflow(v[0], v[1], &*out)
                       : op == "Sub" ? __builtin_sub_overflow(v[0], v[1], &*out)
                                     : __builtin_mul_overflow(v[0], v[1], &*out)) {
                out.reset();
            }
            return out;
        });
    }

    std::optional<Known> comparison(const lib::NodeProto& n) const {
        if (n.input_size() != 2) return std::nullopt;
        const std::string& op = n.op_type();
        return elementwise(
            n, lib::TensorProto_DataType_BOOL,
            [&op](const std::vector<int64_t>& v) -> std::optional<int64_t> {
                return op == "Equal" ? v[0] == v[1] : op == "Less" ? v[0] < v[1] : v[0] > v[1];
            });
    }

    std::optional<Known> logical_not(const lib::NodeProto& n) const {
        return elementwise(
            n, lib::TensorProto_DataType_BOOL,
            [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0] == 0; });
    }

    std::optional<Known> where(const lib::NodeProto& n) const {
        const Known* chosen = in(n, 1);
        if (n.input_size() != 3 || !chosen) return std::nullopt;
        return elementwise(n, chosen->elem,
                           [](const std::vector<int64_t>& v) -> std::optional<int64_t> {
                               return v[0] != 0 ? v[1] : v[2];
                           });
    }

    // The same values under other dims: 0 copies the input's dim (unless allowzero), -1 takes
    // what the others leave.
    std::optional<Known> reshape(const lib::NodeProto& n) const {
        const Known* data = in(n, 0);
        const Known* shape = in(n, 1);
        if (!data || !shape || shape->dims.size() != 1) return std::nullopt;
        const bool allow_zero = attr_int(n, "allowzero", 0) != 0;
        Known out = *data;
        out.dims.clear();
        int64_t inferred = -1;
        int64_t known = 1;
        for (size_t i = 0; i < shape->values.size(); ++i) {
            int64_t d = shape->values[i];
            if (d == 0 && !allow_zero) {
                if (i >= data->dims.size()) return std::nullopt;
                d = data->dims[i];
            }
            if (d == -1) {
                if (inferred >= 0) return std::nullopt;
                inferred = int64_t(i);
            } else if (d < 0) {
                return std::nullopt;
            } else if (__builtin_mul_overflow(known, d, &known)) {
                return std::nullopt;
            }
            out.dims.push_back(d);
        }
        const int64_t count = int64_t(data->values.size());
        if (inferred >= 0) {
            if (known == 0 || count % known != 0) return std::nullopt;
            out.dims[size_t(inferred)] = count / known;
        } else if (known != count) {
            return std::nullopt;
        }
        return out;
    }

    lib::GraphProto& g_;
    BindingDependence& dependence_;
    std::unordered_map<std::string, Known> known_;
    NodeShapes shapes_;
    std::set<std::string> outputs_;
};

// Whether some value still lacks a fully static shape: only then is folding worth a pass.
bool has_open_shapes(const lib::GraphProto& g) {
    std::set<std::string> typed;
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
        for (const lib::ValueInfoProto& v : *list) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return true;
            for (const auto& d : v.type().tensor_type().shape().dim())
                if (!d.has_dim_value()) return true;
            typed.insert(v.name());
        }
    for (const auto& n : g.node())
        for (const auto& o : n.output())
            if (!o.empty() && !typed.count(o) && n.op_type() != "Constant") return true;
    return false;
}

} // namespace

std::map<std::string, int> fold_shape_chains(lib::ModelProto& m, const lib::GraphProto& unbound,
                                             const std::string& path) {
    int64_t opset = 0;
    for (const auto& o : m.opset_import())
        if (is_default_domain(o.domain())) opset = o.version();
    std::map<std::string, int> folded;
    if (!has_open_shapes(m.graph())) return folded;
    BindingDependence dependence{open_axes(unbound), {}};
    for (int round = 0; round < kMaxRounds && has_open_shapes(m.graph()); ++round) {
        const size_t before = size_t(m.graph().node_size());
        std::map<std::string, int> now;
        Folder folder(*m.mutable_graph(), opset, dependence, path);
        folder.run(now);
        // Constant nodes folded alongside a chain count as folded only when something else was.
        const bool changed = size_t(m.graph().node_size()) != before && !now.empty();
        if (changed) {
            for (const auto& [op, n] : now)
                folded[op] += n;
            m.mutable_graph()->clear_value_info();
            infer_shapes(m, path);
        }
        if (folder.shapes().close_open(*m.mutable_graph())) infer_shapes(m, path);
        if (!changed) break;
    }
    return folded;
}

} // namespace tmmu::onnx
