#include "lazy/kernels.h"

#include "core/failure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tmmu::lazy {
namespace {

// Strides that read `in` (broadcast into `out`'s shape) at out's coordinates: 0 along the
// dimensions `in` broadcasts over.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
    std::vector<int64_t> s(out.size(), 0);
    const std::vector<int64_t> own = contiguous_strides(in);
    const size_t lead = out.size() - in.size();
    for (size_t i = 0; i < in.size(); ++i)
        if (in[i] != 1) s[lead + i] = own[i];
    return s;
}

// Calls f(out_index, in_index) for every element of `shape`, in order, with in_index walking
// `strides` from `offset`.
template <class F>
void walk(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset, F&& f) {
    const int64_t n = element_count(shape);
    std::vector<int64_t> coord(shape.size(), 0);
    int64_t in = offset;
    for (int64_t i = 0; i < n; ++i) {
        f(i, in);
        for (size_t d = shape.size(); d-- > 0;) {
            in += strides[d];
            if (++coord[d] < shape[d]) break;
            in -= strides[d] * shape[d];
            coord[d] = 0;
        }
    }
}

constexpr float kInvSqrt2 = 0.70710678118654752f;   // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.39894228040143268f; // 1 / sqrt(2 pi)

float unary(Op op, float x) {
    switch (op) {
    case Op::Neg:
        return -x;
    case Op::Exp:
        return std::exp(x);
    case Op::Log:
        return std::log(x);
    case Op::Relu:
        return x > 0.0f ? x : 0.0f;
    case Op::Sigmoid:
        return 1.0f / (1.0f + std::exp(-x));
    case Op::Tanh:
        return std::tanh(x);
    case Op::Sqrt:
        return std::sqrt(x);
    case Op::Abs:
        return std::fabs(x);
    case Op::Rsqrt:
        return 1.0f / std::sqrt(x);
    case Op::Sin:
        return std::sin(x);
    case Op::Cos:
        return std::cos(x);
    case Op::Floor:
        return std::floor(x);
    case Op::Ceil:
        return std::ceil(x);
    case Op::Round:
        return std::nearbyint(x); // the default rounding mode: to nearest, ties to even
    case Op::Gelu:
        return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
    case Op::Silu:
        return x / (1.0f + std::exp(-x));
    case Op::Step:
        return x > 0.0f ? 1.0f : 0.0f;
    case Op::GeluGrad:
        return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
    default:
        return x;
    }
}

float binary(Op op, float a, float b) {
    switch (op) {
    case Op::Add:
        return a + b;
    case Op::Sub:
        return a - b;
    case Op::Mul:
        return a * b;
    case Op::Div:
        return a / b;
    case Op::Maximum:
        return a > b ? a : b;
    case Op::Minimum:
        return a < b ? a : b;
    case Op::Pow:
        return std::pow(a, b);
    case Op::Eq:
        return a == b ? 1.0f : 0.0f;
    case Op::Ne:
        return a != b ? 1.0f : 0.0f;
    case Op::Lt:
        return a < b ? 1.0f : 0.0f;
    case Op::Le:
        return a <= b ? 1.0f : 0.0f;
    case Op::Gt:
        return a > b ? 1.0f : 0.0f;
    case Op::Ge:
        return a >= b ? 1.0f : 0.0f;
    case Op::PowGradBase:
        return b == 0.0f ? 0.0f : b * std::pow(a, b - 1.0f);
    case Op::PowGradExponent:
        return a == 0.0f && b >= 0.0f ? 0.0f : std::pow(a, b) * std::log(a);
    default:
        return a;
    }
}

void matmul(std::span<const float> a, std::span<const float> b, const Shape& as, const Shape& bs,
            std::span<float> out) {
    const int64_t m = as[0], k = as[1], n = bs[1];
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; ++p)
                acc += static_cast<double>(a[static_cast<size_t>(i * k + p)]) *
                       b[static_cast<size_t>(p * n + j)];
            out[static_cast<size_t>(i * n + j)] = static_cast<float>(acc);
        }
}

