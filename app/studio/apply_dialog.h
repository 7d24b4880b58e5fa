#pragma once
// Plan > Apply to host memory: how to fill the plan's tensors when it is bound to host memory
// as a runtime would (seed 000's ApplyPlan; app/common/host_apply.h does it), and the data
// policy that governs the fill. It says how much memory that takes and shows the `tmmu plan
// --apply` options that do the same from a shell.
//
// Invariant: options() is what the fields say only once accept() checked it (a seed that is a
// whole number below 2^64, and check_fill_allowed, the rule and message tmmu uses); what it
// refuses keeps the dialog open with the message shown.
#include "apply/memory_binding.h"
#include "plan/plan.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QLineEdit;
QT_END_NAMESPACE

namespace tmmu::studio {

class ApplyDialog : public QDialog {
    Q_OBJECT
  public:
    ApplyDialog(const Plan& plan, const ApplyOptions& current, QWidget* parent = nullptr);

    ApplyOptions options() const { return options_; }

    // For tests: the fields, the memory it needs, the options shown and the refusal.
    QComboBox* fillBox() const { return fill_; }
    QLineEdit* seedEdit() const { return seed_; }
    QComboBox* policyBox() const { return policy_; }
    QLabel* memoryLabel() const { return memory_; }
    QLabel* commandLabel() const { return command_; }
    QLabel* errorLabel() const { return error_; }

  public slots:
    void accept() override;

  private:
    FillKind fillKind() const;
    DataPolicy policy() const;
    void fieldsChanged();

    QComboBox* fill_;
    QLineEdit* seed_;
    QComboBox* policy_;
    QLabel* memory_;
    QLabel* command_;
    QLabel* error_;
    ApplyOptions options_;
};

} // namespace tmmu::studio
