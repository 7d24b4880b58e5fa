#include "models/slot_model.h"

#include "context/plan_context.h"
#include "style/text_format.h"

#include <algorithm>
#include <map>

namespace tmmu::views {
namespace {

// internalId of an index names its parent: 0 for arena rows, 1 + arena for slot rows,
// 1 + arenaCount + slot node for tensor rows.
constexpr quintptr kTopLevel = 0;

} // namespace

SlotModel::SlotModel(PlanContext* ctx, QObject* parent)
    : QAbstractItemModel(parent), ctx_(ctx), palette_(ViewPalette::fromApplication()) {
    rebuild();
    connect(ctx_, &PlanContext::planChanged, this, [this] {
        beginResetModel();
        rebuild();
        endResetModel();
    });
    // Tensor swatches follow the colour mode; only tensor rows change, slot rows keep slot colours.
    connect(ctx_, &PlanContext::colorModeChanged, this, [this] {
        for (size_t s = 0; s < slots_.size(); ++s) {
            if (slots_[s].members.empty()) continue;
            QModelIndex first = indexOfTensor(slots_[s].members.front());
            QModelIndex last = indexOfTensor(slots_[s].members.back());
            emit dataChanged(first, last, {Qt::DecorationRole});
        }
    });
}

void SlotModel::rebuild() {
    palette_ = ViewPalette::fromApplication();
    slots_.clear();
    arenaFirst_.assign(1, 0);
    slotOfTensor_.clear();
    rowOfTensor_.clear();
    const Plan* plan = ctx_->plan();
    if (!plan) return;
    const auto& tensors = plan->tensors;
    // (arena, slot) -> members; std::map keeps the order deterministic.
    std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> groups;
    for (size_t i = 0; i < tensors.size(); ++i)
        groups[{tensors[i].arena, tensors[i].slot}].push_back(int(i));
    auto group = groups.begin();
    for (uint32_t a = 0; a < plan->arenas.size(); ++a) {
        for (; group != groups.end() && group->first.first == a; ++group) {
            SlotNode node{a, group->first.second, 0, std::move(group->second)};
            std::stable_sort(node.members.begin(), node.members.end(), [&](int x, int y) {
                return tensors[size_t(x)].life.begin < tensors[size_t(y)].life.begin;
            });
            for (int m : node.members)
                node.maxSize = std::max(node.maxSize, tensors[size_t(m)].size);
            slots_.push_back(std::move(node));
        }
        arenaFirst_.push_back(int(slots_.size()));
    }
    slotOfTensor_.assign(tensors.size(), -1);
    rowOfTensor_.assign(tensors.size(), -1);
    for (size_t s = 0; s < slots_.size(); ++s)
        for (size_t r = 0; r < slots_[s].members.size(); ++r) {
            slotOfTensor_[size_t(slots_[s].members[r])] = int(s);
            rowOfTensor_[size_t(slots_[s].members[r])] = int(r);
        }
}

SlotModel::Level SlotModel::level(const QModelIndex& index) const {
    quintptr id = index.internalId();
    if (id == kTopLevel) return Level::Arena;
    return id <= quintptr(arenaFirst_.size() - 1) ? Level::Slot : Level::Tensor;
}

QModelIndex SlotModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount || row >= rowCount(parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, kTopLevel);
    const quintptr arenas = arenaFirst_.size() - 1;
    switch (level(parent)) {
    case Level::Arena:
        return createIndex(row, column, quintptr(1 + parent.row()));
    case Level::Slot: {
        quintptr slot = quintptr(arenaFirst_[size_t(parent.internalId() - 1)] + parent.row());
        return createIndex(row, column, 1 + arenas + slot);
    }
    case Level::Tensor:
        return {};
    }
    return {};
}

QModelIndex SlotModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const quintptr arenas = arenaFirst_.size() - 1;
    switch (level(child)) {
    case Level::Arena:
        return {};
    case Level::Slot:
        return createIndex(int(child.internalId() - 1), 0, kTopLevel);
    case Level::Tensor: {
        const SlotNode& node = slots_[size_t(child.internalId() - 1 - arenas)];
        int row = int(child.internalId() - 1 - arenas) - arenaFirst_[node.arena];
        return createIndex(row, 0, quintptr(1 + node.arena));
    }
    }
    return {};
}

int SlotModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return int(arenaFirst_.size() - 1);
    if (parent.column() != 0) return 0;
    switch (level(parent)) {
    case Level::Arena:
        return arenaFirst_[size_t(parent.row()) + 1] - arenaFirst_[size_t(parent.row())];
    case Level::Slot: {
        size_t slot = size_t(arenaFirst_[size_t(parent.internalId() - 1)] + parent.row());
        return int(slots_[slot].members.size());
    }
    case Level::Tensor:
        return 0;
    }
    return 0;
}

int SlotModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

int SlotModel::plannedIndex(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this || level(index) != Level::Tensor) return -1;
    const SlotNode& node = slots_[size_t(index.internalId() - 1 - (arenaFirst_.size() - 1))];
    return node.members[size_t(index.row())];
}

