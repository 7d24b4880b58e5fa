#include "session_actions.h"

#include "context/plan_context.h"
#include "core/failure.h"
#include "core/units.h"
#include "job_runner.h"
#include "main_window.h"
#include "panels/session_compare_panel.h"
#include "panels/sessions_panel.h"
#include "session_iterations.h"
#include "session_jobs.h"
#include "session_store.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>

#include <array>
#include <fmt/format.h>

namespace tmmu::studio {
namespace {

using sessions::ExportFormat;

constexpr int kCompareMinHeight = 440;

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString failureText(const Failure& f) {
    return qs(f.what());
}

// Jobs whose results fill the comparison panel: the newest request replaces the previous one.
const QString kComparisonKey = QStringLiteral("comparison");

struct FormatFilter {
    ExportFormat format;
    const char* filter;
};

constexpr std::array<FormatFilter, 5> kFilters{{
    {ExportFormat::Html, "HTML report (*.html)"},
    {ExportFormat::Pdf, "PDF report (*.pdf)"},
    {ExportFormat::Csv, "CSV tensor table (*.csv)"},
    {ExportFormat::Json, "JSON (*.json)"},
    {ExportFormat::ChromeTrace, "Chrome trace for Perfetto (*.json)"},
}};

} // namespace

SessionActions::SessionActions(MainWindow* window, views::PlanContext* ctx, JobRunner* jobs)
    : QObject(window), window_(window), ctx_(ctx), jobs_(jobs),
      panel_(new views::SessionsPanel(window)), compare_(new views::SessionComparePanel(window)),
      record_(new QAction(tr("&Record runs"), this)) {
    panel_->setObjectName(QStringLiteral("sessionsPanel"));
    compare_->setObjectName(QStringLiteral("sessionComparePanel"));
    record_->setCheckable(true);
    record_->setChecked(true);
    record_->setEnabled(false); // until a store is open
    record_->setToolTip(
        tr("Record every successful planning run, and every lazy program run (a failed one with "
           "its trace up to the error), in the sessions database"));
    panel_->setStore(nullptr, tr("no sessions database is open"));
    connect(panel_, &views::SessionsPanel::openRequested, this, &SessionActions::openSession);
    connect(panel_, &views::SessionsPanel::replayRequested, this, &SessionActions::replaySession);
    connect(panel_, &views::SessionsPanel::compareRequested, this,
            &SessionActions::compareSessions);
    connect(panel_, &views::SessionsPanel::renameRequested, this, &SessionActions::renameSession);
    connect(panel_, &views::SessionsPanel::editRequested, this, &SessionActions::editSession);
    connect(panel_, &views::SessionsPanel::deleteRequested, this, &SessionActions::deleteSessions);
}

SessionActions::~SessionActions() = default;

bool SessionActions::openStore(const QString& path, sessions::StoreAccess access) {
    store_.reset();
    storeError_.clear();
    try {
        store_ = std::make_unique<sessions::SessionStore>(path.toStdString(), access);
    } catch (const Failure& f) {
        storeError_ = failureText(f);
    } catch (const std::exception& e) {
        storeError_ = QString::fromUtf8(e.what());
    }
    panel_->setStore(store_.get(), storeError_);
    record_->setEnabled(store_ != nullptr);
    storeErrorPending_ = !store_;
    if (!store_) report(tr("Sessions are not recorded: %1").arg(storeError_));
    emit storeOpened(store_ != nullptr);
    return store_ != nullptr;
}

bool SessionActions::recording() const {
    return record_->isChecked() && store_;
}

void SessionActions::setRecording(bool on) {
    record_->setChecked(on);
}

StoreRef SessionActions::storeRef() const {
    return StoreRef{store_ ? store_->path() : std::string(), probe_};
}

void SessionActions::report(const QString& text) {
    lastMessage_ = text;
    window_->statusBar()->showMessage(text);
}

void SessionActions::addExportAction(QMenu* file) {
    QAction* exportAction = new QAction(tr("&Export…"), this);
    exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportAction->setToolTip(
        tr("Write the plan on screen as HTML, PDF, CSV, JSON or a Chrome trace"));
    connect(exportAction, &QAction::triggered, this, &SessionActions::exportDialog);
    file->addAction(exportAction);
}

QMenu* SessionActions::buildMenu(QWidget* parent) {
    auto* menu = new QMenu(tr("&Sessions"), parent);
    menu->addAction(record_);
    menu->addSeparator();
    menu->addAction(tr("Show &sessions"), this, [this] {
        if (QDockWidget* d = window_->dock(QStringLiteral("sessionsDock"))) {
            d->show();
            d->raise();
        }
        panel_->searchField()->setFocus();
    });
    menu->addAction(tr("&Replay shown session"), this, [this] {
        if (current_)
            replaySession(current_);
        else
            report(tr("The plan on screen is not a recorded session"));
    });
    menu->addAction(tr("Show &comparison"), this, &SessionActions::raiseCompare);
    return menu;
}

void SessionActions::showUnrecorded(const PlanOutcome& outcome) {
    shown_ = std::make_shared<const PlanOutcome>(outcome);
    current_ = 0;
    panel_->setCurrentSession(current_);
}

void SessionActions::recordRun(const PlanOutcome& outcome) {
    showUnrecorded(outcome);
    // The first plan clears the status bar: say again, once, why nothing is recorded.
    if (storeErrorPending_) {
        storeErrorPending_ = false;
        report(tr("Sessions are not recorded: %1").arg(storeError_));
    }
    if (!recording() || !outcome.model || !outcome.plan) return;
    // Encoding a large plan takes a while: it happens on the worker, like every store write
    // that is more than a small statement. A run is recorded even when a newer one replaced
    // it on screen by then; only the one on screen becomes the current session.
    const std::string title =
        fmt::format("{} ({})", QFileInfo(qs(outcome.model->path)).completeBaseName().toStdString(),
                    outcome.plan->strategy);
    jobs_->submit(
        {tr("Recording the run"), QString(), this},
        [store = storeRef(), run = shown_, title](const Progress&) {
            return record_run(store, *run, title);
        },
        [this, run = shown_](const RecordedRun& recorded) {
            panel_->refresh();
            if (run != shown_) return;
            current_ = recorded.id;
            lastRecordMs_ = recorded.ms;
            panel_->setCurrentSession(current_);
            emit sessionRecorded(current_);
        },
        [this](const JobFailure& f) { report(tr("Recording the run failed: %1").arg(f.text())); });
}

void SessionActions::openSession(qint64 id) {
    if (!store_) return;
    jobs_->submit(
        {tr("Opening session %1").arg(id), kShownPlanKey, this},
        [store = storeRef(), id](const Progress&) { return open_stored(store, id); },
        [this, id](OpenedSession opened) { showOpened(id, opened); },
        [this, id](const JobFailure& f) {
            if (!f.superseded) {
                window_->settleComparison();
                report(tr("Cannot open session %1: %2").arg(id).arg(f.text()));
            }
            emit openFinished(id, false);
        });
}

void SessionActions::showOpened(qint64 id, OpenedSession& opened) {
    const sessions::Session& s = opened.session;
    if (s.altered) markAltered(s);
    if (!opened.outcome) {
        window_->settleComparison();
        report(tr("Session %1 cannot be shown: %2").arg(id).arg(qs(s.altered_reason)));
        emit openFinished(id, false);
        return;
    }
    window_->showStoredOutcome(*opened.outcome);
    shown_ = std::move(opened.outcome);
    current_ = id;
    panel_->setCurrentSession(id);
    if (s.altered)
        report(tr("Session %1 shown — ALTERED: %2").arg(id).arg(qs(s.altered_reason)));
    else if (s.input.iterations)
        report(tr("Session %1 shown (stored plan, not re-planned): the plan in force after %2")
                   .arg(id)
                   .arg(qs(sessions::history_text(*s.input.iterations))));
    else
        report(tr("Session %1 shown (stored plan, not re-planned)").arg(id));
    emit openFinished(id, true);
}

void SessionActions::markAltered(const sessions::Session& s) {
    panel_->markAltered(s.summary.id, qs(s.altered_reason));
}

void SessionActions::replaySession(qint64 id) {
    if (!store_) return;
    report(tr("Replaying session %1…").arg(id));
    ++replays_;
    jobs_->submit(
        {tr("Replaying session %1").arg(id), kComparisonKey, this},
        [store = storeRef(), id](const Progress& p) { return replay_stored(store, id, p); },
        [this](ReplayedSession replayed) {
            --replays_;
            showReplay(replayed);
        },
        [this, id](const JobFailure& f) {
            --replays_;
            if (!f.superseded) // else the newer job's report stands
                report(f.cancelled() ? tr("Replay of session %1 cancelled").arg(id)
                                     : tr("Replay of session %1 failed: %2").arg(id).arg(f.text()));
            emit replayFinished(false, false);
        });
}

void SessionActions::showReplay(ReplayedSession& replayed) {
    const sessions::Session& stored = replayed.stored;
    const int64_t id = stored.summary.id;
    if (!replayed.result) {
        markAltered(stored);
        report(tr("Session %1 is altered and cannot be replayed: %2")
                   .arg(id)
                   .arg(qs(stored.altered_reason)));
        emit replayFinished(false, false);
        return;
    }
    const sessions::ReplayResult& r = *replayed.result;
    views::CompareSide before{
        tr("session %1 as recorded (tmmu %2)").arg(id).arg(qs(stored.program_version)),
        std::make_shared<const Plan>(std::move(*replayed.stored.plan))};
    views::CompareSide after{tr("replayed with tmmu %1").arg(QStringLiteral(TMMU_VERSION)),
                             std::make_shared<const Plan>(std::move(replayed.result->replayed))};
    compare_->setComparison(r.comparison, std::move(before), std::move(after));
    raiseCompare();
    QString text =
        r.comparison.identical
            ? tr("Replay of session %1: identical").arg(id)
            : tr("Replay of session %1: the plan differs (%2 moved)")
                  .arg(id)
                  .arg(QString::fromStdString(count_of(r.comparison.moved.size(), "tensor")));
    // Sessions recorded with the file's hash also say whether the file still is what was planned.
    if (r.iterations) text += QStringLiteral("; ") + qs(r.iterations->verdict);
    if (r.source.state != sessions::SourceCheck::State::NotRecorded)
        text += QStringLiteral("; ") + qs(r.source.line);
    report(text);
    emit replayFinished(true, r.identical());
}

void SessionActions::compareSessions(qint64 before, qint64 after) {
    if (!store_) return;
    jobs_->submit(
        {tr("Comparing sessions %1 and %2").arg(before).arg(after), kComparisonKey, this},
        [store = storeRef(), before, after](const Progress&) {
            return compare_stored(store, before, after);
        },
        [this](ComparedSessions compared) { showComparison(compared); },
        [this, before, after](const JobFailure& f) {
            if (!f.superseded) // else the newer job's report stands
                report(f.cancelled()
                           ? tr("Comparing sessions %1 and %2 cancelled").arg(before).arg(after)
                           : tr("Cannot compare sessions %1 and %2: %3")
                                 .arg(before)
                                 .arg(after)
                                 .arg(f.text()));
            emit compareFinished(false);
        });
}

void SessionActions::showComparison(ComparedSessions& compared) {
    sessions::Session& a = compared.before;
    sessions::Session& b = compared.after;
    for (const sessions::Session* s : {&a, &b})
        if (s->altered) markAltered(*s);
    const int64_t before = a.summary.id, after = b.summary.id;
    if (!compared.comparison) {
        const sessions::Session& broken = a.plan ? b : a;
        report(tr("Cannot compare sessions %1 and %2: session %3 does not decode: %4")
                   .arg(before)
                   .arg(after)
                   .arg(broken.summary.id)
                   .arg(qs(broken.altered_reason)));
        emit compareFinished(false);
        return;
    }
    // Recorded titles name the strategy already; others get it added.
    auto label = [](const sessions::Session& s) {
        QString title = qs(s.summary.title), strategy = qs(s.summary.strategy);
        if (!title.contains(strategy)) title += QStringLiteral(" [%1]").arg(strategy);
        return tr("session %1: %2").arg(s.summary.id).arg(title);
    };
    const sessions::PlanComparison& c = *compared.comparison;
    compare_->setComparison(c, {label(a), std::make_shared<const Plan>(std::move(*a.plan))},
                            {label(b), std::make_shared<const Plan>(std::move(*b.plan))});
    raiseCompare();
    QString text = c.identical ? tr("Sessions %1 and %2: identical plans").arg(before).arg(after)
                               : tr("Sessions %1 and %2 differ").arg(before).arg(after);
    // Iterations are how a session reached its plan: one plan alike, reached otherwise. The
    // first difference is the histories in short, or the first iteration decided otherwise.
    if (!c.history.empty()) {
        const sessions::SettingChange& first = c.history[0];
        text += tr("; %1 %2 → %3").arg(qs(first.what), qs(first.before), qs(first.after));
    }
    report(text);
    emit compareFinished(true);
}

bool SessionActions::renameSession(qint64 id, const QString& title) {
    sessions::SessionEdit e;
    e.title = title.toStdString();
    try {
        if (!store_) return false;
        store_->edit(id, e);
    } catch (const Failure& f) {
        report(tr("Cannot rename session %1: %2").arg(id).arg(failureText(f)));
        return false;
    }
    panel_->refresh();
    return true;
}

bool SessionActions::editSession(qint64 id, const QString& notes, const QStringList& tags) {
    sessions::SessionEdit e;
    e.notes = notes.toStdString();
    std::vector<std::string> list;
    for (const QString& t : tags)
        list.push_back(t.toStdString());
    e.tags = std::move(list);
    try {
        if (!store_) return false;
        store_->edit(id, e);
    } catch (const Failure& f) {
        report(tr("Cannot edit session %1: %2").arg(id).arg(failureText(f)));
        return false;
    }
    panel_->refresh();
    return true;
}

bool SessionActions::deleteSessions(const QList<qint64>& ids) {
    if (!store_) return false;
    int removed = 0;
    try {
        for (qint64 id : ids) {
            removed += store_->remove(id) ? 1 : 0;
            if (id == current_) current_ = 0;
        }
    } catch (const Failure& f) {
        report(tr("Deleting sessions failed: %1").arg(failureText(f)));
    }
    panel_->setCurrentSession(current_);
    panel_->refresh();
    report(tr("Deleted %1").arg(QString::fromStdString(count_of(uint64_t(removed), "session"))));
    return removed == int(ids.size());
}

void SessionActions::raiseCompare() {
    if (QDockWidget* d = window_->dock(QStringLiteral("sessionCompareDock"))) {
        d->show();
        d->raise();
        // Two tables and a chart need room: grow a docked comparison that is too short.
        if (!d->isFloating() && d->height() < kCompareMinHeight)
            window_->resizeDocks({d}, {kCompareMinHeight}, Qt::Vertical);
    }
}

void SessionActions::exportCurrent(const QString& path, sessions::ExportFormat format) {
    const QString name = qs(sessions::export_format_name(format));
    jobs_->submit(
        {tr("Exporting %1").arg(QFileInfo(path).fileName()), QString(), this},
        [store = storeRef(), id = current_, shown = shown_, format, file = path.toStdString()](
            const Progress&) { export_shown(store, id, shown.get(), format, file); },
        [this, name, path] {
            report(tr("Exported %1 to %2").arg(name, path));
            emit exportFinished(true);
        },
        [this](const JobFailure& f) {
            report(tr("Export failed: %1").arg(f.text()));
            emit exportFinished(false);
        });
}

void SessionActions::exportDialog() {
    if (!ctx_->plan()) {
        report(tr("Nothing to export: no plan is shown"));
        return;
    }
    QStringList filters;
    for (const FormatFilter& f : kFilters)
        filters << tr(f.filter);
    QString selected = filters.front();
    QString base = shown_ && shown_->model ? QFileInfo(qs(shown_->model->path)).completeBaseName()
                                           : QStringLiteral("plan");
    if (current_) base += QStringLiteral("-session%1").arg(current_);
    QString path = QFileDialog::getSaveFileName(window_, tr("Export plan"), base + ".html",
                                                filters.join(QStringLiteral(";;")), &selected);
    if (path.isEmpty()) return;
    ExportFormat format =
        kFilters[size_t(std::max<qsizetype>(0, filters.indexOf(selected)))].format;
    QString extension = qs(sessions::export_extension(format));
    if (QFileInfo(path).suffix().isEmpty()) path += extension;
    exportCurrent(path, format);
}

} // namespace tmmu::studio
