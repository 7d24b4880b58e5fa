#include "panels/tensor_table_panel.h"

#include "context/plan_context.h"
#include "models/tensor_filter_model.h"
#include "models/tensor_table_model.h"
#include "style/palette.h"

#include <QAction>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QShortcut>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace tmmu::views {
namespace {

// Above this many tensors the filter waits for a pause in typing instead of running per key.
constexpr int kImmediateFilterRows = 20000;

// Column widths fit a sample of rows this large (evenly spaced), capped at kMaxColumnChars.
constexpr int kFitSampleRows = 1000;
constexpr int kMaxColumnChars = 40;

} // namespace

TensorTablePanel::TensorTablePanel(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), model_(new TensorTableModel(ctx, this)),
      filter_(new TensorFilterModel(this)), search_(new QLineEdit(this)), error_(new QLabel(this)),
      count_(new QLabel(this)), table_(new QTableView(this)),
      shortcut_(new QShortcut(QKeySequence::Find, this)), debounce_(new QTimer(this)) {
    filter_->setSourceModel(model_);

    search_->setPlaceholderText(tr("Filter: words, role:gradient, size>1MiB, live:12 …"));
    search_->setClearButtonEnabled(true);
    search_->setToolTip(
        tr("All terms must match. Words match name, id, op, role or shape.\n"
           "Fields: name: id: op: role: shape: dtype: arena: (contains; = for exact)\n"
           "size offset slot begin end with : < <= > >= (size>1MiB, size<4KiB, slot:12)\n"
           "live:120 = alive at step 120; a leading - negates a term."));
    search_->installEventFilter(this);

    error_->setWordWrap(true);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QPalette errorPalette = error_->palette();
    errorPalette.setColor(QPalette::WindowText, ViewPalette::fromApplication().warning());
    error_->setPalette(errorPalette);
    error_->hide();

    count_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    count_->setForegroundRole(QPalette::PlaceholderText);
    buildTable();

    auto* top = new QHBoxLayout;
    top->addWidget(search_, 1);
    top->addWidget(count_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(3);
    layout->addLayout(top);
    layout->addWidget(error_);
    layout->addWidget(table_, 1);

    shortcut_->setContext(Qt::WidgetWithChildrenShortcut);
    connect(shortcut_, &QShortcut::activated, this, &TensorTablePanel::focusSearch);

    debounce_->setSingleShot(true);
    debounce_->setInterval(150);
    connect(debounce_, &QTimer::timeout, this, &TensorTablePanel::applyFilter);
    connect(search_, &QLineEdit::textChanged, this, [this] {
        if (model_->rowCount() <= kImmediateFilterRows)
            applyFilter();
        else
            debounce_->start();
    });
    connect(search_, &QLineEdit::returnPressed, this, &TensorTablePanel::applyFilter);
    connect(filter_, &TensorFilterModel::filterErrorChanged, this, [this](const QString& e) {
        const QString shown = filter_->filterText().trimmed();
        error_->setText(shown.isEmpty() ? e
                                        : tr("%1 — still showing \u201c%2\u201d").arg(e, shown));
        error_->setVisible(!e.isEmpty());
    });

    connect(filter_, &QAbstractItemModel::modelReset, this, &TensorTablePanel::updateCount);
    connect(filter_, &QAbstractItemModel::rowsInserted, this, &TensorTablePanel::updateCount);
    connect(filter_, &QAbstractItemModel::rowsRemoved, this, &TensorTablePanel::updateCount);
    connect(filter_, &QAbstractItemModel::layoutChanged, this, &TensorTablePanel::updateCount);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { onCurrentRowChanged(current); });
    connect(ctx_, &PlanContext::selectionChanged, this, &TensorTablePanel::showSelection);

    updateCount();
    showSelection(ctx_->selectedTensor());
}

void TensorTablePanel::buildTable() {
    table_->setModel(filter_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->setShowGrid(false);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideMiddle);
    table_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    // Fixed row heights keep 100k rows cheap: the view never measures rows.
    QHeaderView* rows = table_->verticalHeader();
    rows->hide();
    rows->setSectionResizeMode(QHeaderView::Fixed);
    rows->setDefaultSectionSize(fontMetrics().height() + 6);
    QHeaderView* columns = table_->horizontalHeader();
    columns->setSectionResizeMode(QHeaderView::Interactive);
    columns->setHighlightSections(false);
    columns->setStretchLastSection(false);
    connect(columns, &QHeaderView::sectionResized, this, [this] {
        if (!fitting_) userResized_ = true;
    });
    connect(model_, &QAbstractItemModel::modelReset, this, &TensorTablePanel::fitColumns);
    fitColumns();
    // By id until the user clicks a header: the plan's order, but with numeric ids (offset
    // CSVs) as numbers (9, 10, 11), where the plan keeps them as strings (10, 11, 9).
    table_->setSortingEnabled(true);
    table_->sortByColumn(TensorTableModel::IdColumn, Qt::AscendingOrder);
}

