#include "main_window.h"

#include "charts/dispatch_chart.h"
#include "charts/memory_chart.h"
#include "charts/parity_chart.h"
#include "charts/strategy_chart.h"
#include "checkpoint_jobs.h"
#include "context/plan_context.h"
#include "core/failure.h"
#include "encoding/sha256.h"
#include "iteration_jobs.h"
#include "job_runner.h"
#include "lazy_jobs.h"
#include "lazy_traces_panel.h"
#include "models/run_comparison_model.h"
#include "panels/instruction_panel.h"
#include "panels/session_compare_panel.h"
#include "panels/sessions_panel.h"
#include "panels/step_control.h"
#include "panels/tensor_details_panel.h"
#include "panels/tensor_table_panel.h"
#include "planning_controls.h"
#include "run_panel.h"
#include "session_actions.h"
#include "session_iterations.h"
#include "session_jobs.h"
#include "studio_options.h"
#include "studio_status_bar.h"
#include "style/text_format.h"
#include "timeline/arena_layout_view.h"
#include "timeline/live_range_view.h"
#include "timeline/slot_view.h"
#include "token_graph/lazy_state_panel.h"
#include "token_graph/token_graph_panel.h"
#include "token_graph/token_graph_view.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QTabBar>
#include <QTableView>
#include <QToolBar>

