#pragma once
// The studio's main window: planning toolbar, step toolbar, the panels in docks around the arena
// layout, menus, status bar, settings. It owns the one PlanContext every panel follows and the
// JobRunner whose worker loads and plans models (and opens, replays and exports sessions) off the
// UI thread. Panels never compute plans.
#include "planning.h"
#include "theme.h"

#include "apply/memory_binding.h"

#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <memory>

QT_BEGIN_NAMESPACE
class QAction;
class QActionGroup;
class QDialog;
class QDockWidget;
class QMenu;
QT_END_NAMESPACE

namespace tmmu::views {
class PlanContext;
class DispatchChart;
class ParityChart;
class InstructionPanel;
class MemoryChart;
class StrategyChart;
class StepControl;
class TensorTablePanel;
class TokenGraphPanel;
class LazyStatePanel;
class RunComparisonModel;
} // namespace tmmu::views

namespace tmmu::studio {

class ApplyDialog;
class DimsDialog;
class IterationsDialog;
class EnvelopeDialog;
class ShardDialog;
class JobRunner;
struct JobFailure;
struct LazyShown;
class PlanningControls;
class RunPanel;
class LazyTracesPanel;
struct ReplayedLazyTrace;
struct RunShown;
class SessionActions;
class StudioStatusBar;

// Job key of everything whose result replaces the plan on screen (planning, the strategy
// comparison that follows it, opening a session): the newest such request wins.
inline const QString kShownPlanKey = QStringLiteral("shown plan");

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    // Bump when docks are added, removed or renamed: older saved layouts are then ignored.
    static constexpr int kStateVersion = 6;
    static constexpr int kMaxRecentFiles = 10;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads and plans a model off the UI thread, then compares the strategies; the plan on
    // screen stays until it succeeds.
    void openModel(const QString& path, const PlanSettings& settings, bool remember = true);
    void openModel(const QString& path); // with the toolbar's settings
    // Runs a lazy program (tmmu-lazy-program JSON) off the UI thread and shows its trace: the
    // token graph and engine state docks, its pool buffers as the plan on screen, one event per
    // step. openModel comes here for files that look like one.
    // With Sessions > Record runs on, the run is recorded as a lazy trace (the Lazy traces
    // panel lists it).
    void openLazyProgram(const QString& path, bool remember = true);
    // Runs a recorded lazy trace again from its stored program (off the UI thread), shows it as
    // openLazyProgram does, and reports in the Lazy traces panel whether it matches.
    void replayLazyTrace(qint64 id);
    // Shows a session exported as JSON (tmmu export --format json) as its plan, off the UI
    // thread; openModel comes here for files that look like one. There is no model in it to
    // re-plan or compare strategies with.
    void openSessionExport(const QString& path, bool remember = true);
    // Shows a plan checkpoint (tmmu plan --checkpoint), restored and validated, as its plan, off
    // the UI thread (checkpoint_jobs.h); openModel comes here for files that look like one.
    void openCheckpoint(const QString& path, bool remember = true);
    // openModel, waiting (in a local event loop) until every job is done, strategy comparison
    // included. Returns false on failure or when nothing was shown. For screenshot mode.
    bool openModelSync(const QString& path, const PlanSettings& settings);
    // Plans the current model again with the toolbar's settings (off the UI thread).
    void replan();
    // Plan > Dimensions: the dims dialog for the ONNX model on screen (or the one that just
    // failed with UNBOUND_DIMENSION); OK re-plans it with the bindings. A model that fails with
    // UNBOUND_DIMENSION opens the dialog by itself. The model's inputs are read off the UI thread.
    void editBindings();
    // The dims dialog while it is open, else null.
    DimsDialog* dimsDialog() const;
    EnvelopeDialog* envelopeDialog() const; // Plan > Dimensions of an IR graph, while open
    // Plan > Distributed run: the rank to plan and the roles sharded across the ranks (as
    // --world-size, --rank and --shard); OK keeps them in the toolbar and re-plans. Greyed for
    // an offset problem, which has neither roles nor ranks.
    void editShard();
    // The distributed-run dialog while it is open, else null.
    ShardDialog* shardDialog() const;
    // Plan > Apply to host memory: the apply dialog for the plan on screen; Apply binds, fills,
    // reads back and commits it off the UI thread (Cancel in the status bar stops it) and shows
    // what it did, state hash included, in resultBox(). Greyed without a plan.
    void applyToHost();
    ApplyDialog* applyDialog() const; // while open, else null
    // Plan > Run iterations: for an IR graph with a shape envelope on screen, the iterations
    // dialog; Run runs them from the plan shown as tmmu plan --iteration does (off the UI
    // thread), shows the plan in force after the last (recorded as a session, compared) and
    // lists every iteration in resultBox(). A run that fails lists those decided before it and
    // keeps the plan on screen. Greyed for other models.
    void runIterations();
    IterationsDialog* iterationsDialog() const; // while open, else null
    // The box the last apply's or iteration run's result (or failure) is shown in; null before
    // the first.
    QMessageBox* resultBox() const { return resultBox_; }
    // Shows an outcome that was not planned here (a recorded session) exactly as a planned one,
    // without re-planning; a running planning job is cancelled so it cannot replace it.
    void showStoredOutcome(const PlanOutcome& outcome);
    // After a job that replaced the shown plan's and showed none itself: the comparison panel
    // says what it holds again rather than the "Comparing strategies…" a plan job left there.
    void settleComparison();
    // A plan from a file without its model (`file`: "A checkpoint"), shown as planned.
    void showStoredPlan(const PlanOutcome& outcome, bool remember, const QString& file);

