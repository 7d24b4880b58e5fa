// Plan > Run iterations: the IR graph or transformer config on screen run over iterations of
// other shapes on the worker (iteration_jobs.h, what tmmu plan --iteration runs), the plan in
// force after the last shown as a plan, and every iteration listed in the result box.
#include "main_window.h"

#include "context/plan_context.h"
#include "core/failure.h"
#include "core/units.h"
#include "io/file_io.h"
#include "iteration_jobs.h"
#include "iterations_dialog.h"
#include "job_runner.h"
#include "models/transformer_config.h"
#include "planning_controls.h"
#include "session_actions.h"
#include "studio_status_bar.h"

#include <QFileInfo>

#include <algorithm>

namespace tmmu::studio {
namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString shortHash(const Digest& d) {
    return qs(to_hex(d).substr(0, 12));
}

// One row per iteration: its dimensions, the plan it ran on (its binding, hash and peak) and
// whether that plan was made before it. Cells do not wrap: the box widens to the table.
QString iterationsTable(const std::vector<IterationOutcome>& decided) {
    const auto row = [](QStringList cells, const QString& tag) {
        QString html = QStringLiteral("<tr>");
        for (const QString& c : cells)
            html +=
                QStringLiteral("<%1 align=left style=\"white-space:nowrap\">%2</%1>").arg(tag, c);
        return html + QStringLiteral("</tr>");
    };
    QString html =
        QStringLiteral("<table cellpadding=3>") +
        row({QStringLiteral("#"), MainWindow::tr("dimensions"), MainWindow::tr("plan at"),
             MainWindow::tr("plan"), MainWindow::tr("peak"), MainWindow::tr("outcome")},
            QStringLiteral("th"));
    for (const IterationOutcome& i : decided)
        html +=
            row({QString::number(i.iteration), qs(binding_text(i.dims)).toHtmlEscaped(),
                 qs(binding_text(i.plan_binding)).toHtmlEscaped(),
                 QStringLiteral("<tt>%1</tt>").arg(shortHash(i.plan_hash)),
                 qs(format_bytes(i.peak_bytes)),
                 i.replanned
                     ? MainWindow::tr("replanned (was <tt>%1</tt>)").arg(shortHash(i.old_plan_hash))
                     : MainWindow::tr("fits")},
                QStringLiteral("td"));
    return html + QStringLiteral("</table>");
}

QString replanCount(const std::vector<IterationOutcome>& decided) {
    const auto replans =
        std::count_if(decided.begin(), decided.end(), [](const auto& i) { return i.replanned; });
    return qs(count_of(uint64_t(replans), "replan"));
}

// The model's positions, read from the config file as the run will read it again; 0 when it
// no longer reads (the run then says why).
uint64_t configPositions(const std::string& path) {
    try {
        return parse_transformer_config(read_text_file(path), path).max_positions;
    } catch (const Failure&) {
        return 0;
    }
}

// What a transformer config's or ONNX model's iterations are checked against in the dialog,
// since the run loads the model again with an envelope grown to the largest value asked for:
// the names (a config's batch and seq, an ONNX model's dimensions bound by name), any size but
// a config's seq, which stops at the model's positions when the file still says them.
Graph reloadedDims(const LoadedModel& model, const PlanSettings& s, uint64_t positions) {
    Graph g;
    g.replan_policy = ReplanPolicy::ReplanAtSafepoint;
    if (model.kind == ModelKind::Onnx) {
        for (const auto& [name, value] : s.bindings.dims)
            g.dims.push_back({name, 1, kMaxDynamicDim, value});
        return g;
    }
    // The last iteration's batch and seq come back to the toolbar: none may ask for more than
    // it holds (a clamped one would re-plan other shapes than those shown).
    const int64_t max_shape = PlanningControls::kMaxShape;
    const int64_t max_seq =
        positions == 0 ? max_shape : std::min<int64_t>(int64_t(positions), max_shape);
    g.dims = {{"batch", 1, max_shape, int64_t(s.batch)}, {"seq", 1, max_seq, int64_t(s.seq)}};
    return g;
}

// The dialog's line on the envelope.
QString envelopeLine(const LoadedModel& model, const PlanSettings& s, uint64_t positions) {
    switch (model.kind) {
    case ModelKind::TransformerConfig:
        return MainWindow::tr("batch=%1, seq=%2: for this run batch and seq are dynamic, batch up "
                              "to the largest asked for (at most %4, what the toolbar holds) and "
                              "seq up to the model's %3 positions; replan_policy "
                              "REPLAN_AT_SAFEPOINT")
            .arg(s.batch)
            .arg(s.seq)
            .arg(positions)
            .arg(PlanningControls::kMaxShape);
    case ModelKind::Onnx:
        return MainWindow::tr("%1: for this run the dimensions bound by name are dynamic, each up "
                              "to the largest asked for; replan_policy REPLAN_AT_SAFEPOINT")
            .arg(qs(binding_text(s.bindings.dims)));
    default:
        return qs(envelope_text(*model.graph));
    }
}

} // namespace

