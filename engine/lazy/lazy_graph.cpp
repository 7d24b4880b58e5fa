#include "lazy/lazy_graph.h"

#include <fmt/format.h>

namespace tmmu::lazy {

std::string_view op_name(Op op) {
    switch (op) {
    case Op::Constant:
        return "constant";
    case Op::Neg:
        return "neg";
    case Op::Exp:
        return "exp";
    case Op::Log:
        return "log";
    case Op::Relu:
        return "relu";
    case Op::Sigmoid:
        return "sigmoid";
    case Op::Tanh:
        return "tanh";
    case Op::Sqrt:
        return "sqrt";
    case Op::Abs:
        return "abs";
    case Op::Rsqrt:
        return "rsqrt";
    case Op::Sin:
        return "sin";
    case Op::Cos:
        return "cos";
    case Op::Floor:
        return "floor";
    case Op::Ceil:
        return "ceil";
    case Op::Round:
        return "round";
    case Op::Gelu:
        return "gelu";
    case Op::Silu:
        return "silu";
    case Op::Step:
        return "step";
    case Op::GeluGrad:
        return "gelu_grad";
    case Op::Add:
        return "add";
    case Op::Sub:
        return "sub";
    case Op::Mul:
        return "mul";
    case Op::Div:
        return "div";
    case Op::Maximum:
        return "maximum";
    case Op::Minimum:
        return "minimum";
    case Op::Pow:
        return "pow";
    case Op::Eq:
        return "eq";
    case Op::Ne:
        return "ne";
    case Op::Lt:
        return "lt";
    case Op::Le:
        return "le";
    case Op::Gt:
        return "gt";
    case Op::Ge:
        return "ge";
    case Op::PowGradBase:
        return "pow_grad_base";
    case Op::PowGradExponent:
        return "pow_grad_exponent";
    case Op::MatMul:
        return "matmul";
    case Op::Sum:
        return "sum";
    case Op::Mean:
        return "mean";
    case Op::SumTo:
        return "sum_to";
    case Op::Expand:
        return "expand";
    case Op::View:
        return "view";
    case Op::StridedScatter:
        return "strided_scatter";
    case Op::Copy:
        return "copy";
    case Op::RandUniform:
        return "rand_uniform";
    case Op::AfterAll:
        return "after_all";
    case Op::LocLoad:
        return "loc_load";
    case Op::LocStore:
        return "loc_store";
    case Op::BaseCommit:
        return "base_commit";
    case Op::LocInvalidate:
        return "loc_invalidate";
    case Op::PublishSave:
        return "publish_save";
    case Op::SavedCheck:
        return "saved_check";
    case Op::BackwardJob:
        return "backward_job";
    case Op::CompiledCall:
        return "compiled_call";
    }
    return "unknown";
}

bool is_effect(Op op) {
    return op >= Op::AfterAll;
}

bool is_elementwise(Op op) {
    return op >= Op::Neg && op <= Op::PowGradExponent;
}

bool is_binary(Op op) {
    return op >= Op::Add && op <= Op::PowGradExponent;
}

bool is_comparison(Op op) {
    return op >= Op::Eq && op <= Op::Ge;
}

std::optional<Op> public_elementwise_op(std::string_view name) {
    for (auto op = uint8_t(Op::Neg); op <= uint8_t(Op::Ge); ++op)
        if (Op(op) != Op::Step && Op(op) != Op::GeluGrad && op_name(Op(op)) == name) return Op(op);
    return std::nullopt;
}

std::string EventKey::text() const {
    if (!synthetic) return fmt::format("g{}:n{}", instance, node);
    return fmt::format("g{}:s{}/{}/{}", instance, node, tag, index);
}

} // namespace tmmu::lazy
