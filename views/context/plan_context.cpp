#include "context/plan_context.h"

#include <algorithm>

namespace tmmu::views {

PlanContext::PlanContext(QObject* parent) : QObject(parent) {}

void PlanContext::setPlan(std::shared_ptr<const Plan> plan,
                          std::shared_ptr<const LoadedModel> model) {
    std::string selectedId;
    if (plan_ && selected_ >= 0) selectedId = plan_->tensors[size_t(selected_)].id;
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
    step_ = 0;
    selected_ = selectedId.empty() ? -1 : findTensor(selectedId);
    emit planChanged();
    emit currentStepChanged(step_);
    emit selectionChanged(selected_);
}

uint64_t PlanContext::stepCount() const {
    if (!plan_) return 0;
    if (plan_->mode) return std::max<uint64_t>(plan_->execution_order.size(), 1);
    uint64_t end = 1;
    for (const auto& t : plan_->tensors) end = std::max<uint64_t>(end, t.life.end);
    return end;
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

void PlanContext::setCurrentStep(uint64_t step) {
    uint64_t count = stepCount();
    step = count == 0 ? 0 : std::min(step, count - 1);
    if (step == step_) return;
    step_ = step;
    emit currentStepChanged(step_);
}

void PlanContext::stepBy(int64_t delta) {
    int64_t target = int64_t(step_) + delta;
    setCurrentStep(target < 0 ? 0 : uint64_t(target));
}

void PlanContext::selectTensor(int plannedIndex) {
    if (!plan_ || plannedIndex < -1 || plannedIndex >= int(plan_->tensors.size())) plannedIndex = -1;
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
