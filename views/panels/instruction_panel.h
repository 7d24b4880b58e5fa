#pragma once
// The instruction timeline of a model run: the compiled decode plan's instructions in order,
// with the current one the context's current event (the run's registers are the plan on
// screen, one plan time unit per instruction). Picking a row moves the live-range, slot and
// arena views; stepping them moves the row. When the context shows another plan, the panel
// says so and follows nothing.
#include <QWidget>

#include <memory>
#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QTableView;
QT_END_NAMESPACE

namespace tmmu {
struct Plan;
}
namespace tmmu::runtime {
struct CompiledPlan;
}

namespace tmmu::views {

class InstructionModel;
class PlanContext;

class InstructionPanel : public QWidget {
    Q_OBJECT
  public:
    explicit InstructionPanel(PlanContext* ctx, QWidget* parent = nullptr);

    // `registers` is the plan the context shows for this program (its registers packed by the
    // planner); the panel follows the cursor only while the context shows that plan.
    void setProgram(std::shared_ptr<const runtime::CompiledPlan> program,
                    std::shared_ptr<const Plan> registers);
    // The program's device time per instruction summed over `steps` steps (a GPU run's
    // decode_instruction_seconds); empty hides the column.
    void setDeviceTime(std::vector<double> seconds, uint64_t steps);
    bool following() const; // the context shows this program's registers
    QTableView* table() const { return table_; }
    InstructionModel* model() const { return model_; }
    QString headline() const;

  private:
    void onPlanChanged();
    void onEventChanged(uint64_t event);

    PlanContext* ctx_;
    InstructionModel* model_;
    QTableView* table_;
    QLabel* headline_;
    std::shared_ptr<const Plan> registers_;
    bool syncing_ = false; // the panel itself moves the row to the context's event
};

} // namespace tmmu::views