IterationsDialog* MainWindow::iterationsDialog() const {
    return iterationsDialog_;
}

void MainWindow::runIterations() {
    if (!model_ || ctx_->model() != model_.get() || !model_->graph) return;
    if (!runs_over_iterations(*model_, shownWith_)) return;
    delete iterationsDialog_;
    const bool reloaded = model_->kind != ModelKind::IrJson;
    const uint64_t positions =
        model_->kind == ModelKind::TransformerConfig ? configPositions(model_->path) : 0;
    auto* dialog = new IterationsDialog(
        QFileInfo(modelPath_).fileName(),
        reloaded ? reloadedDims(*model_, shownWith_, positions) : *model_->graph,
        envelopeLine(*model_, shownWith_, positions), iterationLines_, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // The run starts from what the dialog was opened on (closeOnPlanChange keeps it on screen),
    // with the budget Re-plan would use: sessions do not store it.
    PlanOutcome shown{model_, ctx_->planPtr(), shownWith_, std::nullopt};
    shown.settings.memory_budget = controls_->memoryBudget();
    connect(dialog, &QDialog::accepted, this, [this, dialog, shown] {
        iterationLines_ = dialog->lines();
        startIterations(shown, dialog->iterations());
    });
    closeOnPlanChange(dialog, tr("Run iterations"));
    iterationsDialog_ = dialog;
    dialog->open(); // window-modal and non-blocking, as the other planning dialogs
}

void MainWindow::startIterations(const PlanOutcome& shown,
                                 const std::vector<DimBinding>& iterations) {
    const QString file = QFileInfo(QString::fromStdString(shown.model->path)).fileName();
    lastFailure_.clear();
    jobs_->submit(
        {tr("Running %1 over iterations").arg(file), kShownPlanKey, this},
        [shown, iterations](const Progress& p) { return run_iterations_job(shown, iterations, p); },
        [this](const IterationsRun& run) {
            const QString table = iterationsTable(run.decided);
            if (run.failure) {
                const JobFailure f = JobFailure::of(*run.failure);
                onFailed(f, false);
                const QString before = run.decided.empty()
                                           ? tr("<p>It stopped at the first iteration.</p>")
                                           : tr("<p>Decided before it:</p>%1").arg(table);
                showResultBox(QMessageBox::Warning, tr("Iterations stopped"),
                              tr("<p>%1</p>%2<p>The plan on screen is the one the run started "
                                 "from.</p>")
                                  .arg(f.text().toHtmlEscaped(), before));
                return;
            }
            const QString start = qs(binding_text(run.outcome->iterations->start));
            // The toolbar holds the last plan's shapes (a config's batch and seq, a graph's
            // dims), so Re-plan plans them.
            showStoredSettings(run.outcome->settings);
            onPlanned(*run.outcome);
            sessions_->recordRun(*run.outcome);
            compareStrategies(*run.outcome);
            status_->showMessage(
                tr("%1 run, %2; showing the plan in force after the last")
                    .arg(qs(count_of(run.decided.size(), "iteration")), replanCount(run.decided)));
            showResultBox(QMessageBox::Information, tr("Iterations run"),
                          tr("<p>%1 run from the plan at %2, %3. The plan on screen is the one "
                             "in force after the last, at %4.</p>%5")
                              .arg(qs(count_of(run.decided.size(), "iteration")), start,
                                   replanCount(run.decided),
                                   qs(binding_text(*run.outcome->model->graph)), table));
        },
        [this](const JobFailure& f) { onFailed(f); });
}

} // namespace tmmu::studio
