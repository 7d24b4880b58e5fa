#pragma once
// The one "current event + current selection + visible range" context every panel follows
// (RenderDoc's current event). Panels read the plan from here, draw it, and report user picks
// and zooms back here; they never talk to each other directly.
//
// Two coordinates: plan time (schedule steps for graphs, event times for CSV problems), which
// the timelines draw on x and the visible window is in; and the event axis the cursor walks,
// whose events each happen at one plan time. For plans the two coincide: event i is step i.
#include "context/event_axis.h"
#include "plan/plan.h"
#include "plan/plan_summary.h"
#include "source/model_source.h"
#include "timeline/time_axis.h"

#include <QObject>
#include <memory>
#include <unordered_map>

namespace tmmu::views {

enum class ColorMode { Role, Slot };

// The visible plan-time window [lo, lo + span). The span is stored, not derived from two ends,
// so pans keep it (and with it every view's scale and geometry cache) bit-identical.
struct TimeWindow {
    double lo = 0;
    double span = 1;
    double hi() const { return lo + span; }
    bool operator==(const TimeWindow&) const = default;
};

class PlanContext : public QObject {
    Q_OBJECT
  public:
    explicit PlanContext(QObject* parent = nullptr);

    // Replaces the shown plan. model may be null (a plan restored without its source). Resets
    // the event axis to the plan's steps and keeps the selection when a tensor with the same id
    // still exists. A re-plan of the same model (by path) keeps the cursor's time and the time
    // window, both clamped to the new plan's time (a window showing the whole plan goes on
    // showing the whole plan); any other plan starts at event 0 showing the whole plan. Emits
    // planChanged, eventAxisChanged, timeWindowChanged (when it moved), currentEventChanged and
    // selectionChanged, in that order. `timeUnit` names one unit of the plan's time for the
    // panels: empty for a model's schedule steps ("step") or a CSV problem's times ("time").
    void setPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<const LoadedModel> model,
                 QString timeUnit = {});
    const Plan* plan() const { return plan_.get(); }
    std::shared_ptr<const Plan> planPtr() const { return plan_; }
    const LoadedModel* model() const { return model_.get(); }

    // Plan time runs over [0, timeEnd()); 0 without a plan.
    uint64_t timeEnd() const { return timeEnd_; }
    // Singular noun for one unit of plan time: "step", "time", or what setPlan was given (a lazy
    // program's buffers live over trace events: "event").
    const QString& timeUnit() const { return timeUnit_; }
    // `span` units of plan time: "1 step", "68 events", "5 time units".
    QString timeSpanText(uint64_t span) const;
    // What the timelines can show: [0, max(timeEnd(), 1)).
    TimeWindow timeDomain() const {
        return {time_.domainLo(), time_.domainHi() - time_.domainLo()};
    }
    // Narrowest window zooms reach (a few steps, or the whole domain when it is narrower).
    double minTimeSpan() const { return time_.minSpan(); }
    TimeWindow timeWindow() const { return {time_.visibleLo(), time_.span()}; }

    const EventAxis& eventAxis() const { return events_; }
    uint64_t eventCount() const { return events_.count(); }
    uint64_t currentEvent() const { return event_; }
    // Plan time of the current event: where the timelines draw the cursor (the step itself for
    // plans).
    uint64_t currentTime() const { return events_.timeOf(event_); }
    // Index into plan()->tensors, or -1.
    int selectedTensor() const { return selected_; }
    ColorMode colorMode() const { return colorMode_; }

    // Graph tensor behind a planned tensor (for shape, dtype, producer, consumers); kNone for
    // CSV problems or when no model is attached.
    TensorIndex graphTensor(int plannedIndex) const;
    // Planned tensor index by id, or -1.
    int findTensor(const std::string& id) const;
    // Indices of plan()->tensors live at plan time t (begin <= t < end). O(n) per call.
    std::vector<int> liveAt(uint64_t t) const;

  public slots:
    // Lets another driver (a runtime's instructions) move the cursor over the same plan; the
    // cursor keeps its index, clamped. setPlan puts the plan's steps back.
    void setEventAxis(tmmu::views::EventAxis axis);
    void setCurrentEvent(uint64_t event); // clamped to [0, eventCount() - 1]
    void stepBy(int64_t delta);
    // Clamped to the domain and minTimeSpan(); emits only when the window moves.
    void setTimeWindow(tmmu::views::TimeWindow window);
    void resetTimeWindow();
    void selectTensor(int plannedIndex); // -1 clears
    void setColorMode(tmmu::views::ColorMode mode);

  signals:
    void planChanged();
    void eventAxisChanged();
    void currentEventChanged(uint64_t event);
    void timeWindowChanged(tmmu::views::TimeWindow window);
    void selectionChanged(int plannedIndex);
    void colorModeChanged();

  private:
    // Adopts the new plan's time domain; keepWindow clamps the old window into it.
    void resetTime(bool keepWindow);

    std::shared_ptr<const Plan> plan_;
    std::shared_ptr<const LoadedModel> model_;
    std::unordered_map<std::string, int> indexOfId_;
    std::vector<TensorIndex> graphTensorOf_;
    uint64_t timeEnd_ = 0;
    QString timeUnit_;
    EventAxis events_;
    uint64_t event_ = 0;
    // Domain, minimum span and visible window; its pixel length is unused.
    TimeAxis time_;
    int selected_ = -1;
    ColorMode colorMode_ = ColorMode::Role;
};

} // namespace tmmu::views
