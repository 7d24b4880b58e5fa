#pragma once
// The studio's side of the sessions database (issue 4): records every successful planning run,
// runs the Sessions panel's requests (open, replay, compare, rename, notes and tags, delete),
// fills the compare panel and writes File > Export. The main window owns one; it keeps
// main_window.cpp about windows and planning.
//
// Invariants: the store is opened only through openStore() (tests and screenshot mode pass their
// own path or none, so the user's database is never touched by them); a database that cannot be
// opened is reported once and left byte-for-byte alone; opening a session never re-plans.
#include "planning.h"
#include "report/export.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

QT_BEGIN_NAMESPACE
class QAction;
class QMenu;
class QWidget;
class QThread;
QT_END_NAMESPACE

namespace tmmu::sessions {
class SessionStore;
struct Session;
struct ReplayResult;
} // namespace tmmu::sessions

namespace tmmu::views {
class PlanContext;
class SessionsPanel;
class SessionComparePanel;
} // namespace tmmu::views

namespace tmmu::studio {

class MainWindow;

class SessionActions : public QObject {
    Q_OBJECT
  public:
    SessionActions(MainWindow* window, views::PlanContext* ctx);
    ~SessionActions() override; // cancels a running replay and waits for it

    // Opens (or creates) the database. On failure the error is shown once in the status bar and
    // the panel, recording stops, and the studio works on without sessions.
    bool openStore(const QString& path);
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
    bool replayBusy() const { return replayThread_ != nullptr; }
    double lastRecordMs() const { return lastRecordMs_; } // recording time of the last run

    void addExportAction(QMenu* file); // File > Export…
    QMenu* buildMenu(QWidget* parent); // the Sessions menu

  public slots:
    // After a planning run was shown: records it when recording is on and a store is open.
    void recordRun(const tmmu::studio::PlanOutcome& outcome);
    bool openSession(qint64 id);   // shows the stored plan; false (with a message) on failure
    void replaySession(qint64 id); // off the UI thread; emits replayFinished
    bool compareSessions(qint64 before, qint64 after);
    bool renameSession(qint64 id, const QString& title);
    bool editSession(qint64 id, const QString& notes, const QStringList& tags);
    bool deleteSessions(const QList<qint64>& ids);
    // Writes the plan on screen: its recorded session, or one built in memory from the shown
    // model and plan when it was not recorded. False (with a message) on failure.
    bool exportCurrent(const QString& path, sessions::ExportFormat format);
    void exportDialog();

  signals:
    void sessionRecorded(qint64 id);
    void sessionOpened(qint64 id);
    void replayFinished(bool ok, bool identical);

  private:
    void report(const QString& text);
    void markAltered(const sessions::Session& s);
    void showReplay(const sessions::Session& stored, const sessions::ReplayResult& r);
    void raiseCompare();
    sessions::Session currentAsSession() const;

    MainWindow* window_;
    views::PlanContext* ctx_;
    views::SessionsPanel* panel_;
    views::SessionComparePanel* compare_;
    QAction* record_;
    std::unique_ptr<sessions::SessionStore> store_;
    QString storeError_;
    bool storeErrorPending_ = false;
    std::shared_ptr<const PlanOutcome> shown_; // the outcome on screen (run or opened session)
    int64_t current_ = 0;
    QString lastMessage_;
    double lastRecordMs_ = 0.0;
    QThread* replayThread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> replayCancel_;
};

} // namespace tmmu::studio
