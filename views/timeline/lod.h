#pragma once
// Level-of-detail helpers shared by the timeline views (see shared/docs/fast-views.md):
// an interval index answering "items visible in [lo, hi)" in O(log n + k), a lane merger that
// collapses what a pixel cannot show, and colour-batched rect lists that paint replays.
// Only QtCore geometry types are used, so everything here is testable without widgets.
#include <QRect>
#include <QString>

#include <cstdint>
#include <vector>

namespace tmmu::views {

// Rects grouped by colour key so paint issues one drawRects call per colour.
struct RectBatches {
    std::vector<std::vector<QRect>> byColour;

    void reset(size_t colours);
    void add(uint8_t colour, const QRect& r);
    size_t rectCount() const;
};

// Items [begin, end) indexed for visibility queries. Items are split into classes by
// log2(duration) and sorted by begin inside a class: an item of class k (duration < 2^(k+1))
// visible in [lo, hi) has begin in (lo - 2^(k+1), hi), so one binary search per class bounds
// the scan to the visible items plus at most a class width of neighbours.
class IntervalIndex {
  public:
    struct Item {
        uint64_t begin = 0;
        uint64_t end = 0; // > begin
        uint32_t id = 0;
    };

    void build(std::vector<Item> items);
    size_t size() const { return size_; }

    // Calls f(item) for every item with end > lo and begin < hi, class by class.
    template <class F>
    void query(double lo, double hi, F&& f) const {
        for (const Class& c : classes_) {
            size_t i = lowerBound(c, lo - double(c.maxLength));
            for (; i < c.items.size() && double(c.items[i].begin) < hi; ++i)
                if (double(c.items[i].end) > lo) f(c.items[i]);
        }
    }

  private:
    struct Class {
        uint64_t maxLength = 0;
        std::vector<Item> items; // sorted by (begin, id)
    };
    static size_t lowerBound(const Class& c, double begin);

    std::vector<Class> classes_;
    size_t size_ = 0;
};

// Items sorted by begin with a running maximum of end. The visible ones are found by two
// binary searches and come out in begin order; the scan is tight when items rarely overlap
// (the tensors sharing one slot), unlike IntervalIndex which suits arbitrary overlap.
class SortedIntervals {
  public:
    using Item = IntervalIndex::Item;

    void build(std::vector<Item> items);
    size_t size() const { return items_.size(); }

    // Calls f(item) for every item with end > lo and begin < hi, in (begin, id) order.
    template <class F>
    void query(double lo, double hi, F&& f) const {
        size_t i = firstEndingAfter(lo);
        for (; i < items_.size() && double(items_[i].begin) < hi; ++i)
            if (double(items_[i].end) > lo) f(items_[i]);
    }

  private:
    size_t firstEndingAfter(double lo) const;

    std::vector<Item> items_;
    std::vector<uint64_t> maxEnd_; // maxEnd_[i] = max(end of items_[0..i])
};

// Spans along one axis inside lanes (pixel rows, or pixel columns), turned into rects with
// level of detail: spans narrower than a pixel collapse into one cell per pixel column (the
// widest span in the column gives the colour, runs of equal colour become one rect); wider
// spans become rects of their rounded extent, merged with the previous one when they touch and
// share a colour. Invariant (tested): every pixel column that holds a narrow span's centre, and
// every column a wide span covers entirely, is covered by an emitted rect of that lane.
class LaneMerger {
  public:
    enum class Axis { Horizontal, Vertical }; // Horizontal: lanes are rows, spans run along x

    void reset(Axis axis, int laneCount);
    // Cross-axis pixel extent [b0, b1) of a lane; the default is [lane, lane + 1).
    void setBand(int lane, int b0, int b1);
    // a0 < a1 in pixels along the lane; lanes outside [0, laneCount) are ignored.
    void add(int lane, double a0, double a1, uint8_t colour);
    // Appends the merged rects of every lane to out and clears the lanes.
    void flush(RectBatches& out);

  private:
    struct Span {
        double a0, a1;
        uint8_t colour;
    };
    struct Cell {
        int column;
        double width;
        uint8_t colour;
    };
    // Narrow spans go straight to cells; callers adding in begin order skip both sorts.
    struct Lane {
        std::vector<Span> spans;
        std::vector<Cell> cells;
    };
    void emitLane(int lane, RectBatches& out);
    void emitCells(int lane, std::vector<Cell>& cells, RectBatches& out) const;
    QRect makeRect(int lane, int a0, int a1) const;

    Axis axis_ = Axis::Horizontal;
    std::vector<Lane> lanes_;
    std::vector<std::pair<int, int>> bands_;
    std::vector<int> used_; // lanes that received spans, in first-use order
};

// The world window a cached geometry covers and its pixel mapping. Cache pixels are measured
// from the window's origin: x from x0; y from y0, or from y1 when the y axis is inverted.
struct FetchWindow {
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    double sx = 1, sy = 1; // pixels per unit
    bool yInverted = false;

    double px(double t) const { return (t - x0) * sx; }
    double py(double v) const { return yInverted ? (y1 - v) * sy : (v - y0) * sy; }
    int width() const;
    int height() const;
};

// Expands [lo, hi) by half a span each side, snapped outwards to a power-of-two grid (so small
// pans land in the same window), clamped to [domainLo, domainHi].
void overFetch(double lo, double hi, double domainLo, double domainHi, double& outLo,
               double& outHi);

} // namespace tmmu::views
