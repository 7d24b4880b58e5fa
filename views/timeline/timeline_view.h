#pragma once
// Shared base of the timeline views: time on x, a view-specific value (rows, slots, bytes) on
// y, both zoomable and pannable (wheel, drag, W/S/A/D, Ctrl+0), the current-event cursor line,
// tooltips, hover and selection overlays, and a geometry cache.
//
// The x window is the context's: every zoom or pan of time is written to the context, and every
// view (this one included) applies the window the context announces, so all timelines show the
// same time. The y window (rows, slots, bytes) stays per view.
//
// Geometry (the coloured rects) is built by the subclass for an over-fetched world window and
// cached with the scales, plot size and colour mode it was built for; paint replays it with a
// translation, so pans inside the fetched window, hover, selection and event changes never
// rebuild it. Only zooms, resizes, plan or colour-mode changes do.
#include "context/plan_context.h"
#include "style/palette.h"
#include "timeline/lod.h"
#include "timeline/time_axis.h"

#include <QHash>
#include <QStaticText>
#include <QWidget>

#include <climits>

#include <functional>
#include <memory>
#include <vector>

namespace tmmu::views {

class TimelineView : public QWidget {
    Q_OBJECT
  public:
    explicit TimelineView(PlanContext* ctx, QWidget* parent = nullptr);

    PlanContext* context() const { return ctx_; }
    // The axes always match the current plot size (even before a pending resize event).
    const TimeAxis& timeAxis() const {
        syncAxes();
        return xAxis_;
    }
    const TimeAxis& valueAxis() const {
        syncAxes();
        return yAxis_;
    }
    // Widget-coordinate area the items are drawn in (inside the gutters and axis strips).
    QRect plotRect() const;

    // Planned tensor under a widget point (a few pixels of slack so thin items can be picked),
    // or -1.
    virtual int tensorAt(QPoint p) const = 0;
    // Widget-coordinate rect of a planned tensor (may lie outside the plot); empty when the
    // view does not show it.
    virtual QRectF rectOf(int planned) const = 0;
    // Widget x of the cursor line (the middle of the current event's time column).
    double cursorX() const;
    int hoveredTensor() const { return hovered_; }

    // Viewport control, as the wheel and keys drive it. Positions are widget coordinates. Time
    // changes go to the context and so move every view.
    void zoomTime(double factor, double atX);
    void zoomValues(double factor, double atY);
    void panBy(double dx, double dy); // scrolls by pixels, like a drag of (-dx, -dy)
    void setTimeRange(double lo, double hi);
    void resetZoom();

    // How many times geometry was rebuilt, and the size of the cached geometry (benchmarks).
    int geometryBuilds() const { return builds_; }
    size_t cachedRectCount() const { return cache_.batches.rectCount(); }

    static QString navigationHelp();
    // The top strip's header lines: the header's " · "-separated parts flowed into rows, the
    // first row `first` pixels wide and the others `rest`, each part kept whole with `slack`
    // pixels to spare (the header's numbers change with the step while the strip keeps its
    // height). The first line is empty when not even the first part fits beside the indent; a
    // part too long for any row is left to be elided there. At most maxLines: what is left
    // joins the last line.
    static QStringList flowHeader(const QFontMetrics& fm, const QString& header, int first,
                                  int rest, int slack, int maxLines = INT_MAX);

    QSize sizeHint() const override { return {640, 320}; }
    QSize minimumSizeHint() const override { return {200, 120}; }

  protected:
    struct BarLabel {
        QRect rect; // cache pixels
        int tensor;
        uint8_t colour;
    };
    // A run of rows belonging to one arena, in y units.
    struct ArenaBand {
        uint32_t arena;
        uint32_t first;
        uint32_t count;
    };

