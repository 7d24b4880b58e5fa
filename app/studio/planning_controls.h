#pragma once
// The planning toolbar: mode, strategy, alignment, batch and sequence length (transformer
// configs), arena capacities ("activations=8GiB, gradients=2GiB") and Re-plan.
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

    // Throws Failure(InvalidArgument) when the capacities text does not parse.
    PlanSettings settings() const;
    void setSettings(const PlanSettings& settings);
    // Batch and sequence apply to transformer configs, the mode to graphs only.
    void setModelKind(std::optional<ModelKind> kind);

    QComboBox* modeBox() const { return mode_; }
    QComboBox* strategyBox() const { return strategy_; }
    QComboBox* alignmentBox() const { return alignment_; }
    QSpinBox* batchBox() const { return batch_; }
    QSpinBox* seqBox() const { return seq_; }
    QLineEdit* capacitiesEdit() const { return capacities_; }
    QPushButton* replanButton() const { return replan_; }

  signals:
    void replanRequested();

  private:
    QComboBox* mode_;
    QComboBox* strategy_;
    QComboBox* alignment_;
    QSpinBox* batch_;
    QSpinBox* seq_;
    QLineEdit* capacities_;
    QPushButton* replan_;
};

} // namespace tmmu::studio
