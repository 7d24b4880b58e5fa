#include "panels/tensor_details_panel.h"

#include "context/plan_context.h"
#include "plan/plan_summary.h"
#include "style/palette.h"
#include "style/text_format.h"

#include <QEvent>
#include <QLocale>
#include <QScrollBar>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace tmmu::views {
namespace {

// Consumers beyond this many are summarised; a tensor read by thousands of nodes stays readable.
constexpr size_t kMaxConsumers = 64;

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
QString esc(std::string_view s) {
    return qs(s).toHtmlEscaped();
}
QString grouped(uint64_t v) {
    return QLocale().toString(qulonglong(v));
}

QString row(const QString& label, const QString& value) {
    return QStringLiteral("<tr><td class='k'>%1</td><td>%2</td></tr>").arg(label, value);
}

QString swatch(const QColor& c) {
    return QStringLiteral("<span style='background-color:%1'>&nbsp;&nbsp;&nbsp;</span>&nbsp;")
        .arg(c.name());
}

QString shapeWithElements(const std::vector<int64_t>& shape,
                          const std::vector<std::string>& dimNames) {
    if (shape.empty()) return QStringLiteral("scalar");
    uint64_t elements = 1;
    for (int64_t d : shape)
        elements *= uint64_t(d < 0 ? 0 : d);
    return QStringLiteral("%1 (%2 elements)").arg(shapeText(shape, dimNames), grouped(elements));
}

// A node's attributes as the source gave them (ONNX: "axis = 1"), one per line; empty when the
// source has none for it.
QString attributeLines(const ModelAnnotations& annotations, uint32_t node) {
    if (node >= annotations.node_attributes.size()) return {};
    QStringList lines;
    for (const auto& [name, value] : annotations.node_attributes[node])
        lines << QStringLiteral("%1 = %2").arg(esc(name), esc(value));
    return lines.join(QStringLiteral("<br>"));
}

} // namespace

TensorDetailsPanel::TensorDetailsPanel(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), browser_(new QTextBrowser(this)) {
    browser_->setOpenLinks(false);
    browser_->setFrameShape(QFrame::NoFrame);
    browser_->setTextInteractionFlags(Qt::TextBrowserInteraction);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(browser_);
    connect(browser_, &QTextBrowser::anchorClicked, this, &TensorDetailsPanel::followLink);
    connect(ctx_, &PlanContext::planChanged, this, &TensorDetailsPanel::planChanged);
    connect(ctx_, &PlanContext::selectionChanged, this, &TensorDetailsPanel::refresh);
    connect(ctx_, &PlanContext::currentEventChanged, this, [this] {
        if (ctx_->selectedTensor() >= 0) refresh();
    });
    planChanged();
}

void TensorDetailsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) refresh();
}

QString TensorDetailsPanel::plainText() const {
    return browser_->toPlainText();
}

void TensorDetailsPanel::planChanged() {
    stepOfNode_.clear();
    opAtStep_.clear();
    if (const Plan* plan = ctx_->plan())
        for (size_t s = 0; s < plan->execution_order.size(); ++s)
            stepOfNode_.emplace(plan->execution_order[s], s);
    const LoadedModel* model = ctx_->model();
    if (model && model->graph && !stepOfNode_.empty()) {
        opAtStep_.resize(stepOfNode_.size());
        for (const Node& n : model->graph->nodes)
            if (auto it = stepOfNode_.find(n.id); it != stepOfNode_.end())
                opAtStep_[size_t(it->second)] = qs(n.opcode);
    }
    refresh();
}

QString TensorDetailsPanel::muted() const {
    // Halfway between text and background reads as secondary on light and dark themes alike.
    const QColor text = palette().color(QPalette::Text), base = palette().color(QPalette::Base);
    return QColor((text.red() + base.red()) / 2, (text.green() + base.green()) / 2,
                  (text.blue() + base.blue()) / 2)
        .name();
}

