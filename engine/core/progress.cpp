#include "core/progress.h"

#include "core/failure.h"

namespace tmmu {

void Progress::check_cancel(std::string_view stage) const {
    if (cancelled()) fail(FailureCode::Cancelled, std::string(stage), "cancelled by the caller");
}

} // namespace tmmu