    // Plan (or arena) changed: re-sort and re-index. Called before the axes are reset.
    virtual void rebuildData() = 0;
    // No plan any more: drop what rebuildData built from the last one that the view still
    // shows outside the plot (the plot itself says "No plan").
    virtual void clearData() {}
    // y runs over [0, valueDomain()) in the subclass's units.
    virtual double valueDomain() const = 0;
    virtual double minValueSpan() const { return 4; }
    virtual bool valuesInverted() const { return false; }
    // Appends the rects (colour keys: see colourKey) and label candidates for window w.
    virtual void buildGeometry(const FetchWindow& w, RectBatches& out,
                               std::vector<BarLabel>& labels) = 0;
    virtual void paintBackdrop(QPainter&, const QRect& /*plot*/) {}
    virtual void paintOverlay(QPainter&, const QRect& /*plot*/) {}
    virtual void paintGutter(QPainter& p, const QRect& gutter) = 0;
    virtual int gutterWidth() const { return 120; }
    // One row (header and legend), or, when the legend would not fit beside the header, rows for
    // the header (its " · "-separated parts flowed, whole) and rows for the legend: the legend
    // explains every colour drawn, so it never gives way to the header.
    int topStripHeight() const;
    virtual int stripRowHeight() const;
    // Rows the header takes in the top strip (1 when header and legend share one row).
    int headerLines() const;
    // Whether the legend needs a row of its own at the present width.
    bool legendOwnRow() const;
    // Left part of the top strip ("Live ranges · 1,234 tensors").
    virtual QString headerText() const = 0;
    virtual int headerIndent() const { return 0; }
    // Roles listed in the header legend (bit per Role): those present in the plan.
    virtual uint32_t legendRoles() const { return rolesPresent_; }
    virtual QString tooltipText(int planned) const;
    virtual void selectionChangedFromContext(int planned);

    // Reads the context's plan; subclasses call it at the end of their constructors (the
    // virtual hooks are not ready before) and the base calls it on every planChanged.
    void onPlanChanged();
    // Call when subclass state that the geometry depends on changes (arena switch).
    void rebuildAll();
    void invalidateGeometry() { cache_.valid = false; }
    const Plan* plan() const { return plan_.get(); }
    const ViewPalette& viewPalette() const { return palette_; }
    uint8_t colourKey(Role role, uint32_t slot) const;
    // colourKey of a planned tensor, from a compact per-tensor table (geometry builds touch
    // it for every visible item, so it must not pull whole PlannedTensor records into cache).
    uint8_t colourKeyOf(uint32_t planned) const { return colourKeys_[planned]; }
    QColor colourOf(uint8_t key) const;
    // Widget coordinates of a time value and a y value.
    double xOfTime(double t) const { return plotRect().left() + timeAxis().xOf(t); }
    double yOfValue(double v) const { return plotRect().top() + valueAxis().xOf(v); }
    double timeAtX(double x) const { return timeAxis().timeAt(x - plotRect().left()); }
    double valueAtY(double y) const { return valueAxis().timeAt(y - plotRect().top()); }
    QString tensorLabel(int planned) const;
    // Distance in pixels from the centre of pixel p to r as drawn (a sub-pixel extent fills
    // the pixel holding its centre); 0 inside. Used by the hit tests.
    static double distanceTo(QRectF r, QPoint p);
    // Alternating tints and separators of arena bands in the plot.
    void paintBandTints(QPainter& p, const QRect& plot, const std::vector<ArenaBand>& bands) const;
    // Rotated arena names in a strip at the left of the gutter; returns the strip width.
    int paintBandNames(QPainter& p, const QRect& gutter, const std::vector<ArenaBand>& bands) const;
    // Row labels right of the band strip when rows are tall enough to read.
    void paintRowLabels(QPainter& p, const QRect& area, uint32_t rows,
                        const std::function<QString(uint32_t)>& label) const;
    static int bandStripWidth() { return 18; }
    // Draws text elided to box's width (nothing when fewer than six characters would remain),
    // vertically centred, left or right aligned. The laid-out text is cached under
    // (kind, index, width) so repaints do not shape it again.
    enum class TextKind : uint8_t { BarLabel, RowLabel };
    void drawCachedText(QPainter& p, const QRectF& box, TextKind kind, uint32_t index,
                        bool alignRight, Qt::TextElideMode elide,
                        const std::function<QString()>& text) const;
    // Lanes for the row-based views: one lane per row [r0, r1) when rows are at least 1.5 px
    // tall (rowLane sets its band, less a 1 px gap once rows are 5 px), else one lane per
    // pixel row, holding every row whose centre falls in it.
    static void resetRowLanes(LaneMerger& m, const FetchWindow& w, int r0, int r1);
    static int rowLane(LaneMerger& m, const FetchWindow& w, int r, int r0);
    // Gutter of a banded row view: arena names in a strip, then each row's label when rows are
    // tall enough for text, else a summary at the top of each visible band.
    void paintBandedGutter(QPainter& p, const QRect& gutter, const std::vector<ArenaBand>& bands,
                           uint32_t rows, const std::function<QString(uint32_t)>& rowLabel,
                           const std::function<QString(const ArenaBand&)>& bandSummary);
    // Adds the bar [a0, a1) (cache pixels) of row r to its lane, plus a label when labels are
    // shown and the bar is wide enough to hold one.
    static void addRowBar(LaneMerger& m, const FetchWindow& w, int lane, int r, double a0,
                          double a1, int tensor, uint8_t colour, bool labelled,
                          std::vector<BarLabel>& labels);

    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    void leaveEvent(QEvent*) override;
    void changeEvent(QEvent*) override;
    bool event(QEvent*) override;

