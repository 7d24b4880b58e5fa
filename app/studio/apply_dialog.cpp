#include "apply_dialog.h"

#include "apply/host_arenas.h"
#include "core/failure.h"
#include "core/units.h"
#include "dialog_parts.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <charconv>
#include <optional>

namespace tmmu::studio {
namespace {

constexpr DataPolicy kPolicies[] = {DataPolicy::Standard, DataPolicy::Confidential,
                                    DataPolicy::Regulated};

// The seed as --apply debug:SEED reads it: a whole number in [0, 2^64 - 1], nothing else.
std::optional<uint64_t> parse_seed(const QString& text) {
    const std::string s = text.trimmed().toStdString();
    uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seed);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return seed;
}

QString memoryText(const Plan& plan) {
    uint64_t written = 0;
    for (const PlannedTensor& t : plan.tensors)
        written += t.size;
    try {
        return ApplyDialog::tr("Allocates %1 of host memory for %2, then writes and reads back "
                               "each of its %3 (%4 in all: bytes shared by views and reused over "
                               "time are written once per tensor).")
            .arg(QString::fromStdString(format_bytes(HostArenas::bytes_needed(plan))),
                 QString::fromStdString(count_of(plan.arenas.size(), "arena")),
                 QString::fromStdString(count_of(plan.tensors.size(), "tensor")),
                 QString::fromStdString(format_bytes(written)));
    } catch (const Failure& f) {
        return QString::fromStdString(f.message());
    }
}

} // namespace

ApplyDialog::ApplyDialog(const Plan& plan, const ApplyOptions& current, QWidget* parent)
    : QDialog(parent), fill_(new QComboBox(this)), seed_(new QLineEdit(this)),
      policy_(new QComboBox(this)), memory_(wrappedLabel(memoryText(plan), this, true)),
      command_(wrappedLabel(QString(), this, true)),
      error_(refusalLabel(QStringLiteral("applyError"), this)), options_(current) {
    setObjectName(QStringLiteral("applyDialog"));
    setWindowTitle(tr("Apply to host memory"));
    auto* intro = wrappedLabel(
        tr("Bind every tensor of the plan to host memory at its arena's base plus its offset, as "
           "a runtime would, fill it, read it back, and commit: the state hash depends only on "
           "the plan and the fill, never on where the memory lies."),
        this, true);
    fill_->setObjectName(QStringLiteral("applyFill"));
    fill_->addItem(tr("Zeros"), int(FillKind::Zero));
    fill_->addItem(tr("Debug pattern (seeded, different in every byte)"), int(FillKind::Debug));
    fill_->setCurrentIndex(current.fill.kind == FillKind::Debug ? 1 : 0);
    seed_->setObjectName(QStringLiteral("applySeed"));
    seed_->setText(QString::number(current.fill.seed));
    policy_->setObjectName(QStringLiteral("applyPolicy"));
    for (DataPolicy p : kPolicies)
        policy_->addItem(QString::fromUtf8(data_policy_name(p)), int(p));
    policy_->setCurrentIndex(policy_->findData(int(current.policy)));
    policy_->setToolTip(tr("Confidential and regulated data may only be zeroed: a debug "
                           "pattern is refused under them."));
    auto* form = new QFormLayout;
    form->addRow(tr("&Fill:"), fill_);
    form->addRow(tr("&Seed:"), seed_);
    form->addRow(tr("Data &policy:"), policy_);
    memory_->setObjectName(QStringLiteral("applyMemory"));
    command_->setObjectName(QStringLiteral("applyCommand"));
    QDialogButtonBox* buttons = planButtons(this, tr("Apply"));
    connect(fill_, &QComboBox::currentIndexChanged, this, &ApplyDialog::fieldsChanged);
    connect(policy_, &QComboBox::currentIndexChanged, this, &ApplyDialog::fieldsChanged);
    connect(seed_, &QLineEdit::textChanged, this, &ApplyDialog::fieldsChanged);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(memory_);
    layout->addWidget(command_);
    layout->addWidget(error_);
    layout->addWidget(buttons);
    fieldsChanged();
}

FillKind ApplyDialog::fillKind() const {
    return FillKind(fill_->currentData().toInt());
}

DataPolicy ApplyDialog::policy() const {
    return DataPolicy(policy_->currentData().toInt());
}

// Also clears a refusal: it was about fields that have changed since.
void ApplyDialog::fieldsChanged() {
    error_->hide();
    const bool debug = fillKind() == FillKind::Debug;
    seed_->setEnabled(debug);
    QString fill =
        debug ? QStringLiteral("debug:%1").arg(seed_->text().trimmed()) : QStringLiteral("zero");
    QString args = QStringLiteral("--apply ") + fill;
    if (policy() != DataPolicy::Standard)
        args += QStringLiteral(" --data-policy ") + QString::fromUtf8(data_policy_name(policy()));
    command_->setText(tr("As tmmu plan %1").arg(args));
}

void ApplyDialog::accept() {
    ApplyOptions o{{fillKind(), 0}, policy()};
    const auto refuse = [this](QWidget* field, const QString& why) {
        showRefusal(error_, why, field);
    };
    if (o.fill.kind == FillKind::Debug) {
        const std::optional<uint64_t> seed = parse_seed(seed_->text());
        if (!seed)
            return refuse(seed_, tr("The seed must be a whole number from 0 to "
                                    "18446744073709551615, got '%1'.")
                                     .arg(seed_->text()));
        o.fill.seed = *seed;
    }
    try {
        check_fill_allowed(o.fill, o.policy);
    } catch (const Failure& f) {
        return refuse(policy_, QString::fromStdString(f.message()));
    }
    options_ = o;
    QDialog::accept();
}

} // namespace tmmu::studio
