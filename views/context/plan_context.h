#pragma once
// The one "current step + current selection" context every panel follows (RenderDoc's current
// event). Panels read the plan from here, draw it, and report user picks back here; they never
// talk to each other directly.
#include "source/model_source.h"
#include "plan/plan.h"

#include <QObject>
#include <memory>
#include <unordered_map>

namespace tmmu::views {

enum class ColorMode { Role, Slot };

class PlanContext : public QObject {
    Q_OBJECT
  public:
    explicit PlanContext(QObject* parent = nullptr);

    // Replaces the shown plan. model may be null (a plan restored without its source). Resets
    // the step to 0 and keeps the selection when a tensor with the same id still exists.
    void setPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<const LoadedModel> model);
    const Plan* plan() const { return plan_.get(); }
    std::shared_ptr<const Plan> planPtr() const { return plan_; }
    const LoadedModel* model() const { return model_.get(); }

    // Time runs over [0, stepCount()): schedule steps for graphs, event times for CSV problems.
    uint64_t stepCount() const;
    uint64_t currentStep() const { return step_; }
    // Index into plan()->tensors, or -1.
    int selectedTensor() const { return selected_; }
    ColorMode colorMode() const { return colorMode_; }

    // Graph tensor behind a planned tensor (for shape, dtype, producer, consumers); kNone for
    // CSV problems or when no model is attached.
    TensorIndex graphTensor(int plannedIndex) const;
    // Planned tensor index by id, or -1.
    int findTensor(const std::string& id) const;
    // Indices of plan()->tensors live at step t (begin <= t < end). O(n) per call.
    std::vector<int> liveAt(uint64_t t) const;

  public slots:
    void setCurrentStep(uint64_t step); // clamped to [0, stepCount() - 1]
    void stepBy(int64_t delta);
    void selectTensor(int plannedIndex); // -1 clears
    void setColorMode(tmmu::views::ColorMode mode);

  signals:
    void planChanged();
    void currentStepChanged(uint64_t step);
    void selectionChanged(int plannedIndex);
    void colorModeChanged();

  private:
    std::shared_ptr<const Plan> plan_;
    std::shared_ptr<const LoadedModel> model_;
    std::unordered_map<std::string, int> indexOfId_;
    std::vector<TensorIndex> graphTensorOf_;
    uint64_t step_ = 0;
    int selected_ = -1;
    ColorMode colorMode_ = ColorMode::Role;
};

} // namespace tmmu::views
