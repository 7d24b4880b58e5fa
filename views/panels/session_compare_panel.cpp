#include "panels/session_compare_panel.h"

#include "charts/memory_chart.h"
#include "context/plan_context.h"
#include "core/units.h"
#include "plan/memory_series.h"
#include "style/palette.h"
#include "style/text_format.h"
#include "timeline/time_axis.h"

#include <QAbstractTableModel>
#include <QBoxLayout>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace tmmu::views {
namespace {

QString qs(const std::string& s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QColor deltaColor(int64_t d) {
    const ViewPalette palette = ViewPalette::fromApplication();
    return d > 0 ? palette.more() : palette.less();
}

int arenaIndex(const Plan* plan, const QString& name) {
    if (!plan) return -1;
    for (size_t a = 0; a < plan->arenas.size(); ++a)
        if (qs(plan->arenas[a].config.name) == name) return int(a);
    return -1;
}

} // namespace

// The tensors placed differently: one row per TensorMove, formatted on demand (a replay of a
// 100k-tensor plan under another strategy can move every tensor).
class TensorMoveModel : public QAbstractTableModel {
  public:
    enum Column { Name, ArenaBefore, ArenaAfter, OffsetBefore, OffsetAfter, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void setMoves(const std::vector<sessions::TensorMove>* moves) {
        beginResetModel();
        moves_ = moves;
        endResetModel();
    }
    int rowCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() || !moves_ ? 0 : int(moves_->size());
    }
    int columnCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : ColumnCount;
    }
    QVariant data(const QModelIndex& index, int role) const override {
        if (!index.isValid() || !moves_ || index.row() >= rowCount()) return {};
        const sessions::TensorMove& m = (*moves_)[size_t(index.row())];
        const bool absentBefore = m.arena_before.empty(), absentAfter = m.arena_after.empty();
        if (role == Qt::TextAlignmentRole && index.column() >= OffsetBefore)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
        switch (index.column()) {
        case Name: // the name people read; the id (the key plans are matched by) in the tooltip
            if (role == Qt::ToolTipRole) return tr("%1 (id %2)").arg(qs(m.name), qs(m.id));
            return qs(m.name.empty() ? m.id : m.name);
        case ArenaBefore:
            return absentBefore ? QStringLiteral("(absent)") : qs(m.arena_before);
        case ArenaAfter:
            return absentAfter ? QStringLiteral("(absent)") : qs(m.arena_after);
        case OffsetBefore:
            return absentBefore ? QString() : QString::number(m.offset_before);
        case OffsetAfter:
            return absentAfter ? QString() : QString::number(m.offset_after);
        default:
            return {};
        }
    }
    QVariant headerData(int section, Qt::Orientation o, int role) const override {
        static const char* const names[ColumnCount] = {"Tensor", "Arena A", "Arena B", "Offset A",
                                                       "Offset B"};
        if (o != Qt::Horizontal || role != Qt::DisplayRole || section >= ColumnCount) return {};
        return QString::fromLatin1(names[section]);
    }

  private:
    const std::vector<sessions::TensorMove>* moves_ = nullptr;
};

std::vector<uint64_t> arenaSeries(const Plan& plan, int arena, bool highWater) {
    const auto& all = highWater ? plan.series.high_water : plan.series.live_bytes;
    if (arena >= 0)
        return size_t(arena) < all.size() ? all[size_t(arena)] : std::vector<uint64_t>{};
    return sum_over_arenas(all, plan.series.times.size());
}