void TensorTablePanel::fitColumns() {
    fitting_ = true;
    const QFontMetrics fm = table_->fontMetrics();
    const QFontMetrics headerFm = table_->horizontalHeader()->fontMetrics();
    const int rows = model_->rowCount();
    const int stride = std::max(1, rows / kFitSampleRows);
    const int maxWidth = kMaxColumnChars * fm.averageCharWidth();
    for (int c = 0; c < TensorTableModel::ColumnCount; ++c) {
        // Room for the sort indicator next to the title.
        int width =
            headerFm.horizontalAdvance(model_->headerData(c, Qt::Horizontal).toString()) + 24;
        // Columns with nothing to say (op, shape, dtype of CSV problems; ids equal to names)
        // are hidden while the plan leaves them so.
        bool empty = true, sameAsName = true;
        for (int r = 0; r < rows; r += stride) {
            const QString text = model_->text(r, c);
            empty = empty && text.isEmpty();
            sameAsName = sameAsName && text == model_->text(r, TensorTableModel::NameColumn);
            width = std::max(width, std::min(maxWidth, fm.horizontalAdvance(text)));
        }
        const bool idIsName = c == TensorTableModel::IdColumn && sameAsName;
        table_->setColumnHidden(c, rows > 0 && (empty || idIsName));
        if (c == TensorTableModel::NameColumn) width += fm.height() + 6; // colour swatch
        if (!userResized_) table_->horizontalHeader()->resizeSection(c, width + 14);
    }
    fitting_ = false;
}

void TensorTablePanel::focusSearch() {
    search_->setFocus(Qt::ShortcutFocusReason);
    search_->selectAll();
}

bool TensorTablePanel::event(QEvent* event) {
    // Sent before Qt looks up shortcuts for a key pressed while focus is inside the panel.
    if (event->type() == QEvent::ShortcutOverride &&
        static_cast<QKeyEvent*>(event)->matches(QKeySequence::Find))
        shortcut_->setEnabled(!windowBindsFind());
    return QWidget::event(event);
}

bool TensorTablePanel::windowBindsFind() const {
    const QList<QKeySequence> find = QKeySequence::keyBindings(QKeySequence::Find);
    auto wide = [](Qt::ShortcutContext c) {
        return c == Qt::WindowShortcut || c == Qt::ApplicationShortcut;
    };
    auto binds = [&](const QList<QKeySequence>& keys) {
        return std::any_of(keys.begin(), keys.end(),
                           [&](const QKeySequence& k) { return find.contains(k); });
    };
    // The outermost ancestor, not window(): a floating dock still takes its main window's
    // window-wide shortcuts.
    QWidget* top = const_cast<TensorTablePanel*>(this);
    while (top->parentWidget())
        top = top->parentWidget();
    QList<QAction*> actions = top->findChildren<QAction*>();
    actions += top->actions();
    for (const QAction* a : actions)
        if (a->isEnabled() && wide(a->shortcutContext()) && binds(a->shortcuts())) return true;
    for (const QShortcut* s : top->findChildren<QShortcut*>())
        if (s != shortcut_ && s->isEnabled() && wide(s->context()) && binds(s->keys())) return true;
    return false;
}

bool TensorTablePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == search_ && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Escape && !search_->text().isEmpty()) {
            search_->clear();
            applyFilter();
            return true;
        }
        if (key->key() == Qt::Key_Down || key->key() == Qt::Key_Escape) {
            table_->setFocus(Qt::TabFocusReason);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void TensorTablePanel::applyFilter() {
    debounce_->stop();
    // Rows removed by the filter move the table's current row; that is not a user pick.
    syncing_ = true;
    filter_->setFilterText(search_->text());
    syncing_ = false;
    updateCount();
    showSelection(ctx_->selectedTensor());
}

void TensorTablePanel::onCurrentRowChanged(const QModelIndex& current) {
    if (syncing_ || !current.isValid()) return;
    int planned = filter_->mapToSource(current).row();
    syncing_ = true;
    ctx_->selectTensor(planned);
    syncing_ = false;
}

void TensorTablePanel::showSelection(int planned) {
    if (syncing_) return;
    QItemSelectionModel* selection = table_->selectionModel();
    QModelIndex row = planned >= 0 && planned < model_->rowCount()
                          ? filter_->mapFromSource(model_->index(planned, 0))
                          : QModelIndex();
    syncing_ = true;
    if (row.isValid()) {
        if (selection->currentIndex().row() != row.row() || !selection->isRowSelected(row.row()))
            selection->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect |
                                                QItemSelectionModel::Rows);
        // Jumps land mid-view; rows already on screen do not scroll.
        QRect rect = table_->visualRect(row);
        if (!table_->viewport()->rect().contains(rect))
            table_->scrollTo(row, QAbstractItemView::PositionAtCenter);
    } else {
        selection->clearSelection();
        selection->setCurrentIndex(QModelIndex(), QItemSelectionModel::NoUpdate);
    }
    syncing_ = false;
}

void TensorTablePanel::updateCount() {
    QLocale locale;
    count_->setText(
        tr("%1 of %2 tensors")
            .arg(locale.toString(filter_->rowCount()), locale.toString(model_->rowCount())));
}

} // namespace tmmu::views
