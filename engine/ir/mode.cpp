#include "ir/mode.h"

#include <array>

namespace tmmu {
namespace {

constexpr std::array<std::string_view, 3> kModeNames{"inference", "forward", "training"};

} // namespace

std::string_view mode_name(Mode m) {
    return kModeNames[static_cast<size_t>(m)];
}

std::string_view mode_name(const std::optional<Mode>& m) {
    return m ? mode_name(*m) : "none";
}

std::optional<Mode> parse_mode(std::string_view s) {
    if (s == "backward" || s == "train") return Mode::Training;
    for (size_t i = 0; i < kModeNames.size(); ++i)
        if (kModeNames[i] == s) return static_cast<Mode>(i);
    return std::nullopt;
}

} // namespace tmmu
