#pragma once
// A compiled runtime plan's instructions as a table, one row per instruction in execution
// order: what it runs, the registers it reads and writes, its weights and state block, and the
// registers that die after it (the LivenessMap's kill set, where the planner may reuse bytes).
#include "runtime/execution_plan.h"

#include <QAbstractTableModel>

#include <memory>

namespace tmmu::views {

class InstructionModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        IndexColumn,
        OpcodeColumn,
        ReadsColumn,
        WritesColumn,
        WeightsColumn,
        FreesColumn,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole; // raw numbers for number columns

    explicit InstructionModel(QObject* parent = nullptr);

    void setPlan(std::shared_ptr<const runtime::CompiledPlan> plan); // null clears
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
};

} // namespace tmmu::views