    // Screenshot state: the step in the middle and a large tensor live there selected.
    void showMiddleOfPlan();
    // The same at `step` (clamped to the plan's last step).
    void showStep(uint64_t step);
    // A panel by its --screenshot-panel name (studio_options.h: panel_names()), its dock
    // raised when tabbed behind another; the whole window for "window"; null for an unknown name.
    QWidget* panel(const QString& name);
    // View > Theme: applies theme; chosen from the menu it is also saved (restoreSettings
    // applies the saved one).
    void setTheme(Theme theme);
    Theme theme() const { return theme_; }

    void restoreSettings();
    void saveSettings() const;
    // Screenshot mode and some tests run without touching the user's settings.
    void setPersistSettings(bool persist) { persist_ = persist; }

    views::PlanContext* context() const { return ctx_; }
    PlanningControls* controls() const { return controls_; }
    StudioStatusBar* studioStatusBar() const { return status_; }
    JobRunner* jobs() const { return jobs_; }
    SessionActions* sessions() const { return sessions_; }
    views::MemoryChart* memoryChart() const { return memory_; }
    views::StrategyChart* strategyChart() const { return strategies_; }
    views::StepControl* stepControl() const { return step_; }
    RunPanel* runPanel() const { return runPanel_; }
    views::DispatchChart* dispatchChart() const { return dispatch_; }
    views::ParityChart* parityChart() const { return parity_; }
    views::InstructionPanel* instructionPanel() const { return instructions_; }
    views::TokenGraphPanel* tokenGraph() const { return tokenGraph_; }
    views::LazyStatePanel* lazyState() const { return lazyState_; }
    LazyTracesPanel* lazyTraces() const { return lazyTraces_; }
    views::RunComparisonModel* runComparison() const { return runComparison_; }
    QDockWidget* dock(const QString& objectName) const;
    QList<QDockWidget*> docks() const;
    QString modelPath() const { return modelPath_; }
    // "ARENA_TOO_SMALL at arena 'activations': ..." for the last failed job, else empty.
    QString lastFailure() const { return lastFailure_; }
    // The last failure is a lazy program's run stopping at an engine rule, whose trace up to
    // the error is on screen: a view worth showing, not a failure to open.
    bool showsStoppedProgram() const {
        return !lastFailure_.isEmpty() && lastFailure_ == stoppedRun_;
    }
    QStringList recentFiles() const;
    void resetLayout();
    // Sizes the default layout's docks as shares of a window of this size.
    void fitDocks(QSize window);

  signals:
    void planShown();
    void planFailed(const QString& text);