QModelIndex SlotModel::indexOfTensor(int planned) const {
    if (planned < 0 || size_t(planned) >= slotOfTensor_.size() ||
        slotOfTensor_[size_t(planned)] < 0)
        return {};
    const quintptr arenas = arenaFirst_.size() - 1;
    return createIndex(rowOfTensor_[size_t(planned)], 0,
                       1 + arenas + quintptr(slotOfTensor_[size_t(planned)]));
}

QVariant SlotModel::arenaData(int arena, int column, int role) const {
    const ArenaPlan& a = ctx_->plan()->arenas[size_t(arena)];
    const int slotCount = arenaFirst_[size_t(arena) + 1] - arenaFirst_[size_t(arena)];
    const bool display = role == Qt::DisplayRole;
    switch (column) {
    case NameColumn:
        if (display || role == SortRole) return QString::fromStdString(a.config.name);
        if (role == Qt::ToolTipRole)
            return tr("Arena %1: %2 logical slots, peak %3, lower bound %4")
                .arg(QString::fromStdString(a.config.name))
                .arg(slotCount)
                .arg(humanBytes(a.metrics.peak_bytes), humanBytes(a.metrics.lower_bound));
        return {};
    case SizeColumn:
        if (display) return humanBytes(a.metrics.peak_bytes);
        if (role == SortRole) return qulonglong(a.metrics.peak_bytes);
        return {};
    case CountColumn:
        if (display) return counted(slotCount, "slot", "slots");
        if (role == SortRole) return qulonglong(slotCount);
        return {};
    default:
        return {};
    }
}

QVariant SlotModel::slotData(const SlotNode& node, int column, int role) const {
    const bool display = role == Qt::DisplayRole;
    const int members = int(node.members.size());
    switch (column) {
    case NameColumn:
        if (display) return tr("slot %1").arg(node.slot);
        if (role == SortRole) return qulonglong(node.slot);
        if (role == Qt::DecorationRole) return palette_.slot(node.slot);
        if (role == Qt::ToolTipRole)
            return tr("Slot %1: %2 that are never live at the same time")
                .arg(node.slot)
                .arg(counted(members, "tensor", "tensors"));
        return {};
    case SizeColumn:
        if (display) return humanBytes(node.maxSize);
        if (role == SortRole) return qulonglong(node.maxSize);
        return {};
    case CountColumn:
        if (display) return counted(members, "tensor", "tensors");
        if (role == SortRole) return qulonglong(members);
        return {};
    default:
        return {};
    }
}

QVariant SlotModel::tensorData(int planned, int column, int role) const {
    const PlannedTensor& t = ctx_->plan()->tensors[size_t(planned)];
    const bool display = role == Qt::DisplayRole;
    if (role == PlannedIndexRole) return planned;
    if (role == Qt::ToolTipRole)
        return tr("%1 (%2): %3, live [%4, %5)")
            .arg(QString::fromStdString(t.name.empty() ? t.id : t.name),
                 QString::fromLatin1(role_name(t.role).data(), qsizetype(role_name(t.role).size())),
                 humanBytes(t.size))
            .arg(t.life.begin)
            .arg(t.life.end);
    switch (column) {
    case NameColumn:
        if (display || role == SortRole)
            return QString::fromStdString(t.name.empty() ? t.id : t.name);
        if (role == Qt::DecorationRole)
            return ctx_->colorMode() == ColorMode::Slot ? palette_.slot(t.slot)
                                                        : palette_.role(t.role);
        return {};
    case SizeColumn:
        if (display) return humanBytes(t.size);
        if (role == SortRole) return qulonglong(t.size);
        return {};
    case BeginColumn:
    case EndColumn: {
        uint32_t v = column == BeginColumn ? t.life.begin : t.life.end;
        if (display) return QString::number(v);
        if (role == SortRole) return qulonglong(v);
        return {};
    }
    default:
        return {};
    }
}

QVariant SlotModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.model() != this || !ctx_->plan()) return {};
    if (role == Qt::TextAlignmentRole)
        return index.column() == NameColumn ? QVariant()
                                            : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    switch (level(index)) {
    case Level::Arena:
        return role == PlannedIndexRole ? QVariant(-1)
                                        : arenaData(index.row(), index.column(), role);
    case Level::Slot: {
        size_t slot = size_t(arenaFirst_[size_t(index.internalId() - 1)] + index.row());
        return role == PlannedIndexRole ? QVariant(-1)
                                        : slotData(slots_[slot], index.column(), role);
    }
    case Level::Tensor:
        return tensorData(plannedIndex(index), index.column(), role);
    }
    return {};
}

QVariant SlotModel::headerData(int section, Qt::Orientation orientation, int role) const {
    static const char* const kHeaders[ColumnCount] = {"Arena / slot / tensor", "Size", "Count",
                                                      "Begin", "End"};
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 &&
        section < ColumnCount)
        return tr(kHeaders[section]);
    return QAbstractItemModel::headerData(section, orientation, role);
}

} // namespace tmmu::views
