#pragma once
// The Sessions panel: recorded planning runs with a search field (title substring or exact
// tag), a sortable table and the actions Open, Replay, Compare (two selected), Rename, Notes and
// tags, Delete (confirmed). It only lists and asks: every change is emitted as a signal and the
// main window does the work, then calls refresh(). The store is read, never written, here.
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <vector>

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;
QT_END_NAMESPACE

namespace tmmu::sessions {
class SessionStore;
}

namespace tmmu::views {

class SessionListModel;

class SessionsPanel : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kSearchDelayMs = 150;

    explicit SessionsPanel(QWidget* parent = nullptr);

    // The store to list from (null: none). unavailable explains why there is none.
    void setStore(const sessions::SessionStore* store, const QString& unavailable = QString());
    void refresh(); // lists again with the current search, keeping the selection
    void setSearch(const QString& text); // applies at once (typing applies after a short pause)
    QString search() const;
    void selectSession(int64_t id);           // selects and scrolls to it; clears when not listed
    std::vector<int64_t> selectedIds() const; // view order
    void markAltered(int64_t id, const QString& reason);
    // The session on screen, drawn in bold (0: the shown plan is not a listed session).
    void setCurrentSession(int64_t id);
    int64_t currentSession() const { return current_; }

    SessionListModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QLineEdit* searchField() const { return search_; }
    QString statusText() const;
    double lastListMs() const { return lastListMs_; }

  public slots:
    void openSelected();
    void replaySelected();
    void compareSelected();
    // Open non-modal dialogs (object names renameDialog, editSessionDialog, confirmDeleteBox)
    // whose acceptance emits the request, so nothing blocks the event loop.
    void renameSelected();
    void editSelected();
    void deleteSelected();

  signals:
    void openRequested(qint64 id);
    void replayRequested(qint64 id);
    void compareRequested(qint64 before, qint64 after); // older session first
    void renameRequested(qint64 id, const QString& title);
    void editRequested(qint64 id, const QString& notes, const QStringList& tags);
    void deleteRequested(const QList<qint64>& ids);

  protected:
    void contextMenuEvent(QContextMenuEvent* event) override;

  private:
    void buildActions();
    void updateActions();
    void updateStatus();
    int64_t singleSelected() const; // 0 unless exactly one row is selected

    const sessions::SessionStore* store_ = nullptr;
    QString unavailable_;
    SessionListModel* model_;
    QSortFilterProxyModel* proxy_;
    QTableView* table_;
    QLineEdit* search_;
    QLabel* status_;
    QTimer* searchDelay_;
    QList<QAction*> actions_;
    QAction *open_ = nullptr, *replay_ = nullptr, *compare_ = nullptr, *rename_ = nullptr,
            *edit_ = nullptr, *delete_ = nullptr;
    int64_t current_ = 0;
    double lastListMs_ = 0.0;
    QString listError_;
};

// "a, b ,,c" -> {"a", "b", "c"}: tags are separated by commas, trimmed, empty ones dropped.
QStringList parseTags(const QString& text);

} // namespace tmmu::views
