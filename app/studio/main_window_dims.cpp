// The dims dialogs' part of the main window: asking for an ONNX model's bindings when it fails
// with UNBOUND_DIMENSION or when Plan > Dimensions asks, and for an IR graph's dynamic dimensions
// when Plan > Dimensions asks; then planning with what was given.
#include "main_window.h"

#include "core/failure.h"
#include "dims_dialog.h"
#include "envelope_dialog.h"
#include "job_runner.h"
#include "planning_controls.h"

#include <QFileInfo>
#include <QPushButton>

namespace tmmu::studio {

DimsDialog* MainWindow::dimsDialog() const {
    return dimsDialog_;
}

EnvelopeDialog* MainWindow::envelopeDialog() const {
    return envelopeDialog_;
}

void MainWindow::editBindings() {
    if (bindingsPath_.isEmpty()) return;
    // The IR graph on screen, when the bindings asked about are its own (not those of an ONNX
    // model that failed to load since).
    if (model_ && model_->kind == ModelKind::IrJson && model_->graph &&
        !model_->graph->dims.empty() && QString::fromStdString(model_->path) == bindingsPath_) {
        showEnvelopeDialog(*model_->graph);
        return;
    }
    try {
        askForBindings(bindingsPath_, controls_->settings(), QString(), false);
    } catch (const Failure& f) {
        onFailed(JobFailure::of(f));
    }
}

void MainWindow::askForBindings(const QString& path, const PlanSettings& settings,
                                const QString& problem, bool remember) {
    bindingsPath_ = path;
    bindingsAction_->setEnabled(true);
    controls_->dimsButton()->setEnabled(true);
    // Reading the inputs runs the ONNX checker and shape inference: worker work, as loading is.
    jobs_->submit(
        {tr("Reading the inputs of %1").arg(QFileInfo(path).fileName()), QString(), this},
        [file = path.toStdString()](const Progress&) { return declared_inputs(file); },
        [this, path, settings, problem, remember](const ModelAnnotations& declared) {
            showDimsDialog(path, declared, settings, problem, remember);
        },
        [this](const JobFailure& f) { onFailed(f); });
}

void MainWindow::showDimsDialog(const QString& path, const ModelAnnotations& declared,
                                const PlanSettings& settings, const QString& problem,
                                bool remember) {
    delete dimsDialog_; // one at a time: the newest request's model and message
    auto* dialog =
        new DimsDialog(QFileInfo(path).fileName(), declared, settings.bindings, problem, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog, path, settings, remember] {
        PlanSettings bound = settings;
        bound.bindings = dialog->bindings();
        openModel(path, bound, remember);
    });
    dimsDialog_ = dialog;
    // Window-modal and non-blocking: the event loop (and a test driving it) keeps running.
    dialog->open();
}

void MainWindow::showEnvelopeDialog(const Graph& model) {
    delete envelopeDialog_;
    auto* dialog = new EnvelopeDialog(QFileInfo(bindingsPath_).fileName(), model, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog, path = bindingsPath_] {
        PlanSettings bound = controls_->settings();
        bound.bindings.dims = dialog->binding();
        openModel(path, bound, false);
    });
    envelopeDialog_ = dialog;
    dialog->open();
}

} // namespace tmmu::studio
