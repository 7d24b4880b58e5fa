#include "models/tensor_table_model.h"

#include "context/plan_context.h"
#include "style/text_format.h"

#include <QLocale>
#include <map>

namespace tmmu::views {
namespace {

const char* const kHeaders[TensorTableModel::ColumnCount] = {"Name",  "Id",     "Op",    "Role",
                                                             "Shape", "DType",  "Size",  "Arena",
                                                             "Slot",  "Offset", "Begin", "End"};

const char* const kHeaderTips[TensorTableModel::ColumnCount] = {
    "Tensor name",
    "Tensor id (unique)",
    "Opcode of the producing node; the role when nothing produces it",
    "Tensor role",
    "Shape (elements per dimension); a dim bound from a symbolic name shows it, as in N=2",
    "Element type",
    "Bytes",
    "Arena the tensor is placed in",
    "Logical slot from linear scan (tensors in one slot never live at the same time)",
    "Byte offset inside the arena",
    "First step the tensor is live",
    "First step the tensor is dead again (lifetime is [begin, end))"};

} // namespace

TensorTableModel::TensorTableModel(PlanContext* ctx, QObject* parent)
    : QAbstractTableModel(parent), ctx_(ctx), palette_(ViewPalette::fromApplication()) {
    rebuild();
    connect(ctx_, &PlanContext::planChanged, this, [this] {
        beginResetModel();
        rebuild();
        endResetModel();
    });
    connect(ctx_, &PlanContext::colorModeChanged, this, [this] {
        if (rows_ > 0)
            emit dataChanged(index(0, NameColumn), index(rows_ - 1, NameColumn),
                             {Qt::DecorationRole});
    });
}

void TensorTableModel::rebuild() {
    palette_ = ViewPalette::fromApplication();
    const Plan* plan = ctx_->plan();
    rows_ = plan ? int(plan->tensors.size()) : 0;
    shape_.assign(size_t(rows_), QString());
    op_.assign(size_t(rows_), QString());
    dtype_.assign(size_t(rows_), QString());
    arenaName_.clear();
    if (!plan) return;
    for (const ArenaPlan& a : plan->arenas)
        arenaName_.push_back(QString::fromStdString(a.config.name));
    const LoadedModel* model = ctx_->model();
    const Graph* g = model && model->graph ? &*model->graph : nullptr;
    if (!g) return;
    const auto& dimNames = model->annotations.dim_names; // ONNX models only; else empty
    // One QString per distinct opcode / dtype / role name; rows share them implicitly.
    std::map<std::string_view, QString> shared;
    auto intern = [&shared](std::string_view s) {
        auto [it, fresh] = shared.try_emplace(s);
        if (fresh) it->second = QString::fromUtf8(s.data(), qsizetype(s.size()));
        return it->second;
    };
    for (int row = 0; row < rows_; ++row) {
        TensorIndex t = ctx_->graphTensor(row);
        if (t == kNone || t >= g->tensors.size()) continue;
        const Tensor& gt = g->tensors[t];
        shape_[size_t(row)] =
            t < dimNames.size() ? shapeText(gt.shape, dimNames[t]) : shapeText(gt.shape);
        dtype_[size_t(row)] = intern(dtype_name(gt.dtype));
        op_[size_t(row)] = gt.producer != kNone && gt.producer < g->nodes.size()
                               ? intern(g->nodes[gt.producer].opcode)
                               : intern(role_name(gt.role));
    }
}

const PlannedTensor& TensorTableModel::tensor(int row) const {
    return ctx_->plan()->tensors[size_t(row)];
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int TensorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

bool TensorTableModel::isNumeric(int column) {
    switch (column) {
    case SizeColumn:
    case SlotColumn:
    case OffsetColumn:
    case BeginColumn:
    case EndColumn:
        return true;
    default:
        return false;
    }
}

quint64 TensorTableModel::number(int row, int column) const {
    const PlannedTensor& t = tensor(row);
    switch (column) {
    case SizeColumn:
        return t.size;
    case SlotColumn:
        return t.slot;
    case OffsetColumn:
        return t.offset;
    case BeginColumn:
        return t.life.begin;
    case EndColumn:
        return t.life.end;
    default:
        return 0;
    }
}

QString TensorTableModel::text(int row, int column) const {
    const PlannedTensor& t = tensor(row);
    switch (column) {
    case NameColumn:
        return QString::fromStdString(t.name.empty() ? t.id : t.name);
    case IdColumn:
        return QString::fromStdString(t.id);
    case OpColumn:
        return op_[size_t(row)];
    case RoleColumn: {
        std::string_view r = role_name(t.role);
        return QString::fromLatin1(r.data(), qsizetype(r.size()));
    }
    case ShapeColumn:
        return shape_[size_t(row)];
    case DTypeColumn:
        return dtype_[size_t(row)];
    case SizeColumn:
        return humanBytes(t.size);
    case ArenaColumn:
        return t.arena < arenaName_.size() ? arenaName_[t.arena] : QString();
    case SlotColumn:
    case BeginColumn:
    case EndColumn:
        return QString::number(number(row, column));
    case OffsetColumn:
        return QLocale().toString(qulonglong(t.offset));
    default:
        return QString();
    }
}

QColor TensorTableModel::swatch(int row) const {
    const PlannedTensor& t = tensor(row);
    return ctx_->colorMode() == ColorMode::Slot ? palette_.slot(t.slot) : palette_.role(t.role);
}

QString TensorTableModel::toolTip(int row) const {
    const PlannedTensor& t = tensor(row);
    QString tip = QStringLiteral("<b>%1</b>").arg(text(row, NameColumn).toHtmlEscaped());
    if (t.name != t.id && !t.name.empty())
        tip +=
            QStringLiteral(" <span>(%1)</span>").arg(QString::fromStdString(t.id).toHtmlEscaped());
    tip += QStringLiteral("<br>%1").arg(text(row, RoleColumn));
    if (!shape_[size_t(row)].isEmpty()) {
        tip += QStringLiteral(", %1 %2").arg(shape_[size_t(row)], dtype_[size_t(row)]);
        // Without a producer the op column holds the role, already said above.
        if (op_[size_t(row)] != text(row, RoleColumn))
            tip += QStringLiteral(", produced by %1").arg(op_[size_t(row)].toHtmlEscaped());
    }
    tip += QStringLiteral("<br>%1 (%2 B) in %3, slot %4, offset %5")
               .arg(text(row, SizeColumn), QLocale().toString(qulonglong(t.size)),
                    text(row, ArenaColumn).toHtmlEscaped())
               .arg(t.slot)
               .arg(text(row, OffsetColumn));
    tip += QStringLiteral("<br>live [%1, %2)").arg(t.life.begin).arg(t.life.end);
    return tip;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_ || index.column() >= ColumnCount) return {};
    const int row = index.row(), col = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return text(row, col);
    case SortRole:
        return isNumeric(col) ? QVariant(number(row, col)) : QVariant(text(row, col));
    case PlannedIndexRole:
        return row;
    case Qt::DecorationRole:
        return col == NameColumn ? QVariant(swatch(row)) : QVariant();
    case Qt::ToolTipRole:
        return toolTip(row);
    case Qt::TextAlignmentRole:
        return isNumeric(col) ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    default:
        return {};
    }
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) return QString::fromLatin1(kHeaders[section]);
    if (role == Qt::ToolTipRole) return QString::fromLatin1(kHeaderTips[section]);
    return {};
}

} // namespace tmmu::views
