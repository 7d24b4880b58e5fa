#pragma once
// Plan > Distributed run: the rank of a distributed run to plan and the roles sharded across
// its ranks (seed 000 II.I), what `tmmu plan --world-size N --rank R --shard ROLES` takes. It
// shows that command line as the fields change, so a person can run the same plan from a shell.
//
// Invariant: spec() is what the fields say only once accept() checked it (check_shard_spec, the
// rule and message both front ends use); a spec it refuses keeps the dialog open with the
// message shown.
#include "plan/shard_spec.h"

#include <QDialog>
#include <array>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QLabel;
class QSpinBox;
QT_END_NAMESPACE

namespace tmmu::studio {

class ShardDialog : public QDialog {
    Q_OBJECT
  public:
    explicit ShardDialog(const ShardSpec& current, QWidget* parent = nullptr);

    ShardSpec spec() const { return spec_; }

    // For tests: the fields, a role's box (null for a role that cannot be sharded), the command
    // line shown and the validation message.
    QSpinBox* worldSizeBox() const { return worldSize_; }
    QSpinBox* rankBox() const { return rank_; }
    QCheckBox* roleBox(Role role) const { return roles_[size_t(role)]; }
    QLabel* commandLabel() const { return command_; }
    QLabel* errorLabel() const { return error_; }

  public slots:
    void accept() override;

  private:
    ShardSpec fields() const;
    void showCommand();

    QSpinBox* worldSize_;
    QSpinBox* rank_;
    std::array<QCheckBox*, kRoleCount> roles_{};
    QLabel* command_;
    QLabel* error_;
    ShardSpec spec_;
};

} // namespace tmmu::studio
