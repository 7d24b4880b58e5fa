#include "models/tensor_filter_model.h"

#include "core/failure.h"
#include "core/units.h"
#include "models/tensor_table_model.h"

#include <QRegularExpression>
#include <algorithm>
#include <array>
#include <optional>
#include <variant>

namespace tmmu::views {
namespace {

using Term = TensorFilterModel::Term;
using TM = TensorTableModel;

struct Field {
    const char* name;
    int column;    // -1 for live
    bool byteSize; // numeric value takes units
};

constexpr std::array<Field, 13> kFields{{
    {"name", TM::NameColumn, false},
    {"id", TM::IdColumn, false},
    {"op", TM::OpColumn, false},
    {"role", TM::RoleColumn, false},
    {"shape", TM::ShapeColumn, false},
    {"dtype", TM::DTypeColumn, false},
    {"arena", TM::ArenaColumn, false},
    {"size", TM::SizeColumn, true},
    {"offset", TM::OffsetColumn, true},
    {"slot", TM::SlotColumn, false},
    {"begin", TM::BeginColumn, false},
    {"end", TM::EndColumn, false},
    {"live", -1, false},
}};

constexpr int kWordColumns[] = {TM::NameColumn, TM::IdColumn, TM::OpColumn, TM::RoleColumn,
                                TM::ShapeColumn};

QString fieldList() {
    QStringList names;
    for (const Field& f : kFields)
        names << QString::fromLatin1(f.name);
    return names.join(QStringLiteral(", "));
}

// "8x1024x768" is how people type shapes; the table shows "8×1024×768".
QString normaliseShape(const QString& word) {
    static const QRegularExpression shapeLike(QStringLiteral("^\\d+([x\\x{00D7}]\\d+)+$"),
                                              QRegularExpression::CaseInsensitiveOption);
    if (!shapeLike.match(word).hasMatch()) return word;
    QString s = word;
    s.replace(QLatin1Char('x'), QChar(0x00D7), Qt::CaseInsensitive);
    return s;
}

// Unsigned integer, decimal or 0x-hex; with units ("1.5MiB", "4kib") when bytes is true.
std::optional<quint64> parseNumber(const QString& text, bool bytes) {
    bool ok = false;
    quint64 v = text.startsWith(QLatin1String("0x"), Qt::CaseInsensitive)
                    ? text.mid(2).toULongLong(&ok, 16)
                    : text.toULongLong(&ok, 10);
    if (ok) return v;
    if (!bytes) return std::nullopt;
    static const std::array<std::pair<const char*, const char*>, 12> kUnits{{{"b", "B"},
                                                                             {"k", "K"},
                                                                             {"kib", "KiB"},
                                                                             {"kb", "KB"},
                                                                             {"m", "M"},
                                                                             {"mib", "MiB"},
                                                                             {"mb", "MB"},
                                                                             {"g", "G"},
                                                                             {"gib", "GiB"},
                                                                             {"gb", "GB"},
                                                                             {"t", "T"},
                                                                             {"tib", "TiB"}}};
    qsizetype digits = 0;
    while (digits < text.size() && (text[digits].isDigit() || text[digits] == QLatin1Char('.')))
        ++digits;
    QString unit = text.mid(digits).toLower();
    auto it = std::find_if(kUnits.begin(), kUnits.end(),
                           [&](const auto& u) { return unit == QLatin1String(u.first); });
    if (it == kUnits.end()) return std::nullopt;
    std::string canonical = text.left(digits).toStdString() + it->second;
    try {
        return parse_byte_size(canonical, "filter");
    } catch (const Failure&) {
        return std::nullopt;
    }
}

struct Parsed {
    std::vector<Term> terms;
    QString error;
};

// One whitespace-free token -> a term, or an error message.
std::variant<Term, QString> parseToken(QString token) {
    Term term;
    if (token.size() > 1 && token.startsWith(QLatin1Char('-'))) {
        term.negate = true;
        token = token.mid(1);
    }
    static const QRegularExpression fieldTerm(QStringLiteral("^([A-Za-z_]+)(>=|<=|:|=|<|>)(.*)$"));
    auto m = fieldTerm.match(token);
    if (!m.hasMatch()) {
        term.kind = Term::Kind::Words;
        term.text = normaliseShape(token);
        return term;
    }
    const QString name = m.captured(1).toLower(), op = m.captured(2), value = m.captured(3);
    auto field = std::find_if(kFields.begin(), kFields.end(),
                              [&](const Field& f) { return name == QLatin1String(f.name); });
    if (field == kFields.end())
        return QStringLiteral("unknown field '%1' (fields: %2)").arg(m.captured(1), fieldList());
    if (value.isEmpty()) return QStringLiteral("missing value after '%1%2'").arg(name, op);
    term.column = field->column;
    if (field->column >= 0 && !TM::isNumeric(field->column)) {
        if (op != QLatin1String(":") && op != QLatin1String("="))
            return QStringLiteral("field '%1' compares text: use %1:%2 or %1=%2").arg(name, value);
        term.kind = Term::Kind::Text;
        term.cmp = op == QLatin1String(":") ? Term::Cmp::Contains : Term::Cmp::Eq;
        term.text = field->column == TM::ShapeColumn ? normaliseShape(value) : value;
        return term;
    }
    auto number = parseNumber(value, field->byteSize);
    if (!number)
        return field->byteSize
                   ? QStringLiteral("'%1' is not a size (e.g. 4096, 64KiB, 1.5MiB)").arg(value)
                   : QStringLiteral("'%1' is not a number for '%2'").arg(value, name);
    term.value = *number;
    if (field->column < 0) {
        if (op != QLatin1String(":") && op != QLatin1String("="))
            return QStringLiteral("'live' takes a step: live:%1").arg(value);
        term.kind = Term::Kind::Live;
        return term;
    }
    term.kind = Term::Kind::Number;
    if (op == QLatin1String("<"))
        term.cmp = Term::Cmp::Lt;
    else if (op == QLatin1String("<="))
        term.cmp = Term::Cmp::Le;
    else if (op == QLatin1String(">"))
        term.cmp = Term::Cmp::Gt;
    else if (op == QLatin1String(">="))
        term.cmp = Term::Cmp::Ge;
    else
        term.cmp = Term::Cmp::Eq;
    return term;
}

Parsed parseFilter(const QString& text) {
    static const QRegularExpression space(QStringLiteral("\\s+"));
    Parsed parsed;
    for (const QString& token : text.split(space, Qt::SkipEmptyParts)) {
        auto result = parseToken(token);
        if (auto* err = std::get_if<QString>(&result)) {
            parsed.error = *err;
            return parsed;
        }
        parsed.terms.push_back(std::get<Term>(result));
    }
    // Numeric terms are cheap: test them first so text terms run on fewer rows.
    std::stable_sort(parsed.terms.begin(), parsed.terms.end(), [](const Term& a, const Term& b) {
        return (a.kind == Term::Kind::Number || a.kind == Term::Kind::Live) &&
               !(b.kind == Term::Kind::Number || b.kind == Term::Kind::Live);
    });
    return parsed;
}

// Natural order, case-insensitive: runs of digits compare as numbers ("9" < "11" < "109"), so
// the numeric ids of offset CSVs and numbered layer names sort as people count. Leading zeros
// do not matter ("007" equals "7" as a number; the longer run goes second on a tie).
int natural_compare(QStringView a, QStringView b) {
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].isDigit() && b[j].isDigit()) {
            const qsizetype si = i, sj = j;
            while (i < a.size() && a[i] == u'0')
                ++i;
            while (j < b.size() && b[j] == u'0')
                ++j;
            const qsizetype di = i, dj = j;
            while (i < a.size() && a[i].isDigit())
                ++i;
            while (j < b.size() && b[j].isDigit())
                ++j;
            if (i - di != j - dj) return i - di < j - dj ? -1 : 1; // fewer digits: smaller
            if (const int c = a.sliced(di, i - di).compare(b.sliced(dj, j - dj)); c != 0) return c;
            if (i - si != j - sj) return i - si < j - sj ? -1 : 1;
            continue;
        }
        const QChar x = a[i].toCaseFolded(), y = b[j].toCaseFolded();
        if (x != y) return x < y ? -1 : 1;
        ++i;
        ++j;
    }
    return (i < a.size()) - (j < b.size());
}

} // namespace