void TensorDetailsPanel::refresh() {
    int planned = ctx_->selectedTensor();
    if (!ctx_->plan() || planned < 0 || size_t(planned) >= ctx_->plan()->tensors.size()) {
        browser_->setHtml(QStringLiteral("<p align='center' style='color:%1'><br>%2</p>")
                              .arg(muted(), tr("No tensor selected")));
        return;
    }
    // Keep the reader's place when only the event changed.
    int scroll = browser_->verticalScrollBar()->value();
    browser_->setHtml(html(planned));
    browser_->verticalScrollBar()->setValue(scroll);
}

void TensorDetailsPanel::followLink(const QUrl& url) {
    bool ok = false;
    qulonglong value = url.path().toULongLong(&ok);
    if (!ok) return;
    if (url.scheme() == QLatin1String("step"))
        ctx_->setCurrentEvent(ctx_->eventAxis().eventAt(value));
    else if (url.scheme() == QLatin1String("tensor"))
        ctx_->selectTensor(int(value));
}

QString TensorDetailsPanel::stepLink(uint64_t step) const {
    QString label = QStringLiteral("%1 %2").arg(ctx_->timeUnit()).arg(step);
    if (step < opAtStep_.size() && !opAtStep_[size_t(step)].isEmpty())
        label += QStringLiteral(" (%1)").arg(opAtStep_[size_t(step)].toHtmlEscaped());
    if (step >= ctx_->timeEnd()) return label; // past the last step: nothing to move to
    return QStringLiteral("<a href='step:%1'>%2</a>").arg(step).arg(label);
}

QString TensorDetailsPanel::nodeLink(const Graph& g, uint32_t node) const {
    const Node& n = g.nodes[node];
    // "matmul (node n000045)"; the node id is left out when it just repeats the opcode.
    QString node_id =
        n.id == n.opcode
            ? QString()
            : QStringLiteral(" <span style='color:%1'>node %2</span>").arg(muted(), esc(n.id));
    auto it = stepOfNode_.find(n.id);
    if (it == stepOfNode_.end())
        return QStringLiteral("<b>%1</b>%2 <i>%3</i>")
            .arg(esc(n.opcode), node_id, tr("(not run in this mode)"));
    return QStringLiteral("<a href='step:%1'><b>%2</b> at step %1</a>%3")
        .arg(it->second)
        .arg(esc(n.opcode), node_id);
}

QString TensorDetailsPanel::tensorLink(const Graph& g, uint32_t tensor) const {
    const std::string& id = g.tensors[tensor].id;
    int planned = ctx_->findTensor(id);
    if (planned < 0) return esc(id) + tr(" <i>(not planned in this mode)</i>");
    return QStringLiteral("<a href='tensor:%1'>%2</a>").arg(planned).arg(esc(id));
}

