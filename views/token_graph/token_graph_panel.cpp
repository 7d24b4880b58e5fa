#include "token_graph/token_graph_panel.h"

#include "style/palette.h"
#include "token_graph/token_graph_view.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QVBoxLayout>

namespace tmmu::views {
namespace {

// A legend entry: a swatch in the view's colour for that event family, then its name.
QLabel* legend(const ViewPalette& pal) {
    using lazy::EventKind;
    const std::pair<EventKind, const char*> families[] = {
        {EventKind::Op, "op"},
        {EventKind::LocLoad, "loc_load"},
        {EventKind::LocStore, "loc_store"},
        {EventKind::BaseCommit, "base_commit"},
        {EventKind::PublishSave, "saved slot"},
        {EventKind::BackwardJob, "backward"},
        {EventKind::LocInvalidate, "tombstone"},
        {EventKind::AfterAll, "token join"},
        {EventKind::CompiledCall, "compiled call"}};
    // An entry never breaks ("saved / slot" wrapped apart); the line breaks between entries.
    QString html;
    for (const auto& [kind, name] : families)
        html += QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2&nbsp; ")
                    .arg(eventColour(pal, kind).name(),
                         QString::fromLatin1(name).replace(' ', QStringLiteral("&nbsp;")));
    html +=
        QObject::tr("— solid: data, dashed: token; double frame: compiled call or fused kernel");
    auto* label = new QLabel(html);
    label->setObjectName(QStringLiteral("tokenGraphLegend"));
    label->setToolTip(QObject::tr("Solid lines are data edges, dashed ones token edges. A compiled "
                                  "call is one node: double-click it (or Enter on its event) to "
                                  "expand it into its body's events, again to collapse it. A "
                                  "fused kernel is named by the ops it ran."));
    label->setTextFormat(Qt::RichText);
    label->setWordWrap(true);
    return label;
}

} // namespace

TokenGraphPanel::TokenGraphPanel(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), view_(new TokenGraphView(ctx)), search_(new QLineEdit),
      matches_(new QLabel) {
    search_->setPlaceholderText(tr("Find events (op, key, site, words); Enter: next"));
    search_->setClearButtonEnabled(true);
    search_->setObjectName(QStringLiteral("tokenGraphSearch"));
    auto* fit = new QToolButton;
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Show the whole graph (Home)"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(search_, 1);
    bar->addWidget(matches_);
    bar->addWidget(fit);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(legend(ViewPalette::fromApplication()));
    layout->addWidget(view_, 1);
    connect(fit, &QToolButton::clicked, view_, &TokenGraphView::fitAll);
    connect(view_, &TokenGraphView::traceChanged, this, &TokenGraphPanel::updateMatches);
    connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
        view_->setSearch(text);
        updateMatches();
    });
    connect(search_, &QLineEdit::returnPressed, this,
            [this] { view_->findNext(QGuiApplication::keyboardModifiers() & Qt::ShiftModifier); });
    updateMatches();
}

void TokenGraphPanel::setTrace(std::shared_ptr<const lazy::Trace> trace) {
    view_->setTrace(std::move(trace));
    view_->setSearch(search_->text());
    updateMatches();
}

void TokenGraphPanel::updateMatches() {
    matches_->setText(search_->text().isEmpty()
                          ? QString()
                          : tr("%n match(es)", nullptr, int(view_->matches().size())));
}

} // namespace tmmu::views
