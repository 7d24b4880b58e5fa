#pragma once
// A compiled runtime plan's instructions as a table, one row per instruction in execution
// order: what it runs, the registers it reads and writes, its weights and state block, and the
// registers that die after it (the LivenessMap's kill set, where the planner may reuse bytes),
// and, for a run timed on a GPU, its device time per step.
#include "runtime/execution_plan.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace tmmu::views {

class InstructionModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        IndexColumn,
        OpcodeColumn,
        DeviceTimeColumn, // mean device time per step; empty without a timed GPU run
        ReadsColumn,
        WritesColumn,
        WeightsColumn,
        FreesColumn,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole; // raw numbers for number columns

    explicit InstructionModel(QObject* parent = nullptr);

    void setPlan(std::shared_ptr<const runtime::CompiledPlan> plan); // null clears the times too
    // Device time of every instruction summed over `steps` steps (a run's
    // decode_instruction_seconds); empty clears. Shown as the mean per step.
    void setDeviceTime(std::vector<double> seconds, uint64_t steps);
    bool hasDeviceTime() const { return !seconds_.empty(); }
    const runtime::CompiledPlan* plan() const { return plan_.get(); }

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    QString registers(const std::vector<runtime::RegisterRef>& refs) const;
    QString weights(const runtime::Instruction& insn) const;
    std::vector<runtime::RegisterRef> freedAfter(uint32_t instruction) const;

    std::shared_ptr<const runtime::CompiledPlan> plan_;
    std::vector<double> seconds_; // per instruction, mean per step; empty: not timed
};

} // namespace tmmu::views
