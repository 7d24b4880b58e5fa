#pragma once
// Sort and filter proxy over TensorTableModel. The filter language (all terms must match):
//   words              case-insensitive substring of name, id, op, role or shape ("8x1024" works)
//   name:h3.  id:t0001  op:matmul  role:gradient  shape:768  dtype:bf16  arena:activations
//                      field contains the value (case-insensitive); field=value: equals it
//   size>1MiB size<4KiB offset>=0x1000
//                      sizes take B, KiB, MiB, GiB, KB, MB, ... (any case); 0x for hex
//   slot:12 begin<10 end>=100   numbers compare with : = < <= > >= (':' is '=')
//   live:120           alive at step 120 (begin <= 120 < end)
//   -term              negates a term
// An invalid filter leaves the previous one in force and sets filterError().
#include <QSortFilterProxyModel>
#include <QString>
#include <vector>

namespace tmmu::views {

class TensorTableModel;

class TensorFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
  public:
    explicit TensorFilterModel(QObject* parent = nullptr);
    ~TensorFilterModel() override;

    void setSourceModel(QAbstractItemModel* source) override;

    // Parses and applies text. On a parse error the previous filter stays and filterError()
    // says what is wrong; on success filterError() is empty.
    void setFilterText(const QString& text);
    QString filterText() const { return text_; } // the filter in force
    QString filterError() const { return error_; }

  signals:
    void filterErrorChanged(const QString& error);

  protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    // Same order as sorting by SortRole, without a QVariant per comparison.
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

  public:
    // The text columns' order: natural ("h9" < "h10" < "h100", "9" < "109"), case-insensitive.
    static bool naturalLess(QStringView a, QStringView b);
    // Parsed term; public only so the parser in the .cpp can build them.
    struct Term {
        enum class Kind { Words, Text, Number, Live } kind = Kind::Words;
        enum class Cmp { Contains, Eq, Lt, Le, Gt, Ge } cmp = Cmp::Contains;
        int column = -1;
        QString text;
        quint64 value = 0;
        bool negate = false;
    };

  private:
    bool matches(const Term& term, int row) const;
    QString cellText(int row, int column) const;
    quint64 cellNumber(int row, int column) const;

    const TensorTableModel* table_ = nullptr; // fast path when the source is the table model
    std::vector<Term> terms_;
    QString text_;
    QString error_;
};

} // namespace tmmu::views
