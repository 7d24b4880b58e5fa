#include "report/palette.h"

#include "plan/plan_summary.h"

#include <cmath>
#include <fmt/format.h>

namespace tmmu::sessions::report {

Rgb role_color(Role r) {
    switch (r) {
    case Role::Parameter:
        return kOkabeIto[4];
    case Role::Input:
        return kOkabeIto[1];
    case Role::Output:
        return kOkabeIto[6];
    case Role::Activation:
        return kOkabeIto[0];
    case Role::Gradient:
        return kOkabeIto[2];
    case Role::OptimizerState:
        return kOkabeIto[5];
    case Role::Workspace:
        return kOkabeIto[7];
    }
    return kOkabeIto[7];
}

Rgb slot_color(uint32_t slot) {
    return kOkabeIto[slot % kSlotColors];
}

Rgb arena_color(const Plan& plan, uint32_t arena) {
    const std::optional<Role> role = dominant_role(plan, arena);
    return role ? role_color(*role) : slot_color(arena);
}

std::string css_color(Rgb c) {
    return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

Rgb blend(Rgb a, Rgb b, double t) {
    auto mix = [t](uint8_t x, uint8_t y) {
        return uint8_t(std::lround(double(x) + (double(y) - double(x)) * t));
    };
    return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

} // namespace tmmu::sessions::report
