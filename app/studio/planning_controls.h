#pragma once
// The planning toolbar: mode, strategy, alignment, batch and sequence length (transformer
// configs), arena settings ("activations=8GiB:256, gradients=2GiB"), routes
// ("workspace=scratch"), Dims (an ONNX model's
// bindings, kept here so a re-plan keeps them; the dims dialog edits them) and Re-plan.
#include "planning.h"

#include <QWidget>

#include <optional>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace tmmu::studio {

class PlanningControls : public QWidget {
    Q_OBJECT
  public:
    explicit PlanningControls(QWidget* parent = nullptr);

    // The largest batch and seq the toolbar holds (each box stays narrow enough for the
    // toolbar); a run over iterations asks for no more, since its last shapes come back here.
    static constexpr int kMaxShape = 1 << 20;

    // Throws Failure(InvalidArgument) when the arena settings or routes text does not parse.
    PlanSettings settings() const;
    void setSettings(const PlanSettings& settings);
    // Batch and sequence apply to transformer configs, the mode to graphs only; Dims… to ONNX
    // models and IR graphs with dynamic dimensions.
    void setModelKind(std::optional<ModelKind> kind, bool dynamicDims = false);
    void setBindings(const DimBindings& bindings);
    uint64_t memoryBudget() const { return memoryBudget_; }
    // The rank and sharding the next re-plan uses (Plan > Distributed run).
    const ShardSpec& shard() const { return shard_; }
    void setShard(const ShardSpec& shard);

    QComboBox* modeBox() const { return mode_; }
    QComboBox* strategyBox() const { return strategy_; }
    QComboBox* alignmentBox() const { return alignment_; }
    QSpinBox* batchBox() const { return batch_; }
    QSpinBox* seqBox() const { return seq_; }
    QLineEdit* arenasEdit() const { return arenas_; }
    QLineEdit* routesEdit() const { return routes_; }
    QPushButton* replanButton() const { return replan_; }
    QPushButton* dimsButton() const { return dims_; }

  signals:
    void replanRequested();
    void bindingsRequested(); // Dims…

  private:
    // Re-plan's tooltip names what the toolbar keeps without a field.
    void updateReplanTip();

    QComboBox* mode_;
    QComboBox* strategy_;
    QComboBox* alignment_;
    QSpinBox* batch_;
    QSpinBox* seq_;
    QLineEdit* arenas_;
    QLineEdit* routes_;
    QPushButton* dims_;
    QPushButton* replan_;
    DimBindings bindings_;
    uint64_t memoryBudget_ = 0; // --memory-budget, kept for re-plans (Re-plan's tooltip says it)
    ShardSpec shard_;           // --world-size/--rank/--shard or a session's, likewise
    bool problem_ = false;      // an offset problem is shown: no roles, no ranks
};

} // namespace tmmu::studio
