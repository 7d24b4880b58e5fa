#include "core/progress.h"

#include "core/failure.h"

namespace tmmu {

void Progress::check_cancel(std::string_view stage) const {
    if (cancelled()) fail(FailureCode::Cancelled, std::string(stage), "cancelled by the caller");
}

Progress Progress::part(double from, double to) const {
    Progress p{nullptr, cancel_flag};
    if (on_progress)
        p.on_progress = [from, to, whole = on_progress](double fraction, std::string_view stage) {
            whole(from + (to - from) * fraction, stage);
        };
    return p;
}

} // namespace tmmu