QString TensorDetailsPanel::html(int planned) const {
    const Plan& plan = *ctx_->plan();
    const PlannedTensor& t = plan.tensors[size_t(planned)];
    const ArenaPlan& arena = plan.arenas[t.arena];
    const ViewPalette colours = ViewPalette::fromApplication();
    const QString label = muted();

    QString h = QStringLiteral("<style>td.k{color:%1;padding-right:10px;}</style>").arg(label);
    h += QStringLiteral("<h3>%1%2</h3><table cellspacing='0' cellpadding='2'>")
             .arg(swatch(ctx_->colorMode() == ColorMode::Slot ? colours.slot(t.slot)
                                                              : colours.role(t.role)),
                  esc(t.name.empty() ? t.id : t.name));
    h += row(tr("Id"), esc(t.id));
    h += row(tr("Role"), swatch(colours.role(t.role)) + qs(role_name(t.role)));

    const LoadedModel* model = ctx_->model();
    const Graph* g = model && model->graph ? &*model->graph : nullptr;
    TensorIndex gt = ctx_->graphTensor(planned);
    if (g && gt != kNone) {
        const Tensor& tensor = g->tensors[gt];
        const auto& dimNames = model->annotations.dim_names;
        h += row(tr("Shape"), shapeWithElements(tensor.shape, gt < dimNames.size()
                                                                  ? dimNames[gt]
                                                                  : std::vector<std::string>{}));
        h += row(tr("DType"), tr("%1 (%2 B per element)")
                                  .arg(qs(dtype_name(tensor.dtype)))
                                  .arg(dtype_bytes(tensor.dtype)));
    }
    h += row(tr("Size"), tr("%1 (%2 B)").arg(humanBytes(t.size), grouped(t.size)));
    h += row(tr("Alignment"), tr("%1 B").arg(grouped(t.alignment)));
    h += row(tr("Arena"), esc(arena.config.name));
    size_t sharing = 0;
    for (const PlannedTensor& other : plan.tensors)
        sharing += other.arena == t.arena && other.slot == t.slot;
    h += row(tr("Slot"),
             swatch(colours.slot(t.slot)) +
                 (sharing == 1 ? tr("%1 (this tensor alone)").arg(t.slot)
                               : tr("%1 (%2 tensors share it)").arg(t.slot).arg(sharing)));
    h += row(tr("Offset"),
             QStringLiteral("0x%1 = %2 &nbsp;<span style='color:%3'>bytes [%2, %4)</span>")
                 .arg(QString::number(t.offset, 16), grouped(t.offset), label,
                      grouped(t.offset + t.size)));
    h += sharingRow(t);

    // Graph plans count schedule steps, a lazy program's buffers trace events; CSV problems
    // count raw time units.
    const uint64_t step = ctx_->currentTime();
    const uint32_t span = t.life.end - t.life.begin;
    const QString unit = ctx_->timeUnit();
    const QString duration = ctx_->timeSpanText(span);
    h += row(
        tr("Lifetime"),
        QStringLiteral("[%1, %2) &nbsp;<span style='color:%3'>%4</span><br>%5")
            .arg(t.life.begin)
            .arg(t.life.end)
            .arg(label, duration)
            .arg(tr("first %1, last %2").arg(stepLink(t.life.begin), stepLink(t.life.end - 1))));
    QString live;
    if (t.life.begin <= step && step < t.life.end)
        live = tr("<b>live</b> at %1 %2").arg(unit).arg(step);
    else if (step < t.life.begin)
        live = tr("not live at %1 %2: born at %3").arg(unit).arg(step).arg(stepLink(t.life.begin));
    else
        live = tr("not live at %1 %2: dead since %3").arg(unit).arg(step).arg(stepLink(t.life.end));
    h += row(tr("Now"), live);

    if (g && gt != kNone)
        h += graphRows(planned, *g);
    else if (!g)
        h += row(tr("Graph"),
                 tr("<i>no graph (%1): no producer, consumers or shape</i>").arg(noGraphReason()));
    h += QStringLiteral("</table>");
    return h;
}

QString TensorDetailsPanel::noGraphReason() const {
    const LoadedModel* model = ctx_->model();
    if (model && !model->description.empty())
        return QString::fromStdString(model->description).toHtmlEscaped();
    return tr("an offset-assignment problem, a checkpoint or an exported session");
}