  private:
    static QString slotNote();        // the legend in slot colouring
    static QString roleLabel(Role r); // a role's name in the legend
    int legendWidth(const QFontMetrics& fm) const;
    // Rows the role legend takes, wrapped at `available` pixels.
    int legendRows(const QFontMetrics& fm, int available) const;
    struct Cache {
        bool valid = false;
        FetchWindow window;
        QSize plot;
        ColorMode mode = ColorMode::Role;
        RectBatches batches;
        std::vector<BarLabel> labels;
    };

    void onEventChanged();
    void onTimeWindowChanged(TimeWindow window);
    // Writes the x axis's window to the context (which emits only when it moved).
    void publishTimeWindow();
    void onColourModeChanged();
    void onSelectionChanged(int planned);
    void syncAxes() const;
    void ensureGeometry();
    void paintItems(QPainter& p, const QRect& plot);
    void paintLabels(QPainter& p, const QRect& plot);
    void paintTimeAxis(QPainter& p, const QRect& plot);
    void paintHeader(QPainter& p);
    void paintMarks(QPainter& p, const QRect& plot);
    void clickAt(QPoint pos);
    void ensureTimeVisible(double t);

    PlanContext* ctx_;
    std::shared_ptr<const Plan> plan_;
    ViewPalette palette_;
    // Mutable only so const queries can adopt a new widget size (see timeAxis()).
    mutable TimeAxis xAxis_;
    mutable TimeAxis yAxis_;
    Cache cache_;
    int builds_ = 0;
    int hovered_ = -1;
    uint32_t rolesPresent_ = 0; // bit per Role
    // topStripHeight for the width, colour mode, legend and plan it was measured at: plotRect()
    // reads it for every coordinate, and measuring means formatting and measuring text.
    struct StripHeight {
        int width = -1;
        ColorMode mode = ColorMode::Role;
        uint32_t roles = 0;
        const Plan* plan = nullptr;
        int height = 0;
        int headerLines = 1;
    };
    mutable StripHeight strip_;
    std::vector<uint8_t> colourKeys_;
    mutable QHash<quint64, QStaticText> textCache_;
    bool dragging_ = false;
    bool pressed_ = false;
    QPoint pressPos_;
    QPoint lastPos_;
};

} // namespace tmmu::views
