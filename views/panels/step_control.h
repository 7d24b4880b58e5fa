#pragma once
// Step control: a slider and a spin box over the context's event axis (a plan's steps), with a
// label saying where the current event is ("step 296 of 592") and what runs at its plan time
// (node id and opcode). It follows PlanContext::currentEvent and moves it. The keyboard
// (Left/Right/Home/End) is wired by the main window as application-wide shortcuts.
#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QSlider;
class QSpinBox;
QT_END_NAMESPACE

namespace tmmu::views {

class PlanContext;

class StepControl : public QWidget {
    Q_OBJECT
  public:
    explicit StepControl(PlanContext* ctx, QWidget* parent = nullptr);

    QSlider* slider() const { return slider_; }
    QSpinBox* spinBox() const { return spin_; }
    QString positionText() const; // "step 296 of 592"
    QString nodeText() const;     // "node 'h3.attn.qkv' (matmul, forward), 41 live"

  private:
    void onPlanChanged();
    void onAxisChanged();
    void onEventChanged();

    PlanContext* ctx_;
    QSlider* slider_;
    QSpinBox* spin_;
    QLabel* axisName_;
    QLabel* position_;
    QLabel* node_;
    std::vector<int> nodeOfStep_; // graph node index per schedule step, -1 when unknown
};

} // namespace tmmu::views
