#include "panels/instruction_panel.h"

#include "context/plan_context.h"
#include "models/instruction_model.h"

#include <QBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>

namespace tmmu::views {

InstructionPanel::InstructionPanel(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), model_(new InstructionModel(this)), table_(new QTableView(this)),
      headline_(new QLabel(this)) {
    table_->setObjectName(QStringLiteral("instructionTable"));
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    headline_->setWordWrap(true);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(headline_);
    column->addWidget(table_, 1);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& now) {
                if (!syncing_ && following() && now.isValid())
                    ctx_->setCurrentEvent(uint64_t(now.row()));
            });
    connect(ctx_, &PlanContext::planChanged, this, &InstructionPanel::onPlanChanged);
    connect(ctx_, &PlanContext::currentEventChanged, this, &InstructionPanel::onEventChanged);
    onPlanChanged();
}

void InstructionPanel::setProgram(std::shared_ptr<const runtime::CompiledPlan> program,
                                  std::shared_ptr<const Plan> registers) {
    model_->setPlan(std::move(program));
    table_->setColumnHidden(InstructionModel::DeviceTimeColumn, true);
    registers_ = std::move(registers);
    table_->resizeColumnsToContents();
    onPlanChanged();
}

void InstructionPanel::setDeviceTime(std::vector<double> seconds, uint64_t steps) {
    model_->setDeviceTime(std::move(seconds), steps);
    table_->setColumnHidden(InstructionModel::DeviceTimeColumn, !model_->hasDeviceTime());
    table_->resizeColumnToContents(InstructionModel::DeviceTimeColumn);
}

bool InstructionPanel::following() const {
    return model_->plan() && registers_ && ctx_->plan() == registers_.get();
}

QString InstructionPanel::headline() const {
    return headline_->text();
}

void InstructionPanel::onPlanChanged() {
    const runtime::CompiledPlan* p = model_->plan();
    if (!p)
        headline_->setText(tr("Run a model (Run panel) to step through its instructions"));
    else if (!following())
        headline_->setText(tr("%1: %2 instructions. The views show another plan now: run again "
                              "to follow its registers.")
                               .arg(QString::fromStdString(p->plan.name))
                               .arg(p->plan.instructions.size()));
    else
        headline_->setText(tr("%1: %2 instructions over %3 registers, at most %4 live at once. "
                              "The current instruction is the views' current event.")
                               .arg(QString::fromStdString(p->plan.name))
                               .arg(p->plan.instructions.size())
                               .arg(p->plan.registers.size())
                               .arg(p->peak_registers));
    table_->setEnabled(following());
    if (following()) onEventChanged(ctx_->currentEvent());
}

void InstructionPanel::onEventChanged(uint64_t event) {
    if (!following() || event >= uint64_t(model_->rowCount())) return;
    const QModelIndex row = model_->index(int(event), 0);
    if (table_->currentIndex().row() == row.row()) return;
    // Not a QSignalBlocker: the view repaints the selection from those very signals.
    syncing_ = true;
    table_->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect |
                                                       QItemSelectionModel::Rows);
    syncing_ = false;
    table_->scrollTo(row);
}

} // namespace tmmu::views
