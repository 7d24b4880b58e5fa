#include "panels/sessions_panel.h"

#include "core/failure.h"
#include "core/units.h"
#include "models/session_list_model.h"
#include "session_store.h"

#include <QAction>
#include <QBoxLayout>
#include <QContextMenuEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QToolBar>

#include <algorithm>

namespace tmmu::views {
namespace {

QString qs(const std::string& s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

// Column widths in characters: fixed so 10,000 rows never get measured. Id to Peak fit the
// default dock: a right-aligned peak the viewport cuts would read "40.50" without its unit.
constexpr int kWidths[SessionListModel::ColumnCount] = {5, 17, 17, 12, 16, 9, 11, 10, 9, 13};

} // namespace

QStringList parseTags(const QString& text) {
    QStringList tags;
    for (const QString& part : text.split(QLatin1Char(','))) {
        QString tag = part.trimmed();
        if (!tag.isEmpty() && !tags.contains(tag)) tags << tag;
    }
    return tags;
}

SessionsPanel::SessionsPanel(QWidget* parent)
    : QWidget(parent), model_(new SessionListModel(this)), proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)), search_(new QLineEdit(this)), status_(new QLabel(this)),
      searchDelay_(new QTimer(this)) {
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(SessionListModel::SortRole);
    table_->setObjectName(QStringLiteral("sessionsTable"));
    table_->setModel(proxy_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSortingEnabled(true);
    table_->sortByColumn(SessionListModel::IdColumn, Qt::DescendingOrder);
    table_->setWordWrap(false);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setStretchLastSection(true);
    const int ch = fontMetrics().horizontalAdvance(QLatin1Char('0'));
    for (int c = 0; c < SessionListModel::ColumnCount; ++c)
        table_->setColumnWidth(c, kWidths[c] * ch + 12);
    // What tells runs apart comes first in a narrow dock; the model keeps the listed order.
    QHeaderView* header = table_->horizontalHeader();
    header->setSectionsMovable(true);
    int visual = 0;
    for (int c : {SessionListModel::IdColumn, SessionListModel::TitleColumn,
                  SessionListModel::StrategyColumn, SessionListModel::PeakColumn,
                  SessionListModel::OverBoundColumn, SessionListModel::TagsColumn,
                  SessionListModel::CreatedColumn})
        header->moveSection(header->visualIndex(c), visual++);

    search_->setObjectName(QStringLiteral("sessionSearch"));
    search_->setPlaceholderText(tr("Search title or tag…"));
    search_->setClearButtonEnabled(true);
    searchDelay_->setSingleShot(true);
    searchDelay_->setInterval(kSearchDelayMs);
    connect(search_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    connect(searchDelay_, &QTimer::timeout, this, &SessionsPanel::refresh);
    status_->setObjectName(QStringLiteral("sessionsStatus"));
    status_->setWordWrap(true);

    buildActions();
    // A tool bar: the actions that do not fit a narrow dock go behind its » button instead of
    // making the dock (and the column it shares) wider.
    auto* buttons = new QToolBar(this);
    buttons->setObjectName(QStringLiteral("sessionActions"));
    buttons->setToolButtonStyle(Qt::ToolButtonTextOnly);
    buttons->setIconSize(QSize(1, 1));
    buttons->addActions(actions_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(search_);
    layout->addWidget(buttons);
    layout->addWidget(table_, 1);
    layout->addWidget(status_);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SessionsPanel::updateActions);
    connect(table_, &QTableView::doubleClicked, this, &SessionsPanel::openSelected);
    updateActions();
    updateStatus();
}

void SessionsPanel::buildActions() {
    auto add = [this](QAction*& slot, const QString& text, const QString& tip, auto method,
                      QKeySequence key = {}) {
        slot = new QAction(text, this);
        slot->setToolTip(tip);
        slot->setShortcut(key);
        slot->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(slot, &QAction::triggered, this, method);
        addAction(slot);
        actions_ << slot;
    };
    add(open_, tr("Open"), tr("Show the stored plan (no re-planning)"),
        &SessionsPanel::openSelected, QKeySequence(Qt::Key_Return));
    add(replay_, tr("Replay"),
        tr("Plan the stored inputs again with this engine and compare with the stored plan"),
        &SessionsPanel::replaySelected);
    add(compare_, tr("Compare"), tr("Compare two selected sessions side by side"),
        &SessionsPanel::compareSelected);
    add(rename_, tr("Rename…"), tr("Change the title"), &SessionsPanel::renameSelected,
        QKeySequence(Qt::Key_F2));
    add(edit_, tr("Notes…"), tr("Edit notes and tags"), &SessionsPanel::editSelected);
    add(delete_, tr("Delete…"), tr("Delete the selected sessions (asks first)"),
        &SessionsPanel::deleteSelected, QKeySequence::Delete);
}

void SessionsPanel::setStore(const sessions::SessionStore* store, const QString& unavailable) {
    store_ = store;
    unavailable_ = unavailable;
    search_->setEnabled(store_ != nullptr);
    refresh();
}

void SessionsPanel::refresh() {
    searchDelay_->stop();
    const std::vector<int64_t> keep = selectedIds();
    listError_.clear();
    std::vector<sessions::SessionSummary> rows;
    QElapsedTimer timer;
    timer.start();
    if (store_) {
        try {
            sessions::ListQuery q;
            q.search = search_->text().trimmed().toStdString();
            rows = store_->list(q);
        } catch (const Failure& f) {
            listError_ = qs(f.what());
        }
    }
    model_->setSessions(std::move(rows));
    lastListMs_ = double(timer.nsecsElapsed()) / 1e6;
    table_->clearSelection();
    for (int64_t id : keep) {
        int row = model_->rowOf(id);
        if (row < 0) continue;
        QModelIndex at = proxy_->mapFromSource(model_->index(row, 0));
        table_->selectionModel()->select(at,
                                         QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
    updateActions();
    updateStatus();
}

void SessionsPanel::setSearch(const QString& text) {
    search_->setText(text);
    refresh();
}

QString SessionsPanel::search() const {
    return search_->text();
}

void SessionsPanel::selectSession(int64_t id) {
    table_->clearSelection();
    int row = model_->rowOf(id);
    if (row < 0) return;
    QModelIndex at = proxy_->mapFromSource(model_->index(row, 0));
    table_->selectionModel()->setCurrentIndex(at, QItemSelectionModel::ClearAndSelect |
                                                      QItemSelectionModel::Rows);
    table_->scrollTo(at);
}

std::vector<int64_t> SessionsPanel::selectedIds() const {
    std::vector<int64_t> ids;
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    for (const QModelIndex& index : rows)
        ids.push_back(index.data(SessionListModel::SessionIdRole).toLongLong());
    return ids;
}

void SessionsPanel::markAltered(int64_t id, const QString& reason) {
    model_->markAltered(id, reason);
    updateStatus();
}

void SessionsPanel::setCurrentSession(int64_t id) {
    current_ = id;
    model_->setCurrentId(id);
}

QString SessionsPanel::statusText() const {
    return status_->text();
}

void SessionsPanel::updateStatus() {
    QString text;
    if (!store_)
        text = unavailable_.isEmpty() ? tr("No sessions database.")
                                      : tr("Sessions unavailable: %1").arg(unavailable_);
    else if (!listError_.isEmpty())
        text = tr("Listing failed: %1").arg(listError_);
    else if (model_->rowCount() == 0 && search_->text().trimmed().isEmpty())
        text = tr("No sessions yet: planning runs are recorded here (Sessions > Record runs).");
    else if (model_->rowCount() == 0)
        text = tr("No session matches '%1'.").arg(search_->text().trimmed());
    else
        text = QString::fromStdString(count_of(uint64_t(model_->rowCount()), "session"));
    status_->setText(text);
}

void SessionsPanel::updateActions() {
    const size_t n = selectedIds().size();
    open_->setEnabled(n == 1);
    replay_->setEnabled(n == 1);
    compare_->setEnabled(n == 2);
    rename_->setEnabled(n == 1);
    edit_->setEnabled(n == 1);
    delete_->setEnabled(n >= 1);
}

int64_t SessionsPanel::singleSelected() const {
    std::vector<int64_t> ids = selectedIds();
    return ids.size() == 1 ? ids.front() : 0;
}

void SessionsPanel::openSelected() {
    if (int64_t id = singleSelected()) emit openRequested(id);
}

void SessionsPanel::replaySelected() {
    if (int64_t id = singleSelected()) emit replayRequested(id);
}

void SessionsPanel::compareSelected() {
    std::vector<int64_t> ids = selectedIds();
    if (ids.size() != 2) return;
    std::sort(ids.begin(), ids.end());
    emit compareRequested(ids[0], ids[1]);
}

void SessionsPanel::renameSelected() {
    const int64_t id = singleSelected();
    if (!id) return;
    auto* dialog = new QInputDialog(this);
    dialog->setObjectName(QStringLiteral("renameDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Rename session %1").arg(id));
    dialog->setLabelText(tr("Title:"));
    dialog->setTextValue(qs(model_->summary(model_->rowOf(id)).title));
    connect(dialog, &QInputDialog::textValueSelected, this,
            [this, id](const QString& title) { emit renameRequested(id, title.trimmed()); });
    dialog->open();
}

void SessionsPanel::editSelected() {
    const int64_t id = singleSelected();
    if (!id || !store_) return;
    QString notes;
    try {
        notes = qs(store_->load(id).notes);
    } catch (const Failure& f) {
        status_->setText(tr("Cannot read session %1: %2").arg(id).arg(qs(f.what())));
        return;
    }
    const sessions::SessionSummary& s = model_->summary(model_->rowOf(id));
    QStringList tags;
    for (const std::string& t : s.tags)
        tags << qs(t);

    auto* dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("editSessionDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Notes and tags of session %1").arg(id));
    auto* tagEdit = new QLineEdit(tags.join(QStringLiteral(", ")), dialog);
    tagEdit->setObjectName(QStringLiteral("tagsEdit"));
    tagEdit->setPlaceholderText(tr("comma-separated, e.g. baseline, gpt2"));
    auto* notesEdit = new QPlainTextEdit(notes, dialog);
    notesEdit->setObjectName(QStringLiteral("notesEdit"));
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
    auto* form = new QFormLayout(dialog);
    form->addRow(tr("Tags:"), tagEdit);
    form->addRow(tr("Notes:"), notesEdit);
    form->addRow(box);
    connect(box, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
    connect(box, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    connect(dialog, &QDialog::accepted, this, [this, id, tagEdit, notesEdit] {
        emit editRequested(id, notesEdit->toPlainText(), parseTags(tagEdit->text()));
    });
    dialog->resize(420, 260);
    dialog->open();
}

void SessionsPanel::deleteSelected() {
    const std::vector<int64_t> ids = selectedIds();
    if (ids.empty()) return;
    QList<qint64> list(ids.begin(), ids.end());
    const QString what = ids.size() == 1
                             ? tr("session %1 (%2)")
                                   .arg(ids[0])
                                   .arg(qs(model_->summary(model_->rowOf(ids[0])).title))
                             : QString::fromStdString(count_of(ids.size(), "session"));
    auto* box = new QMessageBox(QMessageBox::Question, tr("Delete sessions"),
                                tr("Delete %1? This cannot be undone.").arg(what),
                                QMessageBox::Yes | QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("confirmDeleteBox"));
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, list](int result) {
        if (result == QMessageBox::Yes) emit deleteRequested(list);
    });
    box->open();
}

void SessionsPanel::contextMenuEvent(QContextMenuEvent* event) {
    if (!table_->geometry().contains(event->pos())) return;
    QMenu menu(this);
    menu.addActions(actions_);
    menu.exec(event->globalPos());
}

} // namespace tmmu::views