// Sums `in` into `target` (a shape `in` broadcasts from), scaled by `scale`.
void sum_into(std::span<const float> in, const Shape& in_shape, const Shape& target, double scale,
              std::span<float> out) {
    std::vector<double> acc(out.size(), 0.0);
    walk(in_shape, broadcast_strides(target, in_shape), 0,
         [&](int64_t i, int64_t o) { acc[static_cast<size_t>(o)] += in[static_cast<size_t>(i)]; });
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<float>(acc[i] * scale);
}

} // namespace

float elementwise(Op op, float a, float b) {
    return is_binary(op) ? binary(op, a, b) : unary(op, a);
}

std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
    std::vector<int64_t> index(static_cast<size_t>(element_count(out)));
    walk(out, broadcast_strides(in, out), 0,
         [&](int64_t i, int64_t j) { index[static_cast<size_t>(i)] = j; });
    return index;
}

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
    std::vector<bool> reduce(in.size(), dims.empty());
    for (int64_t d : dims) {
        const int64_t rank = static_cast<int64_t>(in.size());
        const int64_t dd = d < 0 ? d + rank : d;
        if (dd < 0 || dd >= rank)
            fail(FailureCode::InvalidArgument, "reduce",
                 fmt::format("dimension {} out of range for shape {}", d, shape_text(in)));
        reduce[static_cast<size_t>(dd)] = true;
    }
    Shape out;
    for (size_t i = 0; i < in.size(); ++i) {
        if (!reduce[i])
            out.push_back(in[i]);
        else if (keepdim)
            out.push_back(1);
    }
    return out;
}

void run_kernel(const Node& node, std::span<const KernelInput> inputs, const Shape& out_shape,
                std::span<float> out) {
    const auto in = [&](size_t i) { return inputs[i].data; };
    const auto shape = [&](size_t i) -> const Shape& { return *inputs[i].shape; };
    if (is_binary(node.op)) {
        const std::vector<int64_t> ia = broadcast_index(shape(0), out_shape);
        const std::vector<int64_t> ib = broadcast_index(shape(1), out_shape);
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = binary(node.op, in(0)[static_cast<size_t>(ia[i])],
                            in(1)[static_cast<size_t>(ib[i])]);
        return;
    }
    if (is_elementwise(node.op)) {
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = unary(node.op, in(0)[i]);
        return;
    }
    switch (node.op) {
    case Op::Constant:
        std::copy(node.data.begin(), node.data.end(), out.begin());
        return;
    case Op::Copy:
        std::copy(in(0).begin(), in(0).end(), out.begin());
        return;
    case Op::RandUniform:
        fill_uniform(node.rng, out);
        return;
    case Op::MatMul:
        matmul(in(0), in(1), shape(0), shape(1), out);
        return;
    case Op::Sum:
    case Op::Mean: {
        const Shape kept = reduced_shape(shape(0), node.dims, true);
        const double n =
            static_cast<double>(element_count(shape(0))) / static_cast<double>(element_count(kept));
        sum_into(in(0), shape(0), kept, node.op == Op::Mean ? 1.0 / n : 1.0, out);
        return;
    }
    case Op::SumTo:
        sum_into(in(0), shape(0), out_shape, 1.0, out);
        return;
    case Op::Expand:
        walk(out_shape, broadcast_strides(shape(0), out_shape), 0, [&](int64_t i, int64_t j) {
            out[static_cast<size_t>(i)] = in(0)[static_cast<size_t>(j)];
        });
        return;
    case Op::View:
        walk(node.view.shape, node.view.strides, node.view.offset, [&](int64_t i, int64_t j) {
            out[static_cast<size_t>(i)] = in(0)[static_cast<size_t>(j)];
        });
        return;
    case Op::StridedScatter:
        std::copy(in(0).begin(), in(0).end(), out.begin());
        walk(node.view.shape, node.view.strides, node.view.offset, [&](int64_t i, int64_t j) {
            out[static_cast<size_t>(j)] = in(1)[static_cast<size_t>(i)];
        });
        return;
    default:
        fail(FailureCode::InvalidArgument, node.key.text(),
             fmt::format("{} is not a kernel", op_name(node.op)));
    }
}

} // namespace tmmu::lazy