QString TensorDetailsPanel::sharingRow(const PlannedTensor& t) const {
    const ArenaPlan& arena = ctx_->plan()->arenas[t.arena];
    const std::vector<uint32_t> others =
        buffers_sharing_bytes(arena, t.buffer, t.offset, t.offset + t.size);
    QStringList links;
    for (size_t i = 0; i < others.size() && i < kMaxConsumers; ++i) {
        const std::string& id = arena.buffer_names[others[i]];
        const int planned = ctx_->findTensor(id);
        links << (planned < 0
                      ? esc(id)
                      : QStringLiteral("<a href='tensor:%1'>%2</a>").arg(planned).arg(esc(id)));
    }
    if (others.size() > kMaxConsumers)
        links << tr("… and %1 more").arg(others.size() - kMaxConsumers);
    if (!links.isEmpty())
        return row(tr("Shares bytes with (%1)").arg(others.size()),
                   tr("%1<br><span style='color:%2'>buffers at other times, over some of its "
                      "bytes</span>")
                       .arg(links.join(QStringLiteral(", ")), muted()));
    // Views, in-place writes and alias groups share one buffer: its bytes are not the tensor's
    // alone, though no other buffer reaches them.
    QStringList sameBuffer;
    for (size_t i = 0; i < ctx_->plan()->tensors.size(); ++i) {
        const PlannedTensor& u = ctx_->plan()->tensors[i];
        if (&u == &t || u.arena != t.arena || u.buffer != t.buffer) continue;
        if (sameBuffer.size() == int(kMaxConsumers)) {
            sameBuffer << tr("…");
            break;
        }
        sameBuffer << QStringLiteral("<a href='tensor:%1'>%2</a>").arg(i).arg(esc(u.id));
    }
    return row(tr("Shares bytes with (0)"),
               sameBuffer.isEmpty() ? tr("<i>no other buffer: its bytes are its own</i>")
                                    : tr("<i>no other buffer; its own buffer also holds</i> %1")
                                          .arg(sameBuffer.join(QStringLiteral(", "))));
}

QString TensorDetailsPanel::graphRows(int planned, const Graph& g) const {
    const Tensor& tensor = g.tensors[ctx_->graphTensor(planned)];
    QString h;
    h += row(tr("Producer"), tensor.producer != kNone
                                 ? nodeLink(g, tensor.producer)
                                 : tr("<i>none (%1)</i>").arg(qs(role_name(tensor.role))));
    if (tensor.producer != kNone)
        if (QString attributes = attributeLines(ctx_->model()->annotations, tensor.producer);
            !attributes.isEmpty())
            h += row(tr("Attributes"), attributes);
    QStringList consumers;
    for (size_t i = 0; i < tensor.consumers.size() && i < kMaxConsumers; ++i)
        consumers << nodeLink(g, tensor.consumers[i]);
    if (tensor.consumers.size() > kMaxConsumers)
        consumers << tr("… and %1 more").arg(tensor.consumers.size() - kMaxConsumers);
    h += row(tr("Consumers (%1)").arg(tensor.consumers.size()),
             consumers.isEmpty() ? tr("<i>none</i>") : consumers.join(QStringLiteral("<br>")));
    if (!tensor.alias_group.empty()) {
        QStringList members;
        for (size_t i = 0; i < g.tensors.size(); ++i)
            if (g.tensors[i].alias_group == tensor.alias_group && &g.tensors[i] != &tensor)
                members << tensorLink(g, uint32_t(i));
        h +=
            row(tr("Alias group"),
                QStringLiteral("%1%2").arg(
                    esc(tensor.alias_group),
                    members.isEmpty() ? QString()
                                      : tr(": shared with ") + members.join(QStringLiteral(", "))));
    }
    if (tensor.view && tensor.view->base != kNone)
        h += row(tr("View of"),
                 tr("%1, bytes [%2, %3)")
                     .arg(tensorLink(g, tensor.view->base), grouped(tensor.view->byte_offset),
                          grouped(tensor.view->byte_offset + tensor.view->byte_length)));
    if (tensor.in_place_of != kNone) h += row(tr("In place of"), tensorLink(g, tensor.in_place_of));
    h += row(tr("Saved for backward"), tensor.saved_for_backward ? tr("yes") : tr("no"));
    if (!tensor.must_not_alias.empty()) {
        QStringList others;
        for (TensorIndex other : tensor.must_not_alias)
            others << tensorLink(g, other);
        h += row(tr("Must not alias"), others.join(QStringLiteral(", ")));
    }
    return h;
}

} // namespace tmmu::views