SessionComparePanel::SessionComparePanel(QWidget* parent)
    : QWidget(parent), headline_(new QLabel(this)), arenas_(new QTableWidget(this)),
      moved_(new QTableView(this)), moveModel_(new TensorMoveModel(this)),
      arenaBox_(new QComboBox(this)), chart_(new QChart), legend_(new QLabel(this)) {
    headline_->setObjectName(QStringLiteral("compareHeadline"));
    headline_->setWordWrap(true);
    headline_->setTextFormat(Qt::RichText);
    headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    arenas_->setObjectName(QStringLiteral("compareArenas"));
    arenas_->setColumnCount(ArenaColumnCount);
    arenas_->setHorizontalHeaderLabels({tr("Arena"), tr("Peak A"), tr("Peak B"), tr("Δ peak"),
                                        tr("LB A"), tr("LB B"), tr("Δ LB")});
    arenas_->horizontalHeaderItem(BoundBefore)->setToolTip(tr("Lower bound of plan A"));
    arenas_->horizontalHeaderItem(BoundAfter)->setToolTip(tr("Lower bound of plan B"));
    arenas_->verticalHeader()->hide();
    arenas_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    arenas_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    arenas_->setSelectionMode(QAbstractItemView::NoSelection);
    arenas_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    moved_->setObjectName(QStringLiteral("compareMoved"));
    moved_->setModel(moveModel_);
    moved_->verticalHeader()->hide();
    moved_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    moved_->setSelectionBehavior(QAbstractItemView::SelectRows);
    moved_->horizontalHeader()->setStretchLastSection(true);
    const int ch = fontMetrics().horizontalAdvance(QLatin1Char('0'));
    for (int c = 0; c < TensorMoveModel::ColumnCount; ++c)
        moved_->setColumnWidth(c, (c == 0 ? 9 : c <= 2 ? 11 : 9) * ch);

    applyCompactChartLayout(chart_);
    auto* view = new QChartView(chart_, this);
    view->setObjectName(QStringLiteral("compareChartView"));
    view->setRenderHint(QPainter::Antialiasing, true);

    auto* chartBox = new QWidget(this);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 2, 4, 0);
    top->addWidget(new QLabel(tr("Arena:"), chartBox)); // as in the memory chart
    top->addWidget(arenaBox_, 1);
    auto* chartLayout = new QVBoxLayout(chartBox);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->setSpacing(0);
    chartLayout->addLayout(top);
    chartLayout->addWidget(view, 1);
    // The series' key as text that wraps: the chart's own legend cut "A high-water" to
    // "A hig…" in a half-width dock.
    chart_->legend()->hide();
    legend_->setObjectName(QStringLiteral("compareLegend"));
    legend_->setWordWrap(true);
    legend_->setContentsMargins(6, 0, 6, 4);
    chartLayout->addWidget(legend_);
    arenaBox_->setObjectName(QStringLiteral("compareArenaBox"));
    connect(arenaBox_, &QComboBox::activated, this, [this] { rebuildChart(); });

    auto* tables = new QSplitter(Qt::Vertical, this);
    tables->addWidget(arenas_);
    tables->addWidget(moved_);
    tables->setStretchFactor(0, 1);
    tables->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(tables);
    split->addWidget(chartBox);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    // Room for "Arena: All arenas (summed)" and a readable chart beside the tables.
    chartBox->setMinimumWidth(34 * fontMetrics().averageCharWidth());

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(headline_);
    layout->addWidget(split, 1);
    showMessage(tr("Select two sessions and press Compare, or Replay one session."));
}

SessionComparePanel::~SessionComparePanel() = default;

