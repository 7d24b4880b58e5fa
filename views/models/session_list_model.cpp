#include "models/session_list_model.h"

#include "style/palette.h"
#include "style/text_format.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QFont>
#include <QFontDatabase>
#include <QStyle>

namespace tmmu::views {
namespace {

const char* const kHeaders[SessionListModel::ColumnCount] = {
    "Id",   "Created",  "Title", "Tags",      "Source",
    "Mode", "Strategy", "Peak",  "% over LB", "Plan hash"};

const char* const kHeaderTips[SessionListModel::ColumnCount] = {
    "Session id (ascending in recording order)",
    "When the run was recorded (UTC)",
    "Title (editable: Rename)",
    "Tags (editable: Edit notes and tags)",
    "Model file the run planned",
    "Training mode, or 'none' for offset-assignment problems",
    "Strategy requested",
    "Plan height summed over arenas",
    "How far the plan's height is above the sum of the arenas' lower bounds",
    "Prefix of the plan hash: equal hashes mean identical plans"};

QString qs(const std::string& s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString joinTags(const std::vector<std::string>& tags) {
    QString out;
    for (const std::string& t : tags) {
        if (!out.isEmpty()) out += QStringLiteral(", ");
        out += qs(t);
    }
    return out;
}

// "2026-11-23T09:27:44Z" reads better as "2026-11-23 09:27:44".
QString createdText(const std::string& iso) {
    QString s = qs(iso);
    s.replace(QLatin1Char('T'), QLatin1Char(' '));
    if (s.endsWith(QLatin1Char('Z'))) s.chop(1);
    return s;
}

QString fileName(const std::string& path) {
    size_t slash = path.find_last_of("/\\");
    return qs(slash == std::string::npos ? path : path.substr(slash + 1));
}

} // namespace

SessionListModel::SessionListModel(QObject* parent)
    : QAbstractTableModel(parent), mono_(QFontDatabase::systemFont(QFontDatabase::FixedFont)) {}

void SessionListModel::setSessions(std::vector<sessions::SessionSummary> sessions) {
    beginResetModel();
    rows_ = std::move(sessions);
    for (const sessions::SessionSummary& s : rows_)
        if (!s.altered_reason.empty()) altered_[s.id] = QString::fromStdString(s.altered_reason);
    endResetModel();
}

int SessionListModel::rowOf(int64_t id) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id) return int(i);
    return -1;
}

void SessionListModel::markAltered(int64_t id, const QString& reason) {
    altered_[id] = reason;
    int row = rowOf(id);
    if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void SessionListModel::setCurrentId(int64_t id) {
    if (id == current_) return;
    const int64_t previous = current_;
    current_ = id;
    for (int64_t changed : {previous, id}) {
        int row = rowOf(changed);
        if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1), {Qt::FontRole});
    }
}

int SessionListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int SessionListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

double SessionListModel::overBoundPercent(const sessions::SessionSummary& s) {
    if (s.lower_bound == 0) return 0.0;
    return (double(s.peak_bytes) - double(s.lower_bound)) / double(s.lower_bound) * 100.0;
}

QString SessionListModel::text(int row, int column) const {
    const sessions::SessionSummary& s = rows_[size_t(row)];
    switch (column) {
    case IdColumn:
        return QString::number(s.id);
    case CreatedColumn:
        return createdText(s.created);
    case TitleColumn:
        return qs(s.title);
    case TagsColumn:
        return joinTags(s.tags);
    case SourceColumn:
        return fileName(s.source_path);
    case ModeColumn:
        return qs(listed_mode(s));
    case StrategyColumn:
        return qs(s.strategy);
    case PeakColumn:
        return humanBytes(s.peak_bytes);
    case OverBoundColumn:
        return QString::number(overBoundPercent(s), 'f', 2) + QLatin1Char('%');
    case HashColumn:
        return qs(s.plan_hash.substr(0, kHashPrefix));
    default:
        return {};
    }
}

QString SessionListModel::toolTip(int row) const {
    const sessions::SessionSummary& s = rows_[size_t(row)];
    QString tip =
        tr("<b>Session %1</b>: %2<br>%3<br>plan hash %4")
            .arg(s.id)
            .arg(qs(s.title).toHtmlEscaped(), qs(s.source_path).toHtmlEscaped(), qs(s.plan_hash));
    if (!s.tags.empty()) tip += tr("<br>tags: %1").arg(joinTags(s.tags).toHtmlEscaped());
    auto it = altered_.find(s.id);
    if (it != altered_.end())
        tip += tr("<br><b>ALTERED</b>: %1 — the stored plan cannot be trusted")
                   .arg(it->second.toHtmlEscaped());
    return tip;
}

QVariant SessionListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(rows_.size())) return {};
    const int row = index.row(), column = index.column();
    const sessions::SessionSummary& s = rows_[size_t(row)];
    const bool altered = isAltered(s.id);
    switch (role) {
    case Qt::DisplayRole:
        return text(row, column);
    case SortRole:
        if (column == IdColumn) return qlonglong(s.id);
        if (column == PeakColumn) return qulonglong(s.peak_bytes);
        if (column == OverBoundColumn) return overBoundPercent(s);
        return text(row, column);
    case SessionIdRole:
        return qlonglong(s.id);
    case AlteredRole:
        return altered;
    case Qt::ToolTipRole:
        return toolTip(row);
    case Qt::TextAlignmentRole:
        if (column == IdColumn || column == PeakColumn || column == OverBoundColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::FontRole: {
        if (column != HashColumn && s.id != current_) return {};
        QFont font = column == HashColumn ? mono_ : QFont();
        font.setBold(s.id == current_);
        return font;
    }
    case Qt::ForegroundRole:
        // Vermillion reads on light and dark backgrounds and is not confused with the plain
        // text colour by colour-blind users (the icon carries the meaning too).
        if (altered) return QBrush(ViewPalette::fromApplication().warning());
        return {};
    case Qt::DecorationRole:
        if (altered && column == TitleColumn)
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        return {};
    default:
        return {};
    }
}

QVariant SessionListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(kHeaders[section]);
    if (role == Qt::ToolTipRole) return tr(kHeaderTips[section]);
    return {};
}

} // namespace tmmu::views
