#include "timeline/arena_layout_view.h"

#include "style/text_format.h"

#include <QComboBox>
#include <QPainter>
#include <QSignalBlocker>

#include <algorithm>
#include <cmath>

namespace tmmu::views {
namespace {

constexpr double kPickSlack = 3;
constexpr double kHeadroom = 1.08; // space above the peak for its label
constexpr int kGapStripMinPx = 14;

} // namespace

ArenaLayoutView::ArenaLayoutView(PlanContext* ctx, QWidget* parent)
    : TimelineView(ctx, parent), combo_(new QComboBox(this)) {
    setObjectName(QStringLiteral("arenaLayoutView"));
    combo_->setObjectName(QStringLiteral("arenaSelector"));
    // The view keeps keyboard focus for W/S/A/D; the selector is a mouse control.
    combo_->setFocusPolicy(Qt::NoFocus);
    combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    combo_->setToolTip(tr("Arena shown in the layout"));
    connect(combo_, &QComboBox::currentIndexChanged, this, [this](int i) { setArena(i); });
    onPlanChanged();
}

void ArenaLayoutView::setArena(int arena) {
    if (!plan() || arena < 0 || size_t(arena) >= plan()->arenas.size() || arena == arena_) return;
    arena_ = arena;
    {
        QSignalBlocker block(combo_);
        combo_->setCurrentIndex(arena);
    }
    rebuildAll();
    emit arenaChanged(arena);
}

void ArenaLayoutView::fillSelector() {
    QSignalBlocker block(combo_);
    combo_->clear();
    for (const ArenaPlan& a : plan()->arenas)
        combo_->addItem(tr("%1 · %2 · peak %3")
                            .arg(QString::fromStdString(a.config.name),
                                 counted(a.problem.buffers.size(), "buffer", "buffers"),
                                 humanBytes(a.metrics.peak_bytes)));
    combo_->show();
    placeSelector();
}

void ArenaLayoutView::clearData() {
    // The selector names the last plan's arenas: with no plan it names none and is hidden.
    QSignalBlocker block(combo_);
    combo_->clear();
    combo_->hide();
    selectorPlan_.reset();
}

void ArenaLayoutView::placeSelector() {
    QSize hint = combo_->sizeHint();
    // As wide as its text where the view allows: the header flows onto rows below it.
    int w = std::min(hint.width(), std::max(120, width() - 8));
    combo_->setGeometry(4, (stripRowHeight() - hint.height()) / 2, w, hint.height());
}

void ArenaLayoutView::resizeEvent(QResizeEvent* e) {
    placeSelector();
    TimelineView::resizeEvent(e);
}

int ArenaLayoutView::stripRowHeight() const {
    return std::max(24, combo_->sizeHint().height() + 4);
}
int ArenaLayoutView::headerIndent() const {
    return combo_->isHidden() ? 0 : combo_->geometry().right() + 4;
}

void ArenaLayoutView::rebuildData() {
    const Plan& plan = *this->plan();
    // weak_ptr, not the address: a new plan may be allocated where the old one was.
    if (selectorPlan_.lock().get() != &plan || combo_->count() != int(plan.arenas.size())) {
        selectorPlan_ = context()->planPtr();
        if (arena_ < 0 || size_t(arena_) >= plan.arenas.size()) arena_ = defaultArena(plan);
        fillSelector();
        QSignalBlocker block(combo_);
        combo_->setCurrentIndex(arena_);
    }
    blocks_.clear();
    tensorsOf_.clear();
    pieces_.clear();
    arenaRoles_ = 0;
    if (plan.arenas.empty()) {
        index_.build({});
        return;
    }
    const ArenaPlan& a = plan.arenas[size_t(arena_)];
    size_t n = a.problem.buffers.size();
    tensorsOf_.assign(n, {});
    for (size_t i = 0; i < plan.tensors.size(); ++i)
        if (plan.tensors[i].arena == uint32_t(arena_) && plan.tensors[i].buffer < n)
            tensorsOf_[plan.tensors[i].buffer].push_back(int(i));
    blocks_.reserve(n);
    std::vector<IntervalIndex::Item> items;
    items.reserve(n);
    for (size_t b = 0; b < n; ++b) {
        const Buffer& buf = a.problem.buffers[b];
        int root = b < a.buffer_names.size() ? context()->findTensor(a.buffer_names[b]) : -1;
        if (root < 0 && !tensorsOf_[b].empty()) root = tensorsOf_[b].front();
        Role role = root >= 0 ? plan.tensors[size_t(root)].role : Role::Activation;
        uint32_t slot = b < a.slot_of_buffer.size() ? a.slot_of_buffer[b] : 0;
        blocks_.push_back({a.solution.offsets[b], buf.size, uint32_t(buf.begin), uint32_t(buf.end),
                           root, role, slot});
        arenaRoles_ |= 1u << unsigned(role);
        items.push_back({buf.begin, std::max(buf.end, buf.begin + 1), uint32_t(b)});
    }
    tenures_ = buffer_tenures(plan, views_of(*context()));
    pieces_.reserve(n);
    for (size_t b = 0; b < n; ++b) {
        pieces_.push_back(piecesOf(b));
        for (const Piece& piece : pieces_.back())
            arenaRoles_ |= 1u << unsigned(piece.role);
    }
    index_.build(std::move(items));
}

std::vector<ArenaLayoutView::Piece> ArenaLayoutView::piecesOf(size_t buffer) const {
    const Block& block = blocks_[buffer];
    std::vector<Piece> pieces;
    for (int i : tensorsOf_[buffer])
        if (tenures_[size_t(i)].takesOver)
            pieces.push_back({tenures_[size_t(i)].begin, tenures_[size_t(i)].end, i,
                              plan()->tensors[size_t(i)].role});
    if (pieces.size() < 2)
        return {{double(block.begin), double(block.end), block.tensor, block.role}};
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
    // The buffer's lifetime may reach past its tensors' (widened by must_not_alias): the first
    // and last pieces take what lies before and after.
    pieces.front().begin = double(block.begin);
    pieces.back().end = std::max(pieces.back().end, double(block.end));
    return pieces;
}

int ArenaLayoutView::defaultArena(const Plan& plan) {
    // The arena holding most activations is where reuse happens; the highest peak breaks ties
    // (and decides when there are no activations at all).
    std::vector<size_t> activations(plan.arenas.size(), 0);
    for (const PlannedTensor& t : plan.tensors)
        if (t.role == Role::Activation && t.arena < activations.size()) ++activations[t.arena];
    int best = 0;
    for (size_t a = 1; a < plan.arenas.size(); ++a) {
        auto key = [&](size_t i) {
            return std::pair(activations[i], plan.arenas[i].metrics.peak_bytes);
        };
        if (key(a) > key(size_t(best))) best = int(a);
    }
    return best;
}

uint64_t ArenaLayoutView::peak() const {
    return plan() && arena_ >= 0 && size_t(arena_) < plan()->arenas.size()
               ? plan()->arenas[size_t(arena_)].metrics.peak_bytes
               : 0;
}

uint64_t ArenaLayoutView::lowerBound() const {
    return plan() && arena_ >= 0 && size_t(arena_) < plan()->arenas.size()
               ? plan()->arenas[size_t(arena_)].metrics.lower_bound
               : 0;
}

double ArenaLayoutView::valueDomain() const {
    return std::max<double>({double(peak()), double(lowerBound()), 1.0}) * kHeadroom;
}

QRectF ArenaLayoutView::blockRect(uint64_t offset, uint64_t size, uint32_t begin,
                                  uint32_t end) const {
    double x0 = xOfTime(begin), x1 = xOfTime(end);
    double top = yOfValue(double(offset + size)), bottom = yOfValue(double(offset));
    return QRectF(x0, top, x1 - x0, bottom - top);
}

QRectF ArenaLayoutView::rectOf(int planned) const {
    if (!plan() || planned < 0 || size_t(planned) >= plan()->tensors.size()) return QRectF();
    const PlannedTensor& t = plan()->tensors[size_t(planned)];
    if (int(t.arena) != arena_) return QRectF();
    return blockRect(t.offset, t.size, t.life.begin, t.life.end);
}

int ArenaLayoutView::tensorAt(QPoint p) const {
    if (!plan() || blocks_.empty() || !plotRect().contains(p)) return -1;
    double t = timeAtX(p.x());
    double slack = kPickSlack / timeAxis().scale();
    int best = -1;
    double bestDistance = kPickSlack + 1e-9, bestArea = 0;
    index_.query(t - slack, t + slack, [&](const IntervalIndex::Item& it) {
        const Block& b = blocks_[it.id];
        QRectF r = blockRect(b.offset, b.size, b.begin, b.end);
        double d = distanceTo(r, p);
        double area = r.width() * r.height();
        // Closest wins; among equals the smallest, so thin blocks on a border can be picked.
        if (d < bestDistance - 1e-9 || (d <= bestDistance + 1e-9 && area < bestArea)) {
            best = int(it.id);
            bestDistance = d;
            bestArea = area;
        }
    });
    if (best < 0) return -1;
    // A buffer may hold several tensors: the one drawn under the cursor, or the smallest view
    // inside it there.
    int pick = blocks_[size_t(best)].tensor;
    for (const Piece& piece : pieces_[size_t(best)])
        if (piece.begin <= t && t < piece.end) pick = piece.tensor;
    uint64_t pickSize = UINT64_MAX;
    for (int i : tensorsOf_[size_t(best)]) {
        const PlannedTensor& pt = plan()->tensors[size_t(i)];
        if (!tenures_[size_t(i)].takesOver &&
            blockRect(pt.offset, pt.size, pt.life.begin, pt.life.end).contains(p) &&
            pt.size < pickSize) {
            pick = i;
            pickSize = pt.size;
        }
    }
    return pick;
}

std::vector<ArenaLayoutView::Gap> ArenaLayoutView::freeGapsAt(uint64_t step) const {
    std::vector<std::pair<uint64_t, uint64_t>> live; // [offset, end)
    index_.query(double(step), double(step) + 1, [&](const IntervalIndex::Item& it) {
        const Block& b = blocks_[it.id];
        live.emplace_back(b.offset, b.offset + b.size);
    });
    std::sort(live.begin(), live.end());
    std::vector<Gap> gaps;
    uint64_t cursor = 0, top = peak();
    for (auto [lo, hi] : live) {
        if (lo > cursor) gaps.push_back({cursor, std::min(lo, top) - cursor});
        cursor = std::max(cursor, hi);
        if (cursor >= top) break;
    }
    if (cursor < top) gaps.push_back({cursor, top - cursor});
    return gaps;
}

void ArenaLayoutView::buildGeometry(const FetchWindow& w, RectBatches& out,
                                    std::vector<BarLabel>& labels) {
    int width = w.width(), height = w.height();
    rows_.reset(LaneMerger::Axis::Horizontal, height + 2);
    columns_.reset(LaneMerger::Axis::Vertical, width + 2);
    auto clip = [](double v, double hi) { return std::clamp(v, -2.0, hi + 2); };
    index_.query(w.x0, w.x1, [&](const IntervalIndex::Item& it) {
        const Block& b = blocks_[it.id];
        if (double(b.offset) >= w.y1 || double(b.offset + b.size) <= w.y0) return;
        double y0 = w.py(double(b.offset + b.size)), y1 = w.py(double(b.offset));
        for (const Piece& piece : pieces_[it.id]) {
            double x0 = w.px(piece.begin), x1 = w.px(piece.end);
            if (x1 < -2 || x0 > width + 2) continue;
            uint8_t colour = colourKey(piece.role, b.slot);
            if (x1 - x0 < 1) {
                columns_.add(int(std::floor((x0 + x1) / 2)), y0, y1, colour);
                continue;
            }
            if (y1 - y0 < 1) {
                rows_.add(int(std::floor((y0 + y1) / 2)), x0, x1, colour);
                continue;
            }
            int ix0 = int(std::lround(clip(x0, width))), ix1 = int(std::lround(clip(x1, width)));
            int iy0 = int(std::lround(clip(y0, height))), iy1 = int(std::lround(clip(y1, height)));
            ix1 = std::max(ix1, ix0 + 1);
            iy1 = std::max(iy1, iy0 + 1);
            // Large blocks keep a 1 px seam so neighbours of one colour stay distinguishable.
            bool seam = x1 - x0 >= 6 && y1 - y0 >= 6;
            QRect r(ix0, iy0, ix1 - ix0 - (seam ? 1 : 0), iy1 - iy0 - (seam ? 1 : 0));
            out.add(colour, r);
            if (piece.tensor >= 0 && r.width() >= 40 && r.height() >= 14)
                labels.push_back({r, piece.tensor, colour});
        }
    });
    rows_.flush(out);
    columns_.flush(out);
}

void ArenaLayoutView::paintBackdrop(QPainter& p, const QRect& plot) {
    const TimeAxis& y = valueAxis();
    double step = niceByteStep(y.span(), plot.height(), 36);
    p.setPen(viewPalette().grid());
    for (double v = std::ceil(y.visibleLo() / step) * step; v <= y.visibleHi(); v += step) {
        int py = int(std::lround(yOfValue(v)));
        p.drawLine(plot.left(), py, plot.right(), py);
    }
}

void ArenaLayoutView::paintGutter(QPainter& p, const QRect& gutter) {
    const TimeAxis& y = valueAxis();
    double step = niceByteStep(y.span(), gutter.height(), 36);
    QFontMetrics fm(font());
    p.setPen(viewPalette().text());
    for (double v = std::ceil(y.visibleLo() / step) * step; v <= y.visibleHi(); v += step) {
        int py = int(std::lround(yOfValue(v)));
        p.drawLine(gutter.right() - 4, py, gutter.right(), py);
        QRect box(gutter.left() + 2, py - fm.height() / 2, gutter.width() - 10, fm.height());
        box.moveTop(std::clamp(box.top(), gutter.top(), gutter.bottom() - fm.height()));
        p.drawText(box, Qt::AlignRight | Qt::AlignVCenter,
                   byteTickLabel(uint64_t(v), uint64_t(step), uint64_t(y.visibleHi())));
    }
}

void ArenaLayoutView::paintLine(QPainter& p, const QRect& plot, uint64_t bytes,
                                const QColor& colour, const QString& label, bool dashed,
                                int labelTop) const {
    double y = yOfValue(double(bytes));
    if (y < plot.top() - 1 || y > plot.bottom() + 1) return;
    p.setPen(QPen(colour, 2, dashed ? Qt::DashLine : Qt::SolidLine));
    int yi = int(std::lround(y));
    p.drawLine(plot.left(), yi, plot.right(), yi);
    QFontMetrics fm(font());
    QString text = label + QStringLiteral(" ") + humanBytes(bytes);
    int w = fm.horizontalAdvance(text) + 8;
    QRect box(plot.right() - w - 4, labelTop, w, fm.height());
    QColor back = viewPalette().background();
    back.setAlpha(225);
    p.fillRect(box, back);
    p.setPen(colour.darker(viewPalette().dark() ? 70 : 130));
    p.drawText(box, Qt::AlignCenter, text);
}

void ArenaLayoutView::paintGaps(QPainter& p, const QRect& plot) const {
    uint64_t step = context()->currentTime();
    double x0 = xOfTime(double(step)), x1 = xOfTime(double(step) + 1);
    double mid = (x0 + x1) / 2;
    double half = std::max((x1 - x0) / 2, kGapStripMinPx / 2.0);
    if (mid + half < plot.left() || mid - half > plot.right()) return;
    QColor edge = viewPalette().lowerBound();
    for (const Gap& g : freeGapsAt(step)) {
        double top = yOfValue(double(g.offset + g.size)), bottom = yOfValue(double(g.offset));
        QRectF r(mid - half, top, 2 * half, std::max(bottom - top, 2.0));
        p.fillRect(r, viewPalette().freeGap());
        p.setPen(QPen(edge, 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r);
    }
}

void ArenaLayoutView::paintOverlay(QPainter& p, const QRect& plot) {
    paintGaps(p, plot);
    uint64_t lb = lowerBound(), pk = peak();
    const int h = QFontMetrics(font()).height();
    const int yPeak = int(std::lround(yOfValue(double(pk))));
    const int yBound = int(std::lround(yOfValue(double(lb)))); // at or below yPeak: lb <= peak
    // Labels sit above their lines, or below where the plot has no room above (a short view).
    // The lower bound's goes under its line, past the peak's, when the two would overlap.
    auto above = [&](int y) { return y - h - 3 >= plot.top() ? y - h - 3 : y + 3; };
    const int peakTop = above(yPeak);
    int boundTop = above(yBound);
    const bool close = std::abs(boundTop - peakTop) < h + 2;
    if (close) boundTop = std::max(yBound + 3, peakTop + h + 2);
    paintLine(p, plot, lb, viewPalette().lowerBound(), tr("lower bound"), close, boundTop);
    paintLine(p, plot, pk, viewPalette().peak(), tr("peak"), false, peakTop);
}

QString ArenaLayoutView::headerText() const {
    uint64_t lb = lowerBound(), pk = peak();
    QString over =
        lb > 0 ? QStringLiteral(" (+%1 %)").arg(100.0 * (double(pk) / double(lb) - 1), 0, 'f', 1)
               : QString();
    uint64_t free = 0;
    auto gaps = freeGapsAt(context()->currentTime());
    for (const Gap& g : gaps)
        free += g.size;
    return tr("peak %1%2 · %3 %4: %5 free in %6")
        .arg(humanBytes(pk), over, context()->timeUnit())
        .arg(context()->currentTime())
        .arg(humanBytes(free), counted(gaps.size(), "gap", "gaps"));
}

QString ArenaLayoutView::tooltipText(int planned) const {
    QString text = TimelineView::tooltipText(planned);
    const PlannedTensor& t = plan()->tensors[size_t(planned)];
    if (t.buffer < tensorsOf_.size() && tensorsOf_[t.buffer].size() > 1)
        text += tr("<br>buffer shared by %1 tensors").arg(tensorsOf_[t.buffer].size());
    return text;
}

void ArenaLayoutView::selectionChangedFromContext(int planned) {
    if (plan() && planned >= 0 && size_t(planned) < plan()->tensors.size())
        setArena(int(plan()->tensors[size_t(planned)].arena));
    TimelineView::selectionChangedFromContext(planned);
}

} // namespace tmmu::views