void SessionComparePanel::setComparison(const sessions::PlanComparison& comparison,
                                        CompareSide before, CompareSide after) {
    comparison_ = comparison;
    before_ = std::move(before);
    after_ = std::move(after);
    moveModel_->setMoves(&comparison_.moved);

    size_t changed = 0;
    for (const sessions::ArenaDelta& d : comparison_.arenas)
        changed += d.changed() ? 1 : 0;
    QString text = tr("<b>A</b> = %1 &nbsp; <b>B</b> = %2<br>")
                       .arg(before_.label.toHtmlEscaped(), after_.label.toHtmlEscaped());
    if (!comparison_.different_models.empty())
        text += tr("<b>Note</b>: %1.<br>").arg(qs(comparison_.different_models).toHtmlEscaped());
    if (comparison_.identical)
        text += tr("<b>Identical</b>: both plans hash to %1.")
                    .arg(qs(comparison_.hash_before.substr(0, 16)));
    else
        text += tr("<b>Different</b> (plan hash %1 → %2): %3 with changed metrics, %4 placed "
                   "differently.")
                    .arg(qs(comparison_.hash_before.substr(0, 12)),
                         qs(comparison_.hash_after.substr(0, 12)), qs(count_of(changed, "arena")),
                         qs(count_of(comparison_.moved.size(), "tensor")));
    auto changes = [this](const std::vector<sessions::SettingChange>& list) {
        QStringList lines;
        for (const sessions::SettingChange& c : list)
            lines << tr("%1 %2 → %3").arg(qs(c.what), qs(c.before), qs(c.after)).toHtmlEscaped();
        return lines.join(QStringLiteral("; "));
    };
    if (!comparison_.settings.empty() && !comparison_.identical)
        text += tr("<br><b>Settings</b>: %1.").arg(changes(comparison_.settings));
    if (!comparison_.history.empty())
        text += tr("<br><b>History</b>: %1.").arg(changes(comparison_.history));
    headline_->setText(text);
    fillArenas();

    const QString keep = arena();
    arenaBox_->clear();
    arenaBox_->addItem(tr("All arenas (summed)"), QString());
    for (const sessions::ArenaDelta& d : comparison_.arenas)
        arenaBox_->addItem(qs(d.arena), qs(d.arena));
    arenaBox_->setCurrentIndex(std::max(0, arenaBox_->findData(keep)));
    rebuildChart();
}

void SessionComparePanel::showMessage(const QString& text) {
    comparison_ = {};
    before_ = after_ = {};
    moveModel_->setMoves(nullptr);
    headline_->setText(text.toHtmlEscaped());
    arenas_->setRowCount(0);
    arenaBox_->clear();
    rebuildChart();
}

QString SessionComparePanel::headline() const {
    return headline_->text();
}

void SessionComparePanel::setArena(const QString& name) {
    arenaBox_->setCurrentIndex(std::max(0, arenaBox_->findData(name)));
    rebuildChart();
}

QString SessionComparePanel::arena() const {
    return arenaBox_->currentIndex() < 0 ? QString() : arenaBox_->currentData().toString();
}

void SessionComparePanel::fillArenas() {
    arenas_->setRowCount(int(comparison_.arenas.size()));
    auto set = [this](int row, int column, const QString& text, bool right = true) {
        auto* item = new QTableWidgetItem(text);
        if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        arenas_->setItem(row, column, item);
        return item;
    };
    auto metric = [](const std::optional<ArenaMetrics>& m, bool peak) {
        if (!m) return QStringLiteral("—");
        return humanBytes(peak ? m->peak_bytes : m->lower_bound);
    };
    for (int row = 0; row < int(comparison_.arenas.size()); ++row) {
        const sessions::ArenaDelta& d = comparison_.arenas[size_t(row)];
        set(row, ArenaName, qs(d.arena), false);
        set(row, PeakBefore, metric(d.before, true));
        set(row, PeakAfter, metric(d.after, true));
        set(row, BoundBefore, metric(d.before, false));
        set(row, BoundAfter, metric(d.after, false));
        for (auto [column, delta] : {std::pair(int(PeakDelta), d.peak_delta()),
                                     std::pair(int(BoundDelta), d.lower_bound_delta())}) {
            QTableWidgetItem* item =
                set(row, column, QString::fromStdString(format_byte_delta(delta)));
            if (delta != 0) item->setForeground(deltaColor(delta));
            item->setToolTip(tr("%1 bytes").arg(delta));
        }
    }
}

void SessionComparePanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) rebuildChart();
}

