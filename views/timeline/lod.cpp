#include "timeline/lod.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tmmu::views {

void RectBatches::reset(size_t colours) {
    byColour.resize(colours);
    for (auto& v : byColour)
        v.clear();
}

void RectBatches::add(uint8_t colour, const QRect& r) {
    if (colour >= byColour.size()) byColour.resize(size_t(colour) + 1);
    byColour[colour].push_back(r);
}

size_t RectBatches::rectCount() const {
    size_t n = 0;
    for (const auto& v : byColour)
        n += v.size();
    return n;
}

void IntervalIndex::build(std::vector<Item> items) {
    classes_.clear();
    size_ = items.size();
    for (const Item& it : items) {
        uint64_t length = it.end > it.begin ? it.end - it.begin : 1;
        size_t k = size_t(std::bit_width(length)) - 1; // length in [2^k, 2^(k+1))
        if (classes_.size() <= k) classes_.resize(k + 1);
        classes_[k].maxLength = std::max(classes_[k].maxLength, length);
        classes_[k].items.push_back(it);
    }
    std::erase_if(classes_, [](const Class& c) { return c.items.empty(); });
    for (Class& c : classes_)
        std::sort(c.items.begin(), c.items.end(), [](const Item& a, const Item& b) {
            return a.begin != b.begin ? a.begin < b.begin : a.id < b.id;
        });
}

size_t IntervalIndex::lowerBound(const Class& c, double begin) {
    if (!(begin > 0)) return 0;
    auto key = uint64_t(std::floor(begin));
    auto it = std::lower_bound(c.items.begin(), c.items.end(), key,
                               [](const Item& a, uint64_t k) { return a.begin < k; });
    return size_t(it - c.items.begin());
}

void LaneMerger::reset(Axis axis, int laneCount) {
    axis_ = axis;
    laneCount = std::max(laneCount, 0);
    for (int lane : used_) {
        lanes_[size_t(lane)].spans.clear();
        lanes_[size_t(lane)].cells.clear();
    }
    used_.clear();
    if (int(lanes_.size()) < laneCount) lanes_.resize(size_t(laneCount));
    bands_.resize(size_t(laneCount));
    for (int i = 0; i < laneCount; ++i)
        bands_[size_t(i)] = {i, i + 1};
}

void LaneMerger::setBand(int lane, int b0, int b1) {
    if (lane < 0 || lane >= int(bands_.size())) return;
    bands_[size_t(lane)] = {b0, std::max(b1, b0 + 1)};
}

void LaneMerger::add(int lane, double a0, double a1, uint8_t colour) {
    if (lane < 0 || lane >= int(bands_.size()) || !(a1 > a0)) return;
    Lane& l = lanes_[size_t(lane)];
    if (l.spans.empty() && l.cells.empty()) used_.push_back(lane);
    if (a1 - a0 < 1.0) {
        l.cells.push_back({int(std::floor((a0 + a1) / 2)), a1 - a0, colour});
        return;
    }
    // Keep far-off-screen extents within int range; the cut never makes a span narrow.
    a0 = std::max(a0, -8.0);
    a1 = std::min(a1, 8.0e6);
    if (a1 - a0 >= 1.0) l.spans.push_back({a0, a1, colour});
}

void LaneMerger::flush(RectBatches& out) {
    for (int lane : used_) {
        emitLane(lane, out);
        lanes_[size_t(lane)].spans.clear();
        lanes_[size_t(lane)].cells.clear();
    }
    used_.clear();
}

QRect LaneMerger::makeRect(int lane, int a0, int a1) const {
    auto [b0, b1] = bands_[size_t(lane)];
    return axis_ == Axis::Horizontal ? QRect(a0, b0, a1 - a0, b1 - b0)
                                     : QRect(b0, a0, b1 - b0, a1 - a0);
}

void LaneMerger::emitLane(int lane, RectBatches& out) {
    Lane& l = lanes_[size_t(lane)];
    auto byStart = [](const Span& a, const Span& b) { return a.a0 < b.a0; };
    if (!std::is_sorted(l.spans.begin(), l.spans.end(), byStart))
        std::stable_sort(l.spans.begin(), l.spans.end(), byStart);
    bool open = false;
    int r0 = 0, r1 = 0;
    uint8_t rc = 0;
    for (const Span& s : l.spans) {
        int p0 = int(std::lround(s.a0));
        int p1 = std::max(int(std::lround(s.a1)), p0 + 1);
        if (open && rc == s.colour && p0 <= r1) {
            r1 = std::max(r1, p1);
            continue;
        }
        if (open) out.add(rc, makeRect(lane, r0, r1));
        open = true;
        r0 = p0;
        r1 = p1;
        rc = s.colour;
    }
    if (open) out.add(rc, makeRect(lane, r0, r1));
    emitCells(lane, l.cells, out);
}

void LaneMerger::emitCells(int lane, std::vector<Cell>& cells, RectBatches& out) const {
    // One cell per column: the widest narrow span there gives the colour (first wins ties).
    auto byColumn = [](const Cell& a, const Cell& b) { return a.column < b.column; };
    if (!std::is_sorted(cells.begin(), cells.end(), byColumn))
        std::stable_sort(cells.begin(), cells.end(), byColumn);
    bool run = false;
    int c0 = 0, c1 = 0;
    uint8_t cc = 0;
    for (size_t i = 0; i < cells.size();) {
        size_t best = i;
        size_t j = i + 1;
        for (; j < cells.size() && cells[j].column == cells[i].column; ++j)
            if (cells[j].width > cells[best].width) best = j;
        int column = cells[i].column;
        uint8_t colour = cells[best].colour;
        if (run && colour == cc && column == c1) {
            c1 = column + 1;
        } else {
            if (run) out.add(cc, makeRect(lane, c0, c1));
            run = true;
            c0 = column;
            c1 = column + 1;
            cc = colour;
        }
        i = j;
    }
    if (run) out.add(cc, makeRect(lane, c0, c1));
}

void SortedIntervals::build(std::vector<Item> items) {
    items_ = std::move(items);
    std::sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.id < b.id;
    });
    maxEnd_.resize(items_.size());
    uint64_t m = 0;
    for (size_t i = 0; i < items_.size(); ++i)
        maxEnd_[i] = m = std::max(m, items_[i].end);
}

size_t SortedIntervals::firstEndingAfter(double lo) const {
    auto it = std::partition_point(maxEnd_.begin(), maxEnd_.end(),
                                   [lo](uint64_t e) { return double(e) <= lo; });
    return size_t(it - maxEnd_.begin());
}

int FetchWindow::width() const {
    return int(std::ceil((x1 - x0) * sx));
}
int FetchWindow::height() const {
    return int(std::ceil((y1 - y0) * sy));
}

void overFetch(double lo, double hi, double domainLo, double domainHi, double& outLo,
               double& outHi) {
    double span = std::max(hi - lo, 1e-9);
    double grid = std::exp2(std::floor(std::log2(span))) / 2;
    outLo = std::max(domainLo, std::floor((lo - span / 2) / grid) * grid);
    outHi = std::min(domainHi, std::ceil((hi + span / 2) / grid) * grid);
    if (!(outHi > outLo)) {
        outLo = lo;
        outHi = hi;
    }
}

} // namespace tmmu::views