  protected:
    // Tabbed docks keep whole titles and scroll their tab bar where it is too narrow: elided
    // titles ("Session comparis…") read worse than a tab bar one scrolls.
    void childEvent(QChildEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    // main_window.cpp
    void buildDocks();
    QDockWidget* addDock(const QString& objectName, const QString& title, QWidget* content,
                         Qt::DockWidgetArea area);
    void buildToolbars();
    void connectJobs();
    void startJob(PlanJob job, bool remember);
    void compareStrategies(const PlanOutcome& outcome);
    void onPlanned(const PlanOutcome& outcome);
    // showBox false: the failure is answered by a dialog of its own (the dims dialog).
    void onFailed(const JobFailure& failure, bool showBox = true);
    void onCompared(const std::vector<views::StrategyResult>& results);
    // A model run (Run panel): its registers become the plan on screen, stepped instruction by
    // instruction, with its instructions and dispatch counters beside.
    void onRunShown(const RunShown& shown);
    void buildRunDocks(QDockWidget* besideSessions, QDockWidget* besideCompare,
                       QDockWidget* besideRanges);
    void buildLazyDocks(QDockWidget* besideTable, QDockWidget* besideRanges,
                        QDockWidget* besideStrategies);
    // `program`: the file Re-plan runs again when the program allocated no buffers (empty for
    // a replayed trace, whose program is stored text).
    void onLazyShown(const LazyShown& shown, const QString& program);
    void showNoModel(const QString& program); // a lazy program shown without a plan
    QString sessionsPath() const;             // the open sessions database, "" when none
    void showStoredSettings(PlanSettings settings);
    // main_window_menus.cpp
    void buildMenus();
    void buildStepShortcuts(QMenu* menu);
    void openFileDialog();
    void rememberFile(const QString& path);
    void rebuildRecentMenu();
    void showAbout();
    void showShortcuts();
    void showFailureBox(const QString& text);
    // main_window_dims.cpp
    void askForBindings(const QString& path, const PlanSettings& settings, const QString& problem,
                        bool remember);
    void showDimsDialog(const QString& path, const ModelAnnotations& declared,
                        const PlanSettings& settings, const QString& problem, bool remember);
    void showEnvelopeDialog(const Graph& model); // for bindingsPath_, an IR graph shown
    // main_window_apply.cpp
    void runApply(std::shared_ptr<const Plan> plan, const ApplyOptions& options);
    // A dialog about the plan on screen (Apply, Run iterations) closes when another plan is
    // shown while it is open, saying so as `what`: what it would do belongs to the old plan.
    void closeOnPlanChange(QDialog* dialog, const QString& what);
    // main_window_iterations.cpp
    void startIterations(const PlanOutcome& shown, const std::vector<DimBinding>& iterations);
    // One non-blocking box, reused, for what Apply and Run iterations did.
    void showResultBox(QMessageBox::Icon icon, const QString& title, const QString& html);

    views::PlanContext* ctx_;
    JobRunner* jobs_;
    PlanningControls* controls_;
    StudioStatusBar* status_;
    SessionActions* sessions_ = nullptr;
    views::StepControl* step_ = nullptr;
    views::MemoryChart* memory_ = nullptr;
    views::StrategyChart* strategies_ = nullptr;
    Theme theme_ = Theme::System;
    QActionGroup* themes_ = nullptr; // View > Theme
    views::TensorTablePanel* table_ = nullptr;
    RunPanel* runPanel_ = nullptr;
    views::DispatchChart* dispatch_ = nullptr;
    views::ParityChart* parity_ = nullptr;
    views::InstructionPanel* instructions_ = nullptr;
    views::TokenGraphPanel* tokenGraph_ = nullptr;
    views::LazyStatePanel* lazyState_ = nullptr;
    LazyTracesPanel* lazyTraces_ = nullptr;
    views::RunComparisonModel* runComparison_ = nullptr;
    bool runsFollowLast_ = true; // the run comparison scrolls to its last run (buildLazyDocks)
    QMenu* recentMenu_ = nullptr;
    QActionGroup* colorModes_ = nullptr;
    QMessageBox* failureBox_ = nullptr;
    QAction* bindingsAction_ = nullptr; // Plan > Dimensions
    QPointer<DimsDialog> dimsDialog_;
    QPointer<EnvelopeDialog> envelopeDialog_;
    QAction* shardAction_ = nullptr; // Plan > Distributed run
    QPointer<ShardDialog> shardDialog_;
    QAction* applyAction_ = nullptr; // Plan > Apply to host memory
    QPointer<ApplyDialog> applyDialog_;
    ApplyOptions applyOptions_;           // the last applied, offered next time
    QAction* iterationsAction_ = nullptr; // Plan > Run iterations
    QPointer<IterationsDialog> iterationsDialog_;
    QString iterationLines_; // the last lines run, offered next time
    QMessageBox* resultBox_ = nullptr;
    QString bindingsPath_; // the ONNX file editBindings() binds: shown, or failed for dims
    QByteArray defaultState_;
    std::shared_ptr<const LoadedModel> model_;
    PlanSettings loadedWith_; // settings the shown model was loaded with (batch, seq, mode)
    PlanSettings shownWith_;  // settings the plan on screen was made with
    QString modelPath_;
    QString pendingPath_; // the file the running job opens
    bool pendingRemember_ = false;
    QString stoppedRun_; // the failure of the lazy run shown, "" when it ran to its end
    QString lastFailure_;
    bool persist_ = true;
};

} // namespace tmmu::studio