void SessionComparePanel::addSeries(const Plan& plan, int arena, bool highWater,
                                    const QString& name, const QColor& color, Qt::PenStyle style,
                                    double divisor, uint64_t end) {
    std::vector<uint64_t> values = arenaSeries(plan, arena, highWater);
    if (values.empty()) return;
    std::vector<QPointF> points =
        downsampleMax(plan.series.times, values, end, MemoryChart::kMaxBuckets);
    auto* series = new QLineSeries;
    QList<QPointF> list;
    list.reserve(qsizetype(points.size()));
    for (const QPointF& p : points)
        list.append(QPointF(p.x(), p.y() / divisor));
    series->replace(list);
    series->setName(name);
    QPen pen(color, style == Qt::SolidLine ? 1.5 : 2.0, style);
    pen.setCapStyle(Qt::FlatCap);
    series->setPen(pen);
    chart_->addSeries(series);
    for (QAbstractAxis* axis : chart_->axes())
        series->attachAxis(axis);
}

void SessionComparePanel::rebuildChart() {
    clearChart(chart_);
    ViewPalette palette = ViewPalette::fromApplication();
    const QString name = arena();
    const Plan* a = before_.plan.get();
    const Plan* b = after_.plan.get();
    const int ia = name.isEmpty() ? -1 : arenaIndex(a, name);
    const int ib = name.isEmpty() ? -1 : arenaIndex(b, name);
    uint64_t end = 1, top = 1;
    for (auto [plan, index] : {std::pair(a, ia), std::pair(b, ib)}) {
        if (!plan || (!name.isEmpty() && index < 0)) continue;
        end = std::max(end, plan_time_end(*plan));
        for (uint64_t v : arenaSeries(*plan, index, true))
            top = std::max(top, v);
    }
    auto* axisX = new QCategoryAxis;
    auto* axisY = new QValueAxis;
    chart_->addAxis(axisX, Qt::AlignBottom);
    chart_->addAxis(axisY, Qt::AlignLeft);
    ByteScale scale = byteScaleFor(top);
    labelTimeAxis(*axisX, 0, double(end), 5);
    axisX->setTitleText((a && a->mode) || (b && b->mode) ? tr("step") : tr("time"));
    axisY->setRange(0, double(top) / scale.divisor * 1.08);
    axisY->applyNiceNumbers();
    axisY->setLabelFormat(axisLabelFormat(tickStep(*axisY)));
    axisY->setTitleText(scale.unit);
    // Okabe-Ito: A solid (live blue, high-water orange), B dashed in the paired lighter or
    // stronger hue (live sky blue, high-water vermillion) so the legend tells them apart too.
    const QColor live = palette.slot(4), high = palette.slot(0);
    const QColor liveB = palette.slot(1), highB = palette.slot(5);
    QStringList key;
    auto keyed = [&key](const QColor& colour, const QString& name) {
        key << QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2")
                   .arg(colour.name(), name.toHtmlEscaped()
                                           .replace(' ', QStringLiteral("&nbsp;"))
                                           .replace('-', QStringLiteral("&#8209;")));
    };
    if (a && (name.isEmpty() || ia >= 0)) {
        addSeries(*a, ia, false, tr("A live"), live, Qt::SolidLine, scale.divisor, end);
        addSeries(*a, ia, true, tr("A high-water"), high, Qt::SolidLine, scale.divisor, end);
        keyed(live, tr("A live"));
        keyed(high, tr("A high-water"));
    }
    if (b && (name.isEmpty() || ib >= 0)) {
        addSeries(*b, ib, false, tr("B live"), liveB, Qt::DashLine, scale.divisor, end);
        addSeries(*b, ib, true, tr("B high-water"), highB, Qt::DashLine, scale.divisor, end);
        keyed(liveB, tr("B live (dashed)"));
        keyed(highB, tr("B high-water (dashed)"));
    }
    legend_->setText(key.join(QStringLiteral(" &nbsp; ")));
    applyChartPalette(chart_, palette);
}

} // namespace tmmu::views
