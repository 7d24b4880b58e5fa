#include "models/instruction_model.h"

#include "style/text_format.h"

namespace tmmu::views {

using namespace tmmu::runtime;

InstructionModel::InstructionModel(QObject* parent) : QAbstractTableModel(parent) {}

void InstructionModel::setPlan(std::shared_ptr<const CompiledPlan> plan) {
    beginResetModel();
    plan_ = std::move(plan);
    seconds_.clear();
    endResetModel();
}

void InstructionModel::setDeviceTime(std::vector<double> seconds, uint64_t steps) {
    // Times that are not one per instruction belong to another program: not shown.
    if (!plan_ || seconds.size() != plan_->plan.instructions.size() || steps == 0) seconds.clear();
    for (double& s : seconds)
        s /= double(steps);
    seconds_ = std::move(seconds);
    if (rowCount() > 0)
        emit dataChanged(index(0, DeviceTimeColumn), index(rowCount() - 1, DeviceTimeColumn));
}

namespace {

// "412.5 µs", "1.234 ms": the unit that keeps three or four significant digits.
QString deviceTime(double seconds) {
    if (seconds < 1e-3) return QStringLiteral("%1 µs").arg(seconds * 1e6, 0, 'f', 1);
    return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', 3);
}

} // namespace

int InstructionModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !plan_ ? 0 : int(plan_->plan.instructions.size());
}

int InstructionModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString InstructionModel::registers(const std::vector<RegisterRef>& refs) const {
    QStringList names;
    for (RegisterRef r : refs)
        names << QString::fromStdString(plan_->plan.registers[r.id].name);
    return names.join(QStringLiteral(", "));
}

QString InstructionModel::weights(const Instruction& insn) const {
    QStringList names;
    for (WeightRef w : insn.weights)
        names << QString::fromStdString(plan_->plan.weights[w.index].name);
    if (insn.state_block != kNoStateBlock)
        names << tr("state %1")
                     .arg(QString::fromStdString(plan_->plan.states[insn.state_block].name));
    return names.join(QStringLiteral(", "));
}

std::vector<RegisterRef> InstructionModel::freedAfter(uint32_t instruction) const {
    std::vector<RegisterRef> out;
    for (size_t r = 0; r < plan_->plan.registers.size(); ++r)
        if (plan_->liveness.dies_after(instruction, RegisterRef{uint16_t(r)}))
            out.push_back(RegisterRef{uint16_t(r)});
    return out;
}

QVariant InstructionModel::data(const QModelIndex& index, int role) const {
    if (!plan_ || !index.isValid() || index.row() >= rowCount()) return {};
    const uint32_t row = uint32_t(index.row());
    const Instruction& insn = plan_->plan.instructions[row];
    if (role == SortRole && index.column() == IndexColumn) return row;
    if (role == SortRole && index.column() == DeviceTimeColumn)
        return seconds_.empty() ? QVariant() : QVariant(seconds_[row]);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != SortRole) return {};
    switch (Column(index.column())) {
    case IndexColumn:
        return row;
    case OpcodeColumn:
        return QString::fromUtf8(opcode_name(insn.opcode).data());
    case DeviceTimeColumn:
        if (seconds_.empty()) return {};
        return role == Qt::ToolTipRole
                   ? tr("%1 of device time per step, timed around the instruction")
                         .arg(deviceTime(seconds_[row]))
                   : deviceTime(seconds_[row]);
    case ReadsColumn:
        return registers(insn.inputs);
    case WritesColumn: {
        if (role != Qt::ToolTipRole) return registers(insn.outputs);
        const RegisterDesc& out = plan_->plan.registers[insn.outputs[0].id];
        return tr("%1: %2").arg(QString::fromStdString(out.name), humanBytes(out.view.bytes()));
    }
    case WeightsColumn:
        return weights(insn);
    case FreesColumn:
        return registers(freedAfter(row));
    case ColumnCount:
        break;
    }
    return {};
}

QVariant InstructionModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole && section == DeviceTimeColumn)
        return tr("Device time per step, on average over the run's decode steps (GPU runs with "
                  "dispatch counting)");
    if (role == Qt::ToolTipRole && section == FreesColumn)
        return tr("Registers whose last reader this instruction is: their bytes are free after "
                  "it (the plan's LivenessMap)");
    if (role != Qt::DisplayRole) return {};
    switch (Column(section)) {
    case IndexColumn:
        return tr("#");
    case OpcodeColumn:
        return tr("Opcode");
    case DeviceTimeColumn:
        return tr("Device time");
    case ReadsColumn:
        return tr("Reads");
    case WritesColumn:
        return tr("Writes");
    case WeightsColumn:
        return tr("Weights / state");
    case FreesColumn:
        return tr("Frees after");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace tmmu::views
