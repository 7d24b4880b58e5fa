#include "context/plan_context.h"

#include <algorithm>

namespace tmmu::views {

PlanContext::PlanContext(QObject* parent) : QObject(parent) {}

QString PlanContext::timeSpanText(uint64_t span) const {
    if (timeUnit_ == tr("time")) return tr("%1 time units").arg(span);
    // The units are nouns that take an s: step, event, instruction.
    return QStringLiteral("%1 %2").arg(span).arg(span == 1 ? timeUnit_ : timeUnit_ + 's');
}

void PlanContext::setPlan(std::shared_ptr<const Plan> plan,
                          std::shared_ptr<const LoadedModel> model, QString timeUnit) {
    std::string selectedId;
    if (plan_ && selected_ >= 0) selectedId = plan_->tensors[size_t(selected_)].id;
    // A re-plan of the same model keeps the reader's zoom; a zoom into another model's time
    // would show an arbitrary stretch of it.
    const bool sameModel = model && model_ && !model->path.empty() && model->path == model_->path;
    const TimeWindow before = timeWindow();
    const uint64_t time = currentTime();
    plan_ = std::move(plan);
    model_ = std::move(model);
    indexOfId_.clear();
    graphTensorOf_.clear();
    if (plan_) {
        indexOfId_.reserve(plan_->tensors.size());
        for (size_t i = 0; i < plan_->tensors.size(); ++i)
            indexOfId_.emplace(plan_->tensors[i].id, int(i));
        graphTensorOf_.assign(plan_->tensors.size(), kNone);
        if (model_ && model_->graph) {
            const Graph& g = *model_->graph;
            for (size_t t = 0; t < g.tensors.size(); ++t)
                if (auto it = indexOfId_.find(g.tensors[t].id); it != indexOfId_.end())
                    graphTensorOf_[size_t(it->second)] = TensorIndex(t);
        }
    }
    timeEnd_ = plan_ ? plan_time_end(*plan_) : 0;
    resetTime(sameModel && !time_.showsWholeDomain());
    if (timeUnit.isEmpty()) timeUnit = plan_ && plan_->mode ? tr("step") : tr("time");
    timeUnit_ = std::move(timeUnit);
    events_ = plan_ ? EventAxis(timeUnit_, timeEnd_) : EventAxis();
    event_ = sameModel ? events_.eventAt(time) : 0;
    selected_ = selectedId.empty() ? -1 : findTensor(selectedId);
    emit planChanged();
    emit eventAxisChanged();
    if (timeWindow() != before) emit timeWindowChanged(timeWindow());
    emit currentEventChanged(event_);
    emit selectionChanged(selected_);
}

void PlanContext::resetTime(bool keepWindow) {
    const TimeWindow old = timeWindow();
    const double end = double(std::max<uint64_t>(timeEnd_, 1));
    time_.setDomain(0, end); // shows the whole domain
    time_.setMinSpan(std::min(4.0, end));
    if (keepWindow) time_.setWindow(old.lo, old.span);
}

TensorIndex PlanContext::graphTensor(int plannedIndex) const {
    if (plannedIndex < 0 || size_t(plannedIndex) >= graphTensorOf_.size()) return kNone;
    return graphTensorOf_[size_t(plannedIndex)];
}

int PlanContext::findTensor(const std::string& id) const {
    auto it = indexOfId_.find(id);
    return it == indexOfId_.end() ? -1 : it->second;
}

std::vector<int> PlanContext::liveAt(uint64_t t) const {
    std::vector<int> live;
    if (!plan_) return live;
    for (size_t i = 0; i < plan_->tensors.size(); ++i) {
        const Lifetime& l = plan_->tensors[i].life;
        if (l.begin <= t && t < l.end) live.push_back(int(i));
    }
    return live;
}

void PlanContext::setEventAxis(EventAxis axis) {
    events_ = std::move(axis);
    event_ = eventCount() == 0 ? 0 : std::min(event_, eventCount() - 1);
    emit eventAxisChanged();
    // The same index may now sit at another plan time: every cursor redraws.
    emit currentEventChanged(event_);
}

void PlanContext::setCurrentEvent(uint64_t event) {
    uint64_t count = eventCount();
    event = count == 0 ? 0 : std::min(event, count - 1);
    if (event == event_) return;
    event_ = event;
    emit currentEventChanged(event_);
}

void PlanContext::stepBy(int64_t delta) {
    int64_t target = int64_t(event_) + delta;
    setCurrentEvent(target < 0 ? 0 : uint64_t(target));
}

void PlanContext::setTimeWindow(TimeWindow window) {
    const TimeWindow before = timeWindow();
    time_.setWindow(window.lo, window.span);
    if (timeWindow() != before) emit timeWindowChanged(timeWindow());
}

void PlanContext::resetTimeWindow() {
    setTimeWindow(timeDomain());
}

void PlanContext::selectTensor(int plannedIndex) {
    if (!plan_ || plannedIndex < -1 || plannedIndex >= int(plan_->tensors.size()))
        plannedIndex = -1;
    if (plannedIndex == selected_) return;
    selected_ = plannedIndex;
    emit selectionChanged(selected_);
}

void PlanContext::setColorMode(ColorMode mode) {
    if (mode == colorMode_) return;
    colorMode_ = mode;
    emit colorModeChanged();
}

} // namespace tmmu::views
