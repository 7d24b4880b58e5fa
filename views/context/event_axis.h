#pragma once
// What the context's cursor walks over: a plan's schedule steps (or a CSV problem's time units)
// today, a runtime's instructions or a token engine's events next. Every event happens at one
// plan time unit, the x of every timeline, and event times never decrease, so a time maps back
// to an event by binary search.
#include <QString>

#include <cstdint>
#include <vector>

namespace tmmu::views {

class EventAxis {
  public:
    EventAxis() = default;
    // count events, event i at plan time i.
    EventAxis(QString label, uint64_t count);
    // One event per entry, at that plan time; times must not decrease.
    EventAxis(QString label, std::vector<uint64_t> timeOfEvent);

    // Singular noun for one event ("step", "time", "instruction", "event").
    const QString& label() const { return label_; }
    uint64_t count() const { return count_; }
    // Plan time of event (clamped to the last event; 0 on an empty axis).
    uint64_t timeOf(uint64_t event) const;
    // The first event at plan time t, else the last one before t, else event 0: what a click
    // at time t moves the cursor to.
    uint64_t eventAt(uint64_t t) const;

  private:
    QString label_;
    uint64_t count_ = 0;
    std::vector<uint64_t> times_; // empty: event i is at time i
};

} // namespace tmmu::views
