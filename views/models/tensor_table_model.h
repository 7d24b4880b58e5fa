#pragma once
// One row per planned tensor (row == index into plan()->tensors), for the tensor table and its
// filter. Formatting is cheap per data() call: the strings that need building (shape, opcode)
// are cached per row when the plan changes, so 100k rows reset, sort and scroll quickly.
#include "style/palette.h"

#include <QAbstractTableModel>
#include <QString>
#include <vector>

namespace tmmu {
struct PlannedTensor;
}

namespace tmmu::views {

class PlanContext;

class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        NameColumn,
        IdColumn,
        OpColumn,
        RoleColumn,
        ShapeColumn,
        DTypeColumn,
        SizeColumn,
        ArenaColumn,
        SlotColumn,
        OffsetColumn,
        BeginColumn,
        EndColumn,
        ColumnCount
    };
    enum DataRole {
        // Raw value for sorting and filtering: qulonglong for numeric columns, else the text.
        SortRole = Qt::UserRole,
        // The planned tensor index (== row) as int, on every column.
        PlannedIndexRole,
    };

    explicit TensorTableModel(PlanContext* ctx, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    PlanContext* context() const { return ctx_; }
    // Cell text without going through QVariant (the filter reads many cells per keystroke).
    QString text(int row, int column) const;
    // Raw number of a numeric column (size, slot, offset, begin, end); 0 for text columns.
    quint64 number(int row, int column) const;
    static bool isNumeric(int column);

  private:
    void rebuild();
    const PlannedTensor& tensor(int row) const;
    QColor swatch(int row) const;
    QString toolTip(int row) const;

    PlanContext* ctx_;
    ViewPalette palette_;
    int rows_ = 0;
    std::vector<QString> shape_; // per row, "N=2×3" with symbolic names; empty for CSV problems
    std::vector<QString> op_;    // per row; implicitly shared per distinct opcode
    std::vector<QString> dtype_; // per row; shared per dtype
    std::vector<QString> arenaName_;
};

} // namespace tmmu::views