TensorFilterModel::TensorFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(TensorTableModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

TensorFilterModel::~TensorFilterModel() = default;

void TensorFilterModel::setSourceModel(QAbstractItemModel* source) {
    table_ = qobject_cast<const TensorTableModel*>(source);
    QSortFilterProxyModel::setSourceModel(source);
}

void TensorFilterModel::setFilterText(const QString& text) {
    Parsed parsed = parseFilter(text);
    if (!parsed.error.isEmpty()) {
        if (parsed.error != error_) {
            error_ = parsed.error;
            emit filterErrorChanged(error_);
        }
        return;
    }
    if (!error_.isEmpty()) {
        error_.clear();
        emit filterErrorChanged(error_);
    }
    text_ = text;
    terms_ = std::move(parsed.terms);
    invalidateFilter();
}

QString TensorFilterModel::cellText(int row, int column) const {
    if (table_) return table_->text(row, column);
    return sourceModel()->index(row, column).data(Qt::DisplayRole).toString();
}

quint64 TensorFilterModel::cellNumber(int row, int column) const {
    if (table_) return table_->number(row, column);
    return sourceModel()->index(row, column).data(TensorTableModel::SortRole).toULongLong();
}

bool TensorFilterModel::matches(const Term& term, int row) const {
    switch (term.kind) {
    case Term::Kind::Words:
        return std::any_of(std::begin(kWordColumns), std::end(kWordColumns), [&](int column) {
            return cellText(row, column).contains(term.text, Qt::CaseInsensitive);
        });
    case Term::Kind::Text: {
        QString cell = cellText(row, term.column);
        return term.cmp == Term::Cmp::Eq ? cell.compare(term.text, Qt::CaseInsensitive) == 0
                                         : cell.contains(term.text, Qt::CaseInsensitive);
    }
    case Term::Kind::Live:
        return cellNumber(row, TM::BeginColumn) <= term.value &&
               term.value < cellNumber(row, TM::EndColumn);
    case Term::Kind::Number: {
        quint64 v = cellNumber(row, term.column);
        switch (term.cmp) {
        case Term::Cmp::Lt:
            return v < term.value;
        case Term::Cmp::Le:
            return v <= term.value;
        case Term::Cmp::Gt:
            return v > term.value;
        case Term::Cmp::Ge:
            return v >= term.value;
        default:
            return v == term.value;
        }
    }
    }
    return false;
}

bool TensorFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const int column = left.column();
    if (!table_ || sortRole() != TensorTableModel::SortRole || right.column() != column)
        return QSortFilterProxyModel::lessThan(left, right);
    if (TensorTableModel::isNumeric(column))
        return table_->number(left.row(), column) < table_->number(right.row(), column);
    return naturalLess(table_->text(left.row(), column), table_->text(right.row(), column));
}

bool TensorFilterModel::naturalLess(QStringView a, QStringView b) {
    return natural_compare(a, b) < 0;
}

bool TensorFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (sourceParent.isValid()) return false;
    return std::all_of(terms_.begin(), terms_.end(),
                       [&](const Term& t) { return matches(t, sourceRow) != t.negate; });
}

} // namespace tmmu::views
