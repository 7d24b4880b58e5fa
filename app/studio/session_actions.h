#pragma once
// The studio's side of the sessions database (issue 4): records every successful planning run,
// runs the Sessions panel's requests (open, replay, compare, rename, notes and tags, delete),
// fills the compare panel and writes File > Export. The main window owns one; it keeps
// main_window.cpp about windows and planning. Opening, replaying, comparing and exporting run on
// the studio's worker (session_jobs.h); only their results are shown here.
//
// Invariants: the store is opened only through openStore() (tests and screenshot mode pass their
// own path or none, and screenshots never create one, so the user's database is never touched by
// them); a database that cannot be
// opened is reported once and left byte-for-byte alone; opening a session never re-plans.
#include "planning.h"
#include "report/export.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

QT_BEGIN_NAMESPACE
class QAction;
class QMenu;
class QWidget;
QT_END_NAMESPACE

namespace tmmu::sessions {
class SessionStore;
struct Session;
} // namespace tmmu::sessions

namespace tmmu::views {
class PlanContext;
class SessionsPanel;
class SessionComparePanel;
} // namespace tmmu::views

namespace tmmu::studio {

class JobRunner;
class MainWindow;
struct ComparedSessions;
struct OpenedSession;
struct ReplayedSession;
struct StoreRef;

class SessionActions : public QObject {
    Q_OBJECT
  public:
    // Opening, replaying, comparing and exporting run as jobs of `jobs`.
    SessionActions(MainWindow* window, views::PlanContext* ctx, JobRunner* jobs);
    ~SessionActions() override;

    // Opens the database, creating it (and its folder) unless `access` is ExistingOnly. On
    // failure the error is shown once in the status bar and the panel, recording stops, and the
    // studio works on without sessions.
    bool openStore(const QString& path,
                   sessions::StoreAccess access = sessions::StoreAccess::CreateIfMissing);
    sessions::SessionStore* store() const { return store_.get(); }
    QString storeError() const { return storeError_; }

    bool recording() const;
    void setRecording(bool on);
    QAction* recordAction() const { return record_; }

    views::SessionsPanel* panel() const { return panel_; }
    views::SessionComparePanel* comparePanel() const { return compare_; }
    // The recorded session on screen, 0 when the shown plan is not (yet) a session.
    int64_t currentSession() const { return current_; }
    QString lastMessage() const { return lastMessage_; }
    bool replayBusy() const { return replays_ > 0; }
    double lastRecordMs() const { return lastRecordMs_; } // recording time of the last run
    // Tests: called on the thread of every worker job that opens the database.
    void setStoreProbe(std::function<void()> probe) { probe_ = std::move(probe); }

    void addExportAction(QMenu* file); // File > Export…
    QMenu* buildMenu(QWidget* parent); // the Sessions menu

  public slots:
    // After a planning run was shown: records it (on the worker) when recording is on and a
    // store is open; sessionRecorded follows.
    void recordRun(const tmmu::studio::PlanOutcome& outcome);
    // After a plan read from a file was shown (a checkpoint, an exported session, a lazy
    // program's buffers): it is what File > Export exports, and no session is current.
    void showUnrecorded(const tmmu::studio::PlanOutcome& outcome);
    // Jobs; each ends in its signal below, also on failure (with a message in the status bar).
    // A newer open (or plan) replaces an older one, a newer replay or comparison likewise.
    void openSession(qint64 id); // shows the stored plan, never re-plans
    void replaySession(qint64 id);
    void compareSessions(qint64 before, qint64 after);
    // Writes the plan on screen: its recorded session, or one built from the shown model and
    // plan when it was not recorded.
    void exportCurrent(const QString& path, sessions::ExportFormat format);
    // Small SQLite statements, on the UI thread. False (with a message) on failure.
    bool renameSession(qint64 id, const QString& title);
    bool editSession(qint64 id, const QString& notes, const QStringList& tags);
    bool deleteSessions(const QList<qint64>& ids);
    void exportDialog();

  signals:
    void storeOpened(bool ok); // after openStore, whether or not it succeeded
    void sessionRecorded(qint64 id);
    void openFinished(qint64 id, bool ok);
    void replayFinished(bool ok, bool identical);
    void compareFinished(bool ok);
    void exportFinished(bool ok);

  private:
    StoreRef storeRef() const;
    void report(const QString& text);
    void markAltered(const sessions::Session& s);
    void showOpened(qint64 id, OpenedSession& opened);
    void showReplay(ReplayedSession& replayed);
    void showComparison(ComparedSessions& compared);
    void raiseCompare();

    MainWindow* window_;
    views::PlanContext* ctx_;
    JobRunner* jobs_;
    views::SessionsPanel* panel_;
    views::SessionComparePanel* compare_;
    QAction* record_;
    std::unique_ptr<sessions::SessionStore> store_;
    std::function<void()> probe_;
    QString storeError_;
    bool storeErrorPending_ = false;
    std::shared_ptr<const PlanOutcome> shown_; // the outcome on screen (run or opened session)
    int64_t current_ = 0;
    QString lastMessage_;
    double lastRecordMs_ = 0.0;
    int replays_ = 0; // replay jobs submitted and not yet reported
};

} // namespace tmmu::studio
