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
    case Op::Step:
        return "step";
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
    return op >= Op::Neg && op <= Op::Maximum;
}

std::string EventKey::text() const {
    if (!synthetic) return fmt::format("g{}:n{}", instance, node);
    return fmt::format("g{}:s{}/{}/{}", instance, node, tag, index);
}

} // namespace tmmu::lazy
