#include "core/progress.h"

#include "core/failure.h"

namespace tmmu {

void Progress::check_cancel(std::string_view stage) const {
    if (cancelled()) fail(FailureCode::Cancelled, std::string(stage), "cancelled by the caller");
}

Progress Progress::part(double from, double to, std::string_view label) const {
    Progress p{nullptr, cancel_flag};
    if (on_progress)
        p.on_progress = [from, to, whole = on_progress,
                         label = std::string(label)](double fraction, std::string_view stage) {
            const double at = from + (to - from) * fraction;
            if (label.empty())
                whole(at, stage);
            else
                whole(at, label + ": " + std::string(stage));
        };
    return p;
}

} // namespace tmmu
