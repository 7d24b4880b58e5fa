#include "timeline/slot_view.h"

#include "style/text_format.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <map>

namespace tmmu::views {
namespace {

constexpr double kPickSlack = 3;

} // namespace

SlotView::SlotView(PlanContext* ctx, QWidget* parent) : TimelineView(ctx, parent) {
    setObjectName(QStringLiteral("slotView"));
    onPlanChanged();
}

void SlotView::rebuildData() {
    const auto& tensors = plan()->tensors;
    // Ordered map: rows come out sorted by (arena, slot) whatever the tensor order.
    std::map<std::pair<uint32_t, uint32_t>, std::vector<IntervalIndex::Item>> bySlot;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PlannedTensor& t = tensors[i];
        uint64_t end = std::max<uint64_t>(t.life.end, uint64_t(t.life.begin) + 1);
        bySlot[{t.arena, t.slot}].push_back({t.life.begin, end, uint32_t(i)});
    }
    tenures_ = buffer_tenures(*plan(), views_of(*context()));
    rows_.clear();
    rows_.reserve(bySlot.size());
    rowOf_.assign(tensors.size(), -1);
    bands_.clear();
    for (auto& [key, items] : bySlot) {
        int row = int(rows_.size());
        for (const auto& it : items)
            rowOf_[it.id] = row;
        rows_.push_back({key.first, key.second, {}});
        rows_.back().items.build(std::move(items));
        if (bands_.empty() || bands_.back().arena != key.first)
            bands_.push_back({key.first, uint32_t(row), 0});
        ++bands_.back().count;
    }
}

int SlotView::rowOf(int planned) const {
    return planned >= 0 && size_t(planned) < rowOf_.size() ? rowOf_[size_t(planned)] : -1;
}

QRectF SlotView::barRect(int row, double begin, double end) const {
    double x0 = xOfTime(begin), x1 = xOfTime(end);
    double y0 = yOfValue(row), y1 = yOfValue(row + 1);
    return QRectF(x0, y0, x1 - x0, y1 - y0);
}

QRectF SlotView::rectOf(int planned) const {
    int row = plan() ? rowOf(planned) : -1;
    if (row < 0) return QRectF();
    const Lifetime& life = plan()->tensors[size_t(planned)].life;
    return barRect(row, life.begin, life.end);
}

int SlotView::tensorAt(QPoint p) const {
    if (!plan() || rows_.empty() || !plotRect().contains(p)) return -1;
    double at = valueAtY(p.y());
    double rowSlack = kPickSlack / valueAxis().scale();
    int lo = std::max(0, int(std::floor(at - rowSlack)));
    int hi = std::min(int(rows_.size()) - 1, int(std::floor(at + rowSlack)));
    double t = timeAtX(p.x());
    double timeSlack = kPickSlack / timeAxis().scale();
    int best = -1;
    double bestDistance = kPickSlack + 1e-9, bestWidth = -1;
    for (int r = lo; r <= hi; ++r) {
        rows_[size_t(r)].items.query(t - timeSlack, t + timeSlack, [&](const auto& it) {
            const Tenure& drawn = tenures_[it.id];
            QRectF rr = barRect(r, drawn.begin, drawn.end);
            double d = distanceTo(rr, p);
            if (d < bestDistance - 1e-9 || (d <= bestDistance + 1e-9 && rr.width() > bestWidth)) {
                best = int(it.id);
                bestDistance = d;
                bestWidth = rr.width();
            }
        });
    }
    return best;
}

void SlotView::buildGeometry(const FetchWindow& w, RectBatches& out,
                             std::vector<BarLabel>& labels) {
    int r0 = std::max(0, int(std::floor(w.y0)));
    int r1 = std::min(int(rows_.size()), int(std::ceil(w.y1)));
    resetRowLanes(merger_, w, r0, r1);
    bool labelled = w.sy >= 13;
    for (int r = r0; r < r1; ++r) {
        int lane = rowLane(merger_, w, r, r0);
        rows_[size_t(r)].items.query(w.x0, w.x1, [&](const IntervalIndex::Item& it) {
            const Tenure& drawn = tenures_[it.id];
            double a0 = w.px(drawn.begin), a1 = w.px(drawn.end);
            uint8_t colour = colourKeyOf(it.id);
            addRowBar(merger_, w, lane, r, a0, a1, int(it.id), colour, labelled, labels);
        });
    }
    merger_.flush(out);
}

void SlotView::paintBackdrop(QPainter& p, const QRect& plot) {
    paintBandTints(p, plot, bands_);
}

void SlotView::paintGutter(QPainter& p, const QRect& gutter) {
    paintBandedGutter(
        p, gutter, bands_, uint32_t(rows_.size()),
        [this](uint32_t r) { return tr("slot %1").arg(rows_[r].slot); },
        [](const ArenaBand& b) { return counted(b.count, "slot", "slots"); });
}

QString SlotView::headerText() const {
    size_t tensors = plan() ? plan()->tensors.size() : 0;
    double share = rows_.empty() ? 0 : double(tensors) / double(rows_.size());
    return tr("Slots · %1 for %2 (%3 per slot)")
        .arg(counted(rows_.size(), "slot", "slots"), counted(tensors, "tensor", "tensors"))
        .arg(share, 0, 'f', 1);
}

} // namespace tmmu::views
