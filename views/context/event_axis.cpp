#include "context/event_axis.h"

#include <algorithm>

namespace tmmu::views {

EventAxis::EventAxis(QString label, uint64_t count) : label_(std::move(label)), count_(count) {}

EventAxis::EventAxis(QString label, std::vector<uint64_t> timeOfEvent)
    : label_(std::move(label)), count_(timeOfEvent.size()), times_(std::move(timeOfEvent)) {
    Q_ASSERT(std::is_sorted(times_.begin(), times_.end()));
}

uint64_t EventAxis::timeOf(uint64_t event) const {
    if (count_ == 0) return 0;
    event = std::min(event, count_ - 1);
    return times_.empty() ? event : times_[event];
}

uint64_t EventAxis::eventAt(uint64_t t) const {
    if (count_ == 0) return 0;
    if (times_.empty()) return std::min(t, count_ - 1);
    auto it = std::lower_bound(times_.begin(), times_.end(), t);
    if (it != times_.end() && *it == t) return uint64_t(it - times_.begin());
    return it == times_.begin() ? 0 : uint64_t(it - times_.begin()) - 1;
}

} // namespace tmmu::views
