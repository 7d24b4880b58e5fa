#pragma once
// Slot colouring as a tree: arenas -> logical slots -> the tensors sharing each slot.
//   arena row:  name, peak bytes (Size), slot count (Count)
//   slot row:   "slot N", max member size (Size), member count (Count)
//   tensor row: name, size, begin, end
// Slots are ordered by slot id, tensors inside a slot by birth (then planned index).
#include "style/palette.h"

#include <QAbstractItemModel>
#include <vector>

namespace tmmu::views {

class PlanContext;

class SlotModel : public QAbstractItemModel {
    Q_OBJECT
  public:
    enum Column { NameColumn, SizeColumn, CountColumn, BeginColumn, EndColumn, ColumnCount };
    enum DataRole {
        SortRole = Qt::UserRole, // raw numbers, as TensorTableModel::SortRole
        PlannedIndexRole,        // planned tensor index on tensor rows, -1 elsewhere
    };

    explicit SlotModel(PlanContext* ctx, QObject* parent = nullptr);

    QModelIndex index(int row, int column,
                      const QModelIndex& parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Planned tensor index of a tensor row; -1 for arena and slot rows.
    int plannedIndex(const QModelIndex& index) const;
    // Column-0 index of the tensor's row; invalid when out of range or no plan.
    QModelIndex indexOfTensor(int planned) const;

  private:
    struct SlotNode {
        uint32_t arena = 0;
        uint32_t slot = 0;
        uint64_t maxSize = 0;
        std::vector<int> members; // planned indices, by birth
    };
    enum class Level { Arena, Slot, Tensor };

    void rebuild();
    Level level(const QModelIndex& index) const;
    QVariant arenaData(int arena, int column, int role) const;
    QVariant slotData(const SlotNode& node, int column, int role) const;
    QVariant tensorData(int planned, int column, int role) const;

    PlanContext* ctx_;
    ViewPalette palette_;
    // Slots of arena a are slots_[arenaFirst_[a] .. arenaFirst_[a + 1]).
    std::vector<SlotNode> slots_;
    std::vector<int> arenaFirst_;
    std::vector<int> slotOfTensor_; // planned index -> index into slots_
    std::vector<int> rowOfTensor_;  // planned index -> row inside its slot
};

} // namespace tmmu::views