namespace tmmu::studio {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), ctx_(new views::PlanContext(this)), jobs_(new JobRunner(this)),
      controls_(new PlanningControls(this)), status_(new StudioStatusBar(this)) {
    setObjectName(QStringLiteral("tmmuStudioMainWindow"));
    setWindowTitle(tr("TMMU Studio"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    setStatusBar(status_);
    buildToolbars();
    buildDocks();
    buildMenus();
    connectJobs();
    resize(1600, 1000);
    defaultState_ = saveState(kStateVersion);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildToolbars() {
    auto* planning = addToolBar(tr("Planning"));
    planning->setObjectName(QStringLiteral("planningToolBar"));
    planning->setMovable(false);
    planning->addWidget(controls_);
    connect(controls_, &PlanningControls::replanRequested, this, &MainWindow::replan);

    auto* stepBar = new QToolBar(tr("Step"), this);
    stepBar->setObjectName(QStringLiteral("stepToolBar"));
    stepBar->setMovable(false);
    step_ = new views::StepControl(ctx_, stepBar);
    stepBar->addWidget(step_);
    addToolBar(Qt::BottomToolBarArea, stepBar);
}

QDockWidget* MainWindow::addDock(const QString& objectName, const QString& title, QWidget* content,
                                 Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    return dock;
}

void MainWindow::buildDocks() {
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    QWidget* arena = new views::ArenaLayoutView(ctx_, this);
    arena->setObjectName(QStringLiteral("arenaLayout"));
    setCentralWidget(arena);

    table_ = new views::TensorTablePanel(ctx_, this);
    // Edit > Find tensor owns Ctrl+F window-wide; two shortcuts on one key would be ambiguous.
    if (QShortcut* own = table_->searchShortcut()) own->setEnabled(false);
    QDockWidget* tableDock =
        addDock(QStringLiteral("tensorTableDock"), tr("Tensors"), table_, Qt::LeftDockWidgetArea);
    QDockWidget* details =
        addDock(QStringLiteral("tensorDetailsDock"), tr("Tensor details"),
                new views::TensorDetailsPanel(ctx_, this), Qt::LeftDockWidgetArea);
    splitDockWidget(tableDock, details, Qt::Vertical);

    memory_ = new views::MemoryChart(ctx_, this);
    strategies_ = new views::StrategyChart(this);
    QDockWidget* memory = addDock(QStringLiteral("memoryDock"), tr("Memory over time"), memory_,
                                  Qt::RightDockWidgetArea);
    QDockWidget* compare = addDock(QStringLiteral("strategyDock"), tr("Strategy comparison"),
                                   strategies_, Qt::RightDockWidgetArea);
    splitDockWidget(memory, compare, Qt::Vertical);
    QWidget* slotPanel = new views::SlotView(ctx_, this);
    QDockWidget* slotDock = addDock(QStringLiteral("slotsDock"), tr("Slot colouring"), slotPanel,
                                    Qt::RightDockWidgetArea);
    splitDockWidget(compare, slotDock, Qt::Vertical);
    QWidget* ranges = new views::LiveRangeView(ctx_, this);
    QDockWidget* rangesDock = addDock(QStringLiteral("liveRangesDock"), tr("Live ranges"), ranges,
                                      Qt::BottomDockWidgetArea);

    // Sessions share tabs with docks already there, so the default layout keeps its proportions.
    sessions_ = new SessionActions(this, ctx_, jobs_);
    QDockWidget* sessionsDock = addDock(QStringLiteral("sessionsDock"), tr("Sessions"),
                                        sessions_->panel(), Qt::LeftDockWidgetArea);
    tabifyDockWidget(tableDock, sessionsDock);
    QDockWidget* compareDock =
        addDock(QStringLiteral("sessionCompareDock"), tr("Session comparison"),
                sessions_->comparePanel(), Qt::BottomDockWidgetArea);
    tabifyDockWidget(rangesDock, compareDock);
    buildRunDocks(sessionsDock, compare, compareDock);
    buildLazyDocks(tableDock, compareDock, compare);
    tableDock->raise();
    rangesDock->raise();
    compare->raise();

    fitDocks(QSize(1600, 1000));
}

void MainWindow::fitDocks(QSize window) {
    // Shares of the window, so the central arena layout and the bottom tabs ("Live ranges",
    // "Session comparison", ...) keep room for their text at 1280x800 as at 1920x1080.
    const int w = window.width(), h = window.height();
    const auto share = [](int total, double f) { return int(total * f); };
    QDockWidget* table = dock(QStringLiteral("tensorTableDock"));
    QDockWidget* memory = dock(QStringLiteral("memoryDock"));
    // The side columns take shares of a small window and stop growing on a large one, where the
    // arena layout has the use for the room.
    resizeDocks({table, memory}, {std::min(share(w, 0.26), 450), std::min(share(w, 0.38), 620)},
                Qt::Horizontal);
    resizeDocks({table, dock(QStringLiteral("tensorDetailsDock"))}, {share(h, 0.5), share(h, 0.33)},
                Qt::Vertical);
    resizeDocks({memory, dock(QStringLiteral("strategyDock")), dock(QStringLiteral("slotsDock"))},
                {share(h, 0.31), share(h, 0.26), share(h, 0.28)}, Qt::Vertical);
    resizeDocks({dock(QStringLiteral("liveRangesDock"))}, {share(h, 0.38)}, Qt::Vertical);
}

void MainWindow::buildRunDocks(QDockWidget* besideSessions, QDockWidget* besideCompare,
                               QDockWidget* besideRanges) {
    runPanel_ = new RunPanel(jobs_, [this] { return sessionsPath(); });
    QDockWidget* run =
        addDock(QStringLiteral("runDock"), tr("Run"), runPanel_, Qt::LeftDockWidgetArea);
    tabifyDockWidget(besideSessions, run);
    dispatch_ = new views::DispatchChart(this);
    QDockWidget* dispatches = addDock(QStringLiteral("dispatchDock"), tr("Dispatch counters"),
                                      dispatch_, Qt::RightDockWidgetArea);
    tabifyDockWidget(besideCompare, dispatches);
    parity_ = new views::ParityChart(this);
    QDockWidget* parity =
        addDock(QStringLiteral("parityDock"), tr("CPU parity"), parity_, Qt::RightDockWidgetArea);
    tabifyDockWidget(dispatches, parity);
    instructions_ = new views::InstructionPanel(ctx_, this);
    QDockWidget* timeline = addDock(QStringLiteral("instructionsDock"), tr("Instructions"),
                                    instructions_, Qt::BottomDockWidgetArea);
    tabifyDockWidget(besideRanges, timeline);
    connect(runPanel_, &RunPanel::runShown, this, &MainWindow::onRunShown);
    connect(runPanel_, &RunPanel::runFailed, status_,
            [this](const QString& text) { status_->showMessage(text); });
    connect(sessions_, &SessionActions::storeOpened, runPanel_, &RunPanel::refreshRecordedRuns);
}

void MainWindow::buildLazyDocks(QDockWidget* besideTable, QDockWidget* besideRanges,
                                QDockWidget* besideStrategies) {
    tokenGraph_ = new views::TokenGraphPanel(ctx_, this);
    QDockWidget* graph = addDock(QStringLiteral("tokenGraphDock"), tr("Token graph"), tokenGraph_,
                                 Qt::BottomDockWidgetArea);
    tabifyDockWidget(besideRanges, graph);
    lazyState_ = new views::LazyStatePanel(ctx_, this);
    // Beside the tensor table: the tallest place, and the table lists only buffer ids here.
    QDockWidget* state = addDock(QStringLiteral("lazyStateDock"), tr("Engine state"), lazyState_,
                                 Qt::LeftDockWidgetArea);
    tabifyDockWidget(besideTable, state);
    // The open program with and without checkpointing, compile and fusion.
    runComparison_ = new views::RunComparisonModel(this);
    auto* table = new QTableView;
    table->setObjectName(QStringLiteral("runComparisonTable"));
    table->setModel(runComparison_);
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->setWordWrap(false);
    // The program as written is the last run: where the runs are wider than the dock, the table
    // keeps it in sight (the measures stay in the vertical header) until the user scrolls.
    QScrollBar* across = table->horizontalScrollBar();
    connect(across, &QScrollBar::rangeChanged, this, [this, across](int, int most) {
        if (runsFollowLast_) across->setValue(most);
    });
    connect(across, &QScrollBar::actionTriggered, this, [this] { runsFollowLast_ = false; });
    QDockWidget* runs = addDock(QStringLiteral("runComparisonDock"), tr("Run comparison"), table,
                                Qt::RightDockWidgetArea);
    tabifyDockWidget(besideStrategies, runs);
    lazyTraces_ = new LazyTracesPanel(
        jobs_, [this] { return sessionsPath(); }, this);
    // Beside the token graph, which a replay fills; the left tabs are full.
    QDockWidget* traces = addDock(QStringLiteral("lazyTracesDock"), tr("Lazy traces"), lazyTraces_,
                                  Qt::BottomDockWidgetArea);
    tabifyDockWidget(graph, traces);
    connect(lazyTraces_, &LazyTracesPanel::replayRequested, this, &MainWindow::replayLazyTrace);
    connect(sessions_, &SessionActions::storeOpened, lazyTraces_, &LazyTracesPanel::refresh);
}

// A stored plan brings its settings to the toolbar; the memory budget is not stored (a check,
// not part of the plan), so the one given stays for the next re-plan.
void MainWindow::showStoredSettings(PlanSettings settings) {
    settings.memory_budget = controls_->memoryBudget();
    controls_->setSettings(settings);
}

QString MainWindow::sessionsPath() const {
    return sessions_->store() ? QString::fromStdString(sessions_->store()->path()) : QString();
}

void MainWindow::openLazyProgram(const QString& path, bool remember) {
    lastFailure_.clear();
    pendingPath_ = path;
    const std::string recordTo = sessions_->recording() ? sessionsPath().toStdString() : "";
    jobs_->submit(
        {tr("Running %1").arg(QFileInfo(path).fileName()), kShownPlanKey, this},
        [file = path.toStdString(), recordTo](const Progress& p) {
            return run_lazy_job(file, p, recordTo);
        },
        [this, remember, path](const LazyShown& shown) {
            pendingRemember_ = remember;
            onLazyShown(shown, path);
            if (!shown.record_error.empty())
                status_->showMessage(
                    status_->currentMessage() +
                    tr("; NOT recorded: %1").arg(QString::fromStdString(shown.record_error)));
            if (!shown.recorded_id) return;
            lazyTraces_->refresh();
            if (shown.failure.empty())
                status_->showMessage(status_->currentMessage() +
                                     tr("; recorded as lazy trace %1").arg(shown.recorded_id));
        },
        [this](const JobFailure& f) { onFailed(f); });
}

void MainWindow::replayLazyTrace(qint64 id) {
    lastFailure_.clear();
    jobs_->submit(
        {tr("Replaying lazy trace %1").arg(id), kShownPlanKey, this},
        [path = sessionsPath().toStdString(), id](const Progress& p) {
            return replay_lazy_job(path, id, p);
        },
        [this](const ReplayedLazyTrace& replayed) {
            pendingRemember_ = false;
            // Its program is the stored text: the file it came from may have changed since.
            onLazyShown(replayed.shown, QString());
            lazyTraces_->showReplay(replayed);
            dock(QStringLiteral("lazyTracesDock"))->raise();
            if (replayed.shown.failure.empty())
                status_->showMessage(tr("Lazy trace %1 replayed: %2")
                                         .arg(replayed.recorded.id)
                                         .arg(QString::fromStdString(replayed.verdict)));
        },
        [this](const JobFailure& f) { onFailed(f); });
}

void MainWindow::openSessionExport(const QString& path, bool remember) {
    lastFailure_.clear();
    pendingPath_ = path;
    jobs_->submit(
        {tr("Opening %1").arg(QFileInfo(path).fileName()), kShownPlanKey, this},
        [file = path.toStdString()](const Progress&) { return read_session_export(file); },
        [this, remember](const ExportedShown& shown) {
            showStoredPlan(shown.outcome, remember, tr("An exported session"));
            const QString title = QString::fromStdString(shown.title);
            QString text = tr("Session %1 (%2) as exported").arg(shown.id).arg(title);
            if (const auto& history = shown.outcome.iterations)
                text += tr(": the plan in force after %1")
                            .arg(QString::fromStdString(sessions::history_text(*history)));
            if (!shown.altered_reason.empty())
                text += tr(" — ALTERED: %1").arg(QString::fromStdString(shown.altered_reason));
            status_->showMessage(text);
        },
        [this](const JobFailure& f) { onFailed(f); });
}

void MainWindow::openCheckpoint(const QString& path, bool remember) {
    lastFailure_.clear();
    pendingPath_ = path;
    jobs_->submit(
        {tr("Restoring %1").arg(QFileInfo(path).fileName()), kShownPlanKey, this},
        [file = path.toStdString()](const Progress&) { return read_checkpoint_outcome(file); },
        [this, remember](const PlanOutcome& outcome) {
            showStoredPlan(outcome, remember, tr("A checkpoint"));
            status_->showMessage(
                tr("Checkpoint of %1, restored and validated: plan hash %2")
                    .arg(QString::fromStdString(outcome.plan->source),
                         QString::fromStdString(to_hex(outcome.plan->plan_hash).substr(0, 16))));
        },
        [this](const JobFailure& f) { onFailed(f); });
}

void MainWindow::showStoredPlan(const PlanOutcome& outcome, bool remember, const QString& file) {
    pendingRemember_ = remember;
    showStoredSettings(outcome.settings);
    onPlanned(outcome);
    sessions_->showUnrecorded(outcome);
    // No model in the file: nothing to plan the other strategies with.
    strategies_->showMessage(
        tr("%1 holds its plan, not its model: open the model to compare strategies").arg(file));
}

void MainWindow::onLazyShown(const LazyShown& shown, const QString& program) {
    if (shown.buffers.plan) {
        onPlanned(shown.buffers);
        sessions_->showUnrecorded(shown.buffers);
        strategies_->showMessage(tr("A lazy program's pool buffers, planned by the auto strategy"));
    } else {
        // No buffer was allocated: the plan shown before is not this program's, so nothing of
        // it stays (the arena views, the summary, what File > Export and Replay act on).
        ctx_->setPlan(nullptr, nullptr);
        showNoModel(program);
        status_->clearPlan();
        sessions_->showUnrecorded({});
        strategies_->showMessage(tr("A lazy program that allocated no pool buffers: no plan"));
    }
    // The trace's events are the axis every panel steps through; buffer lifetimes are in the
    // same units, so the arena and live ranges follow the token graph.
    ctx_->setEventAxis(views::EventAxis(tr("event"), shown.trace->events.size()));
    tokenGraph_->setTrace(shown.trace);
    lazyState_->setTrace(shown.trace);
    runsFollowLast_ = true;
    runComparison_->setRuns(shown.comparison);
    for (const char* name : {"tokenGraphDock", "lazyStateDock", "runComparisonDock"})
        dock(name)->raise();
    const QString summary =
        tr("Lazy program %1: %2 in %3, %4; pool peak %5, planned arena %6; trace hash %7")
            .arg(QString::fromStdString(shown.name),
                 views::counted(shown.stats.events, "event", "events"),
                 views::counted(shown.stats.plans, "plan", "plans"),
                 views::counted(shown.stats.steps, "step", "steps"))
            .arg(views::humanBytes(shown.stats.pool_peak_bytes),
                 views::humanBytes(
                     shown.buffers.plan ? shown.buffers.plan->arenas.front().solution.height : 0),
                 QString::fromStdString(shown.trace_hash.substr(0, 16)));
    setWindowTitle(tr("%1 — TMMU Studio")
                       .arg(QFileInfo(QString::fromStdString(shown.path)).completeBaseName()));
    stoppedRun_ = QString::fromStdString(shown.failure);
    if (shown.failure.empty()) {
        status_->showMessage(summary);
        return;
    }
    // The trace up to the error is on screen, the cursor on its last event.
    ctx_->setCurrentEvent(shown.trace->events.empty() ? 0 : shown.trace->events.size() - 1);
    lastFailure_ = stoppedRun_;
    status_->showMessage(tr("Stopped: %1").arg(lastFailure_));
    showFailureBox(lastFailure_);
    emit planFailed(lastFailure_);
}

void MainWindow::showNoModel(const QString& program) {
    // Re-plan runs the program again (none for a replayed trace); nothing acts on the model
    // shown before it.
    model_.reset();
    modelPath_ = program;
    pendingPath_.clear();
    bindingsPath_.clear();
    controls_->setModelKind(ModelKind::DsaCsv, false); // what its buffers would be planned as
    bindingsAction_->setEnabled(false);
    iterationsAction_->setEnabled(false);
    shardAction_->setEnabled(false);
}

void MainWindow::onRunShown(const RunShown& shown) {
    pendingRemember_ = false;
    onPlanned(shown.registers);
    sessions_->showUnrecorded(shown.registers);
    const uint64_t instructions = shown.decode->plan.instructions.size();
    ctx_->setEventAxis(views::EventAxis(tr("instruction"), instructions));
    instructions_->setProgram(shown.decode, shown.registers.plan);
    const runtime::RunResult& run = shown.record->result;
    instructions_->setDeviceTime(run.decode_instruction_seconds, run.decode_step_seconds().size());
    dispatch_->setRun(
        std::shared_ptr<const runtime::RunResult>(shown.record, &shown.record->result));
    if (shown.parity)
        parity_->setParity(shown.parity, QString::fromStdString(shown.record->backend),
                           shown.parity_gate, shown.parity_passes);
    else
        parity_->showMessage(
            shown.record->backend == "cpu"
                ? tr("This run is the CPU backend's: compare a GPU backend's run with it")
                : tr("Run with \"Compare with CPU\" to compare every step with the CPU backend"));
    compareStrategies(shown.registers);
    const runtime::RunResult& r = shown.record->result;
    status_->showMessage(
        tr("%1 on %2: %3 tokens generated per sequence; the views show its decode registers, "
           "one instruction per step")
            .arg(QString::fromStdString(shown.record->model),
                 QString::fromStdString(shown.record->backend))
            .arg(r.generated_ids.empty() ? 0 : r.generated_ids.front().size()));
}

QDockWidget* MainWindow::dock(const QString& objectName) const {
    return findChild<QDockWidget*>(objectName, Qt::FindDirectChildrenOnly);
}

QWidget* MainWindow::panel(const QString& name) {
    if (name == QStringLiteral("window")) return this;
    if (name == QStringLiteral("arena-layout")) return centralWidget();
    // "live-ranges" is the dock "liveRangesDock".
    QString objectName;
    for (const QString& word : name.split(QLatin1Char('-')))
        objectName += objectName.isEmpty() ? word : word.left(1).toUpper() + word.mid(1);
    QDockWidget* d = dock(objectName + QStringLiteral("Dock"));
    if (!d) return nullptr;
    d->show();
    d->raise();
    return d;
}

QList<QDockWidget*> MainWindow::docks() const {
    return findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly);
}

void MainWindow::resetLayout() {
    for (QDockWidget* d : docks()) {
        d->setFloating(false);
        d->show();
    }
    restoreState(defaultState_, kStateVersion);
    fitDocks(size());
}

void MainWindow::connectJobs() {
    connect(jobs_, &JobRunner::jobStarted, status_, &StudioStatusBar::jobStarted);
    connect(jobs_, &JobRunner::jobProgress, status_, &StudioStatusBar::jobProgress);
    connect(jobs_, &JobRunner::busyChanged, status_, [this](bool busy) {
        if (!busy) status_->jobsStopped();
    });
    connect(status_, &StudioStatusBar::cancelRequested, jobs_, qOverload<>(&JobRunner::cancel));
}

void MainWindow::openModel(const QString& path, const PlanSettings& settings, bool remember) {
    if (looks_like_lazy_program_file(path.toStdString())) {
        openLazyProgram(path, remember);
        return;
    }
    if (looks_like_session_export_file(path.toStdString())) {
        openSessionExport(path, remember);
        return;
    }
    if (looks_like_checkpoint_file(path.toStdString())) {
        openCheckpoint(path, remember);
        return;
    }
    PlanJob job;
    job.path = path.toStdString();
    job.settings = settings;
    pendingPath_ = path;
    startJob(std::move(job), remember);
}

void MainWindow::openModel(const QString& path) {
    try {
        PlanSettings settings = controls_->settings();
        // Bindings name one model's dims and inputs: another file starts without any.
        if (QFileInfo(path) != QFileInfo(modelPath_)) settings.bindings = {};
        openModel(path, settings);
    } catch (const Failure& f) {
        onFailed(JobFailure::of(f));
    }
}

bool MainWindow::openModelSync(const QString& path, const PlanSettings& settings) {
    controls_->setSettings(settings);
    openModel(path, settings, false);
    jobs_->waitForIdle();
    // A lazy program that allocated no buffers shows its trace without a plan.
    return lastFailure_.isEmpty() && (ctx_->plan() != nullptr || tokenGraph_->view()->trace());
}

void MainWindow::replan() {
    const QString path = modelPath_.isEmpty() ? pendingPath_ : modelPath_;
    if (path.isEmpty()) {
        if (tokenGraph_->view()->trace())
            status_->showMessage(tr("Nothing to re-plan: a replayed lazy trace runs its stored "
                                    "program, and allocated no buffers; Replay in Lazy traces "
                                    "runs it again"));
        return;
    }
    if (!model_ && looks_like_lazy_program_file(path.toStdString())) {
        openLazyProgram(path, false); // no buffers, or it failed: there is no model to plan
        return;
    }
    PlanSettings settings;
    try {
        settings = controls_->settings();
    } catch (const Failure& f) {
        onFailed(JobFailure::of(f));
        return;
    }
    PlanJob job;
    job.path = path.toStdString();
    job.settings = settings;
    // Reuse the loaded graph unless loading depends on what changed (configs: batch, seq, mode;
    // ONNX models: their bindings).
    if (model_ && !load_depends_on_change(model_->kind, loadedWith_, settings)) job.model = model_;
    pendingPath_ = QString::fromStdString(job.path);
    startJob(std::move(job), false);
}

void MainWindow::showStoredOutcome(const PlanOutcome& outcome) {
    pendingRemember_ = false;
    pendingPath_.clear();
    lastFailure_.clear();
    showStoredSettings(outcome.settings);
    onPlanned(outcome);
    sessions_->showUnrecorded(outcome);
    // The stored plan is shown as it was; the other strategies are planned again beside it
    // (the comparison is never stored).
    strategies_->showMessage(tr("Comparing strategies…"));
    compareStrategies(outcome);
}

void MainWindow::startJob(PlanJob job, bool remember) {
    pendingRemember_ = remember;
    lastFailure_.clear();
    strategies_->showMessage(tr("Comparing strategies…"));
    const bool compare = job.compare;
    const QString path = QString::fromStdString(job.path);
    const QString file = QFileInfo(path).fileName();
    const PlanSettings settings = job.settings;
    jobs_->submit(
        {tr("Planning %1").arg(file), kShownPlanKey, this},
        [job = std::move(job)](const Progress& p) { return run_plan_job(job, p); },
        [this, compare](const PlanOutcome& outcome) {
            onPlanned(outcome);
            // After onPlanned: the run is recorded once it is on screen.
            sessions_->recordRun(outcome);
            if (compare) compareStrategies(outcome);
        },
        [this, path, settings, remember](const JobFailure& f) {
            if (f.superseded) return; // no dims dialog for a file another replaced
            const bool unbound =
                f.code.toStdString() == failure_code_name(FailureCode::UnboundDimension);
            onFailed(f, !unbound);
            // The dims dialog answers it: the user gives the values the message names.
            if (unbound) askForBindings(path, settings, f.text(), remember);
        });
}

void MainWindow::compareStrategies(const PlanOutcome& outcome) {
    jobs_->submit(
        {tr("Comparing strategies"), kShownPlanKey, this},
        [model = outcome.model, settings = outcome.settings](const Progress& p) {
            return compare_strategies(*model, settings, p);
        },
        [this](const std::vector<views::StrategyResult>& results) { onCompared(results); },
        [this](const JobFailure& f) {
            if (f.superseded) return; // the newer job shows its own comparison
            strategies_->showMessage(tr("Comparison stopped: %1").arg(f.text()));
        });
}

void MainWindow::onPlanned(const PlanOutcome& outcome) {
    lastFailure_.clear();
    const QString path = QString::fromStdString(outcome.model->path);
    // A re-plan of the same model keeps its unit of time: a lazy program's buffers live over
    // trace events, which the planning job does not know.
    const QString timeUnit = !outcome.timeUnit.isEmpty() ? outcome.timeUnit
                             : outcome.model == model_   ? ctx_->timeUnit()
                                                         : QString();
    if (outcome.model != model_) loadedWith_ = outcome.settings; // freshly loaded
    shownWith_ = outcome.settings;
    model_ = outcome.model;
    modelPath_ = path;
    // A re-plan of the same model keeps the cursor and the zoom (PlanContext::setPlan).
    ctx_->setPlan(outcome.plan, outcome.model, timeUnit);
    // An IR graph with a shape envelope is bound by Plan > Dimensions as an ONNX model is.
    const bool dynamic = outcome.model->kind == ModelKind::IrJson && outcome.model->graph &&
                         !outcome.model->graph->dims.empty();
    controls_->setModelKind(outcome.model->kind, dynamic);
    // The toolbar keeps the bindings the shown model was loaded with, so a re-plan keeps them.
    controls_->setBindings(outcome.settings.bindings);
    bindingsPath_ = outcome.model->kind == ModelKind::Onnx || dynamic ? path : QString();
    bindingsAction_->setEnabled(!bindingsPath_.isEmpty());
    iterationsAction_->setEnabled(runs_over_iterations(*outcome.model, outcome.settings));
    shardAction_->setEnabled(outcome.model->kind != ModelKind::DsaCsv);
    if (outcome.model->kind == ModelKind::TransformerConfig) runPanel_->setConfigPath(path);
    status_->showPlan(*outcome.plan, outcome.model.get());
    status_->clearMessage();
    setWindowTitle(tr("%1 — TMMU Studio").arg(QFileInfo(path).completeBaseName()));
    if (pendingRemember_) rememberFile(path);
    pendingRemember_ = false;
    emit planShown();
}

void MainWindow::onFailed(const JobFailure& failure, bool showBox) {
    // A job a newer one replaced was not cancelled by anyone: not news, whatever the two were
    // (a plan, a session, a checkpoint, a lazy trace or an iterations run).
    if (failure.superseded) return;
    lastFailure_ = failure.text();
    const bool keep = ctx_->plan() != nullptr;
    QString text = failure.cancelled() ? tr("Planning cancelled") : lastFailure_;
    if (keep) text += tr(" — the previous plan is still shown");
    status_->showMessage(text);
    settleComparison();
    if (!failure.cancelled() && showBox) showFailureBox(lastFailure_);
    emit planFailed(lastFailure_);
}

void MainWindow::settleComparison() {
    if (strategies_->results().empty())
        strategies_->showMessage(tr("No comparison"));
    else if (ctx_->plan())
        strategies_->setResults(strategies_->results(), ctx_->plan()->strategy);
}

void MainWindow::onCompared(const std::vector<views::StrategyResult>& results) {
    strategies_->setResults(results, ctx_->plan() ? ctx_->plan()->strategy : std::string());
}

void MainWindow::showMiddleOfPlan() {
    showStep(ctx_->eventCount() / 2);
}

void MainWindow::showStep(uint64_t step) {
    const Plan* plan = ctx_->plan();
    if (!plan) return;
    ctx_->setCurrentEvent(std::min(step, std::max<uint64_t>(ctx_->eventCount(), 1) - 1));
    int best = -1;
    for (int i : ctx_->liveAt(ctx_->currentTime())) {
        const PlannedTensor& t = plan->tensors[size_t(i)];
        auto score = [](const PlannedTensor& p) {
            return std::pair(p.role == Role::Activation, p.size);
        };
        if (best < 0 || score(t) > score(plan->tensors[size_t(best)])) best = i;
    }
    ctx_->selectTensor(best);
}

void MainWindow::restoreSettings() {
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    // No saved layout (a first run, or one saved by an older version): the default one, sized
    // for this window.
    if (!restoreState(s.value(QStringLiteral("window/state")).toByteArray(), kStateVersion))
        fitDocks(size());
    int mode = s.value(QStringLiteral("view/colorMode"), int(views::ColorMode::Role)).toInt();
    ctx_->setColorMode(mode == int(views::ColorMode::Slot) ? views::ColorMode::Slot
                                                           : views::ColorMode::Role);
    sessions_->setRecording(s.value(QStringLiteral("sessions/record"), true).toBool());
    setTheme(
        theme_from_name(s.value(QStringLiteral("view/theme")).toString()).value_or(Theme::System));
    rebuildRecentMenu();
}

void MainWindow::saveSettings() const {
    if (!persist_) return;
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState(kStateVersion));
    s.setValue(QStringLiteral("view/colorMode"), int(ctx_->colorMode()));
    s.setValue(QStringLiteral("sessions/record"), sessions_->recordAction()->isChecked());
}

void MainWindow::childEvent(QChildEvent* event) {
    // The layout makes a tab bar for each group of tabbed docks, as a child of the window.
    if (event->polished())
        if (auto* bar = qobject_cast<QTabBar*>(event->child())) {
            bar->setElideMode(Qt::ElideNone);
            bar->setUsesScrollButtons(true);
        }
    QMainWindow::childEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    jobs_->cancelAll();
    event->accept();
}

} // namespace tmmu::studio
