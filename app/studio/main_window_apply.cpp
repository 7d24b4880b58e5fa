// Plan > Apply to host memory: the plan on screen bound, filled, read back and committed on the
// worker (app/common/host_apply.h, what tmmu plan --apply runs), with progress and Cancel in the
// status bar, and what it did in a box a person can copy the state hash from.
#include "main_window.h"

#include "apply_dialog.h"
#include "context/plan_context.h"
#include "core/units.h"
#include "host_apply.h"
#include "job_runner.h"
#include "studio_status_bar.h"

#include <QFileInfo>
#include <QMessageBox>

namespace tmmu::studio {
namespace {

QString appliedHtml(const Plan& plan, const app::AppliedPlan& a) {
    const auto row = [](const QString& key, const QString& value) {
        return QStringLiteral("<tr><td style=\"white-space:nowrap\"><b>%1</b></td><td>%2</td></tr>")
            .arg(key, value);
    };
    const auto bytes = [](uint64_t n) { return QString::fromStdString(format_bytes(n)); };
    return QStringLiteral("<p>%1</p><table cellpadding=2>")
               .arg(MainWindow::tr("Every tensor was bound, filled and read back as written.")) +
           row(MainWindow::tr("Plan"),
               QStringLiteral("%1 (%2…)")
                   .arg(QFileInfo(QString::fromStdString(plan.source)).fileName().toHtmlEscaped(),
                        QString::fromStdString(to_hex(plan.plan_hash).substr(0, 12)))) +
           row(MainWindow::tr("Fill"), QString::fromStdString(app::fill_text(a.options.fill))) +
           row(MainWindow::tr("Data policy"),
               QString::fromUtf8(data_policy_name(a.options.policy))) +
           row(MainWindow::tr("Bound"),
               MainWindow::tr("%1 in %2")
                   .arg(QString::fromStdString(count_of(a.tensors, "tensor")),
                        QString::fromStdString(count_of(a.arenas, "arena")))) +
           row(MainWindow::tr("Host memory"), bytes(a.host_bytes)) +
           row(MainWindow::tr("Written"),
               MainWindow::tr("%1 in %2 ms").arg(bytes(a.filled_bytes)).arg(a.fill_ms, 0, 'f', 1)) +
           row(MainWindow::tr("State hash"), QString::fromStdString(to_hex(a.state))) +
           QStringLiteral("</table>");
}

} // namespace

ApplyDialog* MainWindow::applyDialog() const {
    return applyDialog_;
}

void MainWindow::applyToHost() {
    const std::shared_ptr<const Plan> plan = ctx_->planPtr();
    if (!plan) return;
    delete applyDialog_;
    auto* dialog = new ApplyDialog(*plan, applyOptions_, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog, plan] {
        applyOptions_ = dialog->options();
        runApply(plan, applyOptions_);
    });
    closeOnPlanChange(dialog, tr("Apply to host memory"));
    applyDialog_ = dialog;
    dialog->open(); // window-modal and non-blocking, as the other planning dialogs
}

void MainWindow::runApply(std::shared_ptr<const Plan> plan, const ApplyOptions& options) {
    jobs_->submit(
        {tr("Applying the plan to host memory"), QStringLiteral("apply"), this},
        [plan, options](const Progress& p) { return app::apply_to_host(*plan, options, p); },
        [this, plan](const app::AppliedPlan& a) {
            status_->showMessage(tr("Plan applied to host memory: state %1")
                                     .arg(QString::fromStdString(to_hex(a.state))));
            showResultBox(QMessageBox::Information, tr("Plan applied"), appliedHtml(*plan, a));
        },
        [this](const JobFailure& f) {
            if (f.superseded) return; // a newer apply runs
            if (f.cancelled()) {
                status_->showMessage(tr("Applying the plan cancelled; its memory is released"));
                return;
            }
            status_->showMessage(tr("Applying the plan failed: %1").arg(f.text()));
            showResultBox(QMessageBox::Warning, tr("Applying the plan failed"),
                          f.text().toHtmlEscaped());
        });
}

} // namespace tmmu::studio
