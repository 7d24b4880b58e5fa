#include "models/run_comparison_model.h"

#include "style/text_format.h"

namespace tmmu::views {

RunComparisonModel::RunComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunComparisonModel::setRuns(std::vector<lazy::ComparedRun> runs) {
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
}

int RunComparisonModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || runs_.empty() ? 0 : MeasureCount;
}

int RunComparisonModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(runs_.size());
}

QVariant RunComparisonModel::number(const lazy::ComparedRun& r, int measure) {
    const lazy::EngineStats& s = r.stats;
    switch (measure) {
    case KernelsRow:
        return qulonglong(s.kernels);
    case FusedRow:
        return qulonglong(s.fused_groups);
    case CacheRow:
        return qulonglong(s.cache_hits);
    case ReplayedRow:
        return qulonglong(s.recomputed_ops);
    case ArenaRow:
        return qulonglong(s.planned_peak_bytes);
    case PoolPeakRow:
        return qulonglong(s.pool_peak_bytes);
    default:
        return {};
    }
}

QString RunComparisonModel::text(const lazy::ComparedRun& r, int measure) const {
    const bool plain = &r == &runs_.front();
    const lazy::EngineStats& s = r.stats;
    switch (measure) {
    case CacheRow:
        return s.compiled_calls ? tr("hits %1, misses %2").arg(s.cache_hits).arg(s.cache_misses)
                                : tr("—");
    case FusedRow:
        return s.fused_groups ? tr("%1 (%2 ops)").arg(s.fused_groups).arg(s.fused_ops) : tr("—");
    case ReadsRow:
        if (!r.failure.empty()) return tr("stopped: %1").arg(QString::fromStdString(r.failure));
        return plain ? tr("reference") : r.same_reads ? tr("same bits") : tr("DIFFER");
    default:
        break;
    }
    const qulonglong value = number(r, measure).toULongLong();
    const qulonglong base = number(runs_.front(), measure).toULongLong();
    const QString shown =
        measure == ArenaRow || measure == PoolPeakRow ? humanBytes(value) : QString::number(value);
    if (plain || base == 0 || measure == ReplayedRow) return shown;
    return tr("%1 (%2%)").arg(shown).arg(qRound(100.0 * double(value) / double(base)));
}

QVariant RunComparisonModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const int measure = index.row();
    const lazy::ComparedRun& r = runs_[size_t(index.column())];
    switch (role) {
    case Qt::DisplayRole:
        return text(r, measure);
    case SortRole:
        return number(r, measure);
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant RunComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= int(runs_.size())) return {};
        const lazy::ComparedRun& r = runs_[size_t(section)];
        // "compiled, checkpointed" on two lines: five runs side by side fit a docked panel.
        if (role == Qt::DisplayRole)
            return QString::fromStdString(r.name).replace(QStringLiteral(", "),
                                                          QStringLiteral(",\n"));
        if (role == Qt::ToolTipRole)
            return tr("checkpoint policy %1, compile %2, fusion %3; %4 ms on this machine")
                .arg(QString::fromStdString(
                    std::string(lazy::checkpoint_policy_name(r.options.checkpoint))))
                .arg(r.options.compile ? tr("on") : tr("off"))
                .arg(r.options.fuse ? tr("on") : tr("off"))
                .arg(r.ms, 0, 'f', 1);
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
    case KernelsRow:
        return tr("Kernels");
    case FusedRow:
        return tr("Fused kernels");
    case CacheRow:
        return tr("Variant cache");
    case ReplayedRow:
        return tr("Replayed ops");
    case ArenaRow:
        return tr("Planned arena");
    case PoolPeakRow:
        return tr("Pool peak");
    case ReadsRow:
        return tr("Reads");
    default:
        return {};
    }
}

} // namespace tmmu::views
