#pragma once
// The tensor table: a filter field (TensorFilterModel's language) over a sortable table of every
// planned tensor. Follows the context's selection and reports the user's pick back to it.
#include <QWidget>

class QLabel;
class QLineEdit;
class QModelIndex;
class QShortcut;
class QTableView;
class QTimer;

namespace tmmu::views {

class PlanContext;
class TensorFilterModel;
class TensorTableModel;

class TensorTablePanel : public QWidget {
    Q_OBJECT
  public:
    explicit TensorTablePanel(PlanContext* ctx, QWidget* parent = nullptr);

    // Focuses the filter field and selects its text (Ctrl+F).
    void focusSearch();

    QLineEdit* searchField() const { return search_; }
    QTableView* tableView() const { return table_; }
    TensorTableModel* tableModel() const { return model_; }
    TensorFilterModel* filterModel() const { return filter_; }
    // The panel's own Ctrl+F (Qt::WidgetWithChildrenShortcut). It stands aside while an
    // enabled window- or application-wide action or shortcut binds the same key, so the two
    // are never ambiguous (Qt would then trigger neither); that action should call focusSearch().
    QShortcut* searchShortcut() const { return shortcut_; }

  protected:
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void buildTable();
    // Widths follow a sample of the rows until the user resizes a column; empty columns hide.
    void fitColumns();
    void applyFilter();
    void onCurrentRowChanged(const QModelIndex& current);
    void showSelection(int planned);
    void updateCount();
    bool windowBindsFind() const;

    PlanContext* ctx_;
    TensorTableModel* model_;
    TensorFilterModel* filter_;
    QLineEdit* search_;
    QLabel* error_;
    QLabel* count_;
    QTableView* table_;
    QShortcut* shortcut_;
    QTimer* debounce_;
    // Set while the panel itself moves the table's current row or the context's selection, so
    // neither echoes back to the other.
    bool syncing_ = false;
    bool fitting_ = false;
    bool userResized_ = false;
};

} // namespace tmmu::views
