#pragma once
// A lazy program run side by side with and without checkpointing, compiled regions and fusion
// (lazy/run_comparison.h): one column per configuration (the plain run first, the program as
// written last), one row per measure: kernels run, fused kernels, variant cache hits and misses,
// ops checkpoint replays made, the largest planned arena, the pool's peak, and whether the reads
// equal the plain run's bit for bit. Counts and bytes show their percentage of the plain run's;
// SortRole gives the raw number.
#include "lazy/run_comparison.h"

#include <QAbstractTableModel>
#include <vector>

namespace tmmu::views {

class RunComparisonModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Measure {
        KernelsRow,
        FusedRow,
        CacheRow,
        ReplayedRow,
        ArenaRow,
        PoolPeakRow,
        ReadsRow,
        MeasureCount
    };
    static constexpr int SortRole = Qt::UserRole;

    explicit RunComparisonModel(QObject* parent = nullptr);
    void setRuns(std::vector<lazy::ComparedRun> runs);
    const std::vector<lazy::ComparedRun>& runs() const { return runs_; }

    // Column k is run k; the vertical header names the measures, so a view that scrolls to the
    // last runs keeps them in sight.
    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    static QVariant number(const lazy::ComparedRun& r, int measure);
    QString text(const lazy::ComparedRun& r, int measure) const;
    std::vector<lazy::ComparedRun> runs_;
};

} // namespace tmmu::views
