#include "timeline/live_range_view.h"

#include "style/text_format.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tmmu::views {
namespace {

constexpr double kPickSlack = 3; // pixels around the cursor a hit test accepts

} // namespace

LiveRangeView::LiveRangeView(PlanContext* ctx, QWidget* parent) : TimelineView(ctx, parent) {
    setObjectName(QStringLiteral("liveRangeView"));
    onPlanChanged();
}

void LiveRangeView::rebuildData() {
    const auto& tensors = plan()->tensors;
    std::vector<uint32_t> order(tensors.size());
    std::iota(order.begin(), order.end(), 0u);
    // Tensors are in ascending id order, so a stable sort keeps id as the last tie-break.
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const PlannedTensor& x = tensors[a];
        const PlannedTensor& y = tensors[b];
        if (x.arena != y.arena) return x.arena < y.arena;
        return x.life.begin < y.life.begin;
    });
    rows_.clear();
    rows_.reserve(order.size());
    for (uint32_t i : order) {
        const Lifetime& l = tensors[i].life;
        rows_.push_back({l.begin, std::max(l.end, l.begin + 1), i});
    }
    rowOf_.assign(tensors.size(), -1);
    bands_.clear();
    for (size_t r = 0; r < rows_.size(); ++r) {
        rowOf_[rows_[r].tensor] = int(r);
        uint32_t arena = tensors[rows_[r].tensor].arena;
        if (bands_.empty() || bands_.back().arena != arena)
            bands_.push_back({arena, uint32_t(r), 0});
        ++bands_.back().count;
    }
}

int LiveRangeView::rowOf(int planned) const {
    return planned >= 0 && size_t(planned) < rowOf_.size() ? rowOf_[size_t(planned)] : -1;
}

QRectF LiveRangeView::rowRect(int row) const {
    const Row& rw = rows_[size_t(row)];
    double x0 = xOfTime(rw.begin), x1 = xOfTime(rw.end);
    double y0 = yOfValue(row), y1 = yOfValue(row + 1);
    return QRectF(x0, y0, x1 - x0, y1 - y0);
}

QRectF LiveRangeView::rectOf(int planned) const {
    int row = plan() ? rowOf(planned) : -1;
    return row < 0 ? QRectF() : rowRect(row);
}

int LiveRangeView::tensorAt(QPoint p) const {
    if (!plan() || rows_.empty() || !plotRect().contains(p)) return -1;
    double rowsPerSlack = kPickSlack / valueAxis().scale();
    double at = valueAtY(p.y());
    int lo = std::max(0, int(std::floor(at - rowsPerSlack)));
    int hi = std::min(int(rows_.size()) - 1, int(std::floor(at + rowsPerSlack)));
    int best = -1;
    double bestDistance = kPickSlack + 1e-9, bestWidth = -1;
    for (int r = lo; r <= hi; ++r) {
        QRectF rr = rowRect(r);
        double d = distanceTo(rr, p);
        // Closest wins; among equals the widest bar, which is the one the LOD pass shows.
        if (d < bestDistance - 1e-9 || (d <= bestDistance + 1e-9 && rr.width() > bestWidth)) {
            best = int(rows_[size_t(r)].tensor);
            bestDistance = d;
            bestWidth = rr.width();
        }
    }
    return best;
}

void LiveRangeView::buildGeometry(const FetchWindow& w, RectBatches& out,
                                  std::vector<BarLabel>& labels) {
    int r0 = std::max(0, int(std::floor(w.y0)));
    int r1 = std::min(int(rows_.size()), int(std::ceil(w.y1)));
    resetRowLanes(merger_, w, r0, r1);
    bool labelled = w.sy >= 13;
    for (int r = r0; r < r1; ++r) {
        const Row& row = rows_[size_t(r)];
        if (row.end <= w.x0 || row.begin >= w.x1) continue;
        double a0 = w.px(row.begin), a1 = w.px(row.end);
        uint8_t colour = colourKeyOf(row.tensor);
        int lane = rowLane(merger_, w, r, r0);
        addRowBar(merger_, w, lane, r, a0, a1, int(row.tensor), colour, labelled, labels);
    }
    merger_.flush(out);
}

void LiveRangeView::paintBackdrop(QPainter& p, const QRect& plot) {
    paintBandTints(p, plot, bands_);
}

void LiveRangeView::paintGutter(QPainter& p, const QRect& gutter) {
    paintBandedGutter(
        p, gutter, bands_, uint32_t(rows_.size()),
        [this](uint32_t r) { return tensorLabel(int(rows_[r].tensor)); },
        [](const ArenaBand& b) { return counted(b.count, "tensor", "tensors"); });
}

QString LiveRangeView::headerText() const {
    return tr("Live ranges · %1 in %2, by birth")
        .arg(counted(rows_.size(), "tensor", "tensors"), counted(bands_.size(), "arena", "arenas"));
}

} // namespace tmmu::views
