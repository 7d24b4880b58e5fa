#include "shard_dialog.h"

#include "core/failure.h"
#include "dialog_parts.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tmmu::studio {
namespace {

// The roles in the order a person reads them (the ZeRO stages), with what sharding each does.
struct RoleChoice {
    Role role;
    const char* text;
};
constexpr RoleChoice kChoices[] = {
    {Role::OptimizerState, QT_TRANSLATE_NOOP("ShardDialog", "Optimizer state (ZeRO-1)")},
    {Role::Gradient,
     QT_TRANSLATE_NOOP("ShardDialog", "Parameter gradients, reduce-scattered once complete "
                                      "(ZeRO-2); activation gradients stay whole")},
    {Role::Parameter,
     QT_TRANSLATE_NOOP("ShardDialog", "Parameters, gathered whole before each forward and "
                                      "backward reader (ZeRO-3, FSDP)")},
    {Role::Activation,
     QT_TRANSLATE_NOOP("ShardDialog", "Activations, 1/N per rank (the collectives' buffers "
                                      "are not modelled)")},
};

// The largest world the fields offer; --world-size takes more.
constexpr int kMaxWorld = 1 << 20;

} // namespace

ShardDialog::ShardDialog(const ShardSpec& current, QWidget* parent)
    : QDialog(parent), worldSize_(new QSpinBox(this)), rank_(new QSpinBox(this)),
      command_(wrappedLabel(QString(), this, true)),
      error_(refusalLabel(QStringLiteral("shardError"), this)), spec_(current) {
    setObjectName(QStringLiteral("shardDialog"));
    setWindowTitle(tr("Distributed run"));
    auto* intro = wrappedLabel(QString(), this, true);
    intro->setText(tr("Plan the memory of one rank of a run spread over several devices. Sharded "
                      "roles are cut into equal flat chunks, one per rank."));
    worldSize_->setObjectName(QStringLiteral("shardWorldSize"));
    worldSize_->setRange(1, kMaxWorld);
    worldSize_->setValue(int(std::min<uint32_t>(current.world_size, kMaxWorld)));
    rank_->setObjectName(QStringLiteral("shardRank"));
    rank_->setRange(0, worldSize_->value() - 1);
    rank_->setValue(int(std::min<uint32_t>(current.rank, uint32_t(rank_->maximum()))));
    auto* form = new QFormLayout;
    form->addRow(tr("&Ranks (world size):"), worldSize_);
    form->addRow(tr("Rank &planned:"), rank_);
    auto* group = new QGroupBox(tr("Shard across the ranks"), this);
    auto* boxes = new QVBoxLayout(group);
    for (const RoleChoice& c : kChoices) {
        auto* box = new QCheckBox(tr(c.text), group);
        box->setObjectName(QStringLiteral("shard_%1").arg(QString::fromUtf8(role_name(c.role))));
        box->setChecked(current.sharded(c.role));
        boxes->addWidget(box);
        roles_[size_t(c.role)] = box;
        connect(box, &QCheckBox::toggled, this, &ShardDialog::showCommand);
    }
    command_->setObjectName(QStringLiteral("shardCommand"));
    QDialogButtonBox* buttons = planButtons(this, tr("Plan this rank"));
    // A rank outside the world cannot be entered: the rank's range follows the world size.
    connect(worldSize_, &QSpinBox::valueChanged, this, [this](int world) {
        rank_->setMaximum(world - 1);
        showCommand();
    });
    connect(rank_, &QSpinBox::valueChanged, this, &ShardDialog::showCommand);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(group);
    layout->addWidget(command_);
    layout->addWidget(error_);
    layout->addWidget(buttons);
    showCommand();
}

ShardSpec ShardDialog::fields() const {
    ShardSpec s;
    s.world_size = uint32_t(worldSize_->value());
    s.rank = uint32_t(rank_->value());
    for (size_t r = 0; r < roles_.size(); ++r)
        if (roles_[r] && roles_[r]->isChecked()) s.roles.push_back(Role(r)); // ascending
    return s;
}

// Also clears a refusal: it was about fields that have changed since.
void ShardDialog::showCommand() {
    error_->hide();
    const ShardSpec s = fields();
    QString args;
    if (s.world_size > 1)
        args = QStringLiteral(" --world-size %1 --rank %2").arg(s.world_size).arg(s.rank);
    if (!s.roles.empty())
        args += QStringLiteral(" --shard ") + QString::fromStdString(format_shard_roles(s.roles));
    command_->setText(args.isEmpty() ? tr("One rank, nothing sharded: the plan tmmu plan makes.")
                                     : tr("As tmmu plan%1").arg(args));
}

void ShardDialog::accept() {
    const ShardSpec s = fields();
    try {
        check_shard_spec(s, "--shard");
    } catch (const Failure& f) {
        showRefusal(error_, QString::fromStdString(f.message()), worldSize_);
        return;
    }
    spec_ = s;
    QDialog::accept();
}

} // namespace tmmu::studio
