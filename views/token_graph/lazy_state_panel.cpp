#include "token_graph/lazy_state_panel.h"

#include "context/plan_context.h"
#include "lazy/trace_state.h"
#include "style/text_format.h"
#include "token_graph/event_memory_chart.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace tmmu::views {
namespace {

QTreeWidget* makeTree(const QStringList& headers) {
    auto* tree = new QTreeWidget;
    tree->setHeaderLabels(headers);
    tree->setRootIsDecorated(false);
    tree->setUniformRowHeights(true);
    tree->setAlternatingRowColors(true);
    tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return tree;
}

// "t37 (event 120), t12 (an earlier step)": ids with the events that made them.
QString ids(const std::vector<uint64_t>& values, const std::vector<int64_t>& from, QChar prefix) {
    QStringList parts;
    for (size_t i = 0; i < values.size(); ++i) {
        const int64_t f = i < from.size() ? from[i] : lazy::kNone;
        parts << (f >= 0 ? QStringLiteral("%1%2 (event %3)").arg(prefix).arg(values[i]).arg(f)
                         : QStringLiteral("%1%2").arg(prefix).arg(values[i]));
    }
    return parts.isEmpty() ? QStringLiteral("—") : parts.join(QStringLiteral(", "));
}

QString outs(const std::vector<uint64_t>& values, QChar prefix) {
    return ids(values, {}, prefix);
}

} // namespace

LazyStatePanel::LazyStatePanel(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), event_(new QLabel),
      locs_(makeTree({tr("Loc"), tr("Commit version"), tr("Logical version"), tr("State")})),
      bases_(makeTree({tr("Base"), tr("Commit version")})),
      buffers_(makeTree({tr("Buffer"), tr("Bytes"), tr("State")})),
      memory_(new EventMemoryChart(ctx)) {
    event_->setWordWrap(true);
    event_->setTextFormat(Qt::RichText);
    event_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    event_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    event_->setObjectName(QStringLiteral("lazyEventDetails"));
    auto* tabs = new QTabWidget;
    tabs->addTab(locs_, tr("Locs"));
    tabs->addTab(bases_, tr("Bases"));
    tabs->addTab(buffers_, tr("Buffers"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(event_);
    split->addWidget(tabs);
    split->addWidget(memory_);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);
    connect(ctx_, &PlanContext::currentEventChanged, this, &LazyStatePanel::showEvent);
    showEvent(0);
}

void LazyStatePanel::setTrace(std::shared_ptr<const lazy::Trace> trace) {
    trace_ = std::move(trace);
    memory_->setTrace(trace_.get());
    showEvent(ctx_->currentEvent());
}

void LazyStatePanel::showEvent(uint64_t index) {
    locs_->clear();
    bases_->clear();
    buffers_->clear();
    if (!trace_) {
        event_->setText(tr("Open a lazy program to step through its events."));
        return;
    }
    if (trace_->events.empty()) {
        event_->setText(tr("This program emitted no events: nothing was forced."));
        return;
    }
    index = std::min<uint64_t>(index, trace_->events.size() - 1);
    const lazy::TraceEvent& e = trace_->events[index];
    const QString plan =
        e.plan >= 0 ? tr("plan %1 (%2)")
                          .arg(e.plan)
                          .arg(QString::fromStdString(trace_->plans[size_t(e.plan)].reason))
                    : tr("outside a forced plan");
    QString text = tr("<b>Event %1</b> of %2 · <code>%3</code> · <b>%4</b> · %5<br>")
                       .arg(index)
                       .arg(trace_->events.size())
                       .arg(QString::fromStdString(e.key).toHtmlEscaped(),
                            QString::fromStdString(e.op).toHtmlEscaped(), plan.toHtmlEscaped());
    text += tr("Emitted at <b>%1</b>").arg(QString::fromStdString(e.site).toHtmlEscaped());
    if (!e.detail.empty()) text += " — " + QString::fromStdString(e.detail).toHtmlEscaped();
    text += tr("<br>Tokens in: %1; out: %2<br>Values in: %3; out: %4")
                .arg(ids(e.tokens_in, e.token_from, 't'), outs(e.tokens_out, 't'),
                     ids(e.values_in, e.data_from, 'v'), outs(e.values_out, 'v'));
    if (e.loc >= 0) text += tr("<br>Loc L%1: commit version %2").arg(e.loc).arg(e.loc_version);
    if (e.base >= 0) text += tr("<br>Base B%1: commit version %2").arg(e.base).arg(e.base_commit);
    // The buffer's size and state from the pool: loc events name a buffer without its bytes.
    const lazy::TraceSnapshot s = lazy::snapshot_at(*trace_, index);
    if (auto it = s.buffers.find(e.storage); it != s.buffers.end())
        text += tr("<br>Buffer s%1 (%2, %3)")
                    .arg(e.storage)
                    .arg(humanBytes(it->second.bytes),
                         QString::fromUtf8(lazy::buffer_state_name(it->second.state).data()));
    text += tr("<br><i>Why here:</i> %1")
                .arg(QString::fromStdString(lazy::event_rule(e)).toHtmlEscaped());
    event_->setText(text);

    for (const auto& [loc, st] : s.locs)
        new QTreeWidgetItem(locs_, {QStringLiteral("L%1").arg(loc), QString::number(st.version),
                                    QString::number(st.logical_version),
                                    st.invalidated ? tr("tombstoned") : tr("valid")});
    for (const auto& [base, commit] : s.base_commits)
        new QTreeWidgetItem(bases_, {QStringLiteral("B%1").arg(base), QString::number(commit)});
    for (const auto& [id, b] : s.buffers)
        new QTreeWidgetItem(buffers_, {QStringLiteral("s%1").arg(id), humanBytes(b.bytes),
                                       QString::fromUtf8(lazy::buffer_state_name(b.state).data())});
}

} // namespace tmmu::views
