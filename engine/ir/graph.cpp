#include "ir/graph.h"

#include <array>

namespace tmmu {
namespace {

constexpr std::array<std::string_view, kRoleCount> kRoleNames{
    "parameter", "input", "output", "activation", "gradient", "optimizer_state", "workspace"};
constexpr std::array<std::string_view, 3> kPhaseNames{"forward", "backward", "optimizer"};
constexpr std::array<std::string_view, 2> kReplanPolicyNames{"ABORT", "REPLAN_AT_SAFEPOINT"};

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
    for (size_t i = 0; i < N; ++i)
        if (names[i] == s) return static_cast<Enum>(i);
    return std::nullopt;
}

} // namespace

std::string_view role_name(Role r) {
    return kRoleNames[static_cast<size_t>(r)];
}
std::optional<Role> parse_role(std::string_view s) {
    return parse_name<Role>(kRoleNames, s);
}
std::string_view phase_name(Phase p) {
    return kPhaseNames[static_cast<size_t>(p)];
}
std::optional<Phase> parse_phase(std::string_view s) {
    return parse_name<Phase>(kPhaseNames, s);
}

std::string_view replan_policy_name(ReplanPolicy p) {
    const auto k = static_cast<size_t>(p);
    return k < kReplanPolicyNames.size() ? kReplanPolicyNames[k] : "UNKNOWN";
}
std::optional<ReplanPolicy> parse_replan_policy(std::string_view s) {
    return parse_name<ReplanPolicy>(kReplanPolicyNames, s);
}

TensorIndex Graph::find_tensor(std::string_view id) const {
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].id == id) return static_cast<TensorIndex>(i);
    return kNone;
}

uint32_t Graph::find_dim(std::string_view name) const {
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i].name == name) return static_cast<uint32_t>(i);
    return kNone;
}

} // namespace tmmu
