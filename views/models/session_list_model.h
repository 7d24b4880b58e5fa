#pragma once
// One row per recorded session (a SessionStore::list() result), for the Sessions panel. Rows
// keep the store's order (newest first); the panel sorts through a proxy using SortRole. Cells
// are formatted on demand from the summaries, so resetting 10,000 rows costs one vector move.
#include "session_store.h"

#include <QAbstractTableModel>
#include <QFont>
#include <QString>

#include <map>
#include <vector>

namespace tmmu::views {

class SessionListModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        IdColumn,
        CreatedColumn,
        TitleColumn,
        TagsColumn,
        SourceColumn,
        ModeColumn,
        StrategyColumn,
        PeakColumn,
        OverBoundColumn,
        HashColumn,
        ColumnCount
    };
    enum DataRole {
        // Raw value for sorting: qlonglong id, qulonglong peak, double % over the lower bound,
        // else the cell text.
        SortRole = Qt::UserRole,
        SessionIdRole, // qlonglong session id, on every column
        AlteredRole,   // bool: the session's stored plan was found altered
    };
    static constexpr int kHashPrefix = 12;

    explicit SessionListModel(QObject* parent = nullptr);

    void setSessions(std::vector<sessions::SessionSummary> sessions);
    const std::vector<sessions::SessionSummary>& sessions() const { return rows_; }
    const sessions::SessionSummary& summary(int row) const { return rows_[size_t(row)]; }
    int rowOf(int64_t id) const; // -1 when not listed

    // Marks a session found altered when it was opened or replayed: load checks the plan and
    // the content seal, which listing does not (a listing's own finding, the summary seal,
    // arrives in SessionSummary::altered_reason). Remembered across setSessions() so a
    // refreshed list keeps the mark.
    void markAltered(int64_t id, const QString& reason);
    bool isAltered(int64_t id) const { return altered_.count(id) != 0; }
    // The session shown in the main window, drawn in bold (0: none).
    void setCurrentId(int64_t id);
    int64_t currentId() const { return current_; }

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    QString text(int row, int column) const;
    // (peak - lower bound) / lower bound in percent; 0 when the lower bound is 0.
    static double overBoundPercent(const sessions::SessionSummary& s);

  private:
    QString toolTip(int row) const;

    std::vector<sessions::SessionSummary> rows_;
    std::map<int64_t, QString> altered_;
    QFont mono_;
    int64_t current_ = 0;
};

} // namespace tmmu::views
