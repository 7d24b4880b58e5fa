#include "studio_status_bar.h"

#include "core/units.h"
#include "encoding/sha256.h"
#include "plan/plan_summary.h"
#include "planning.h"
#include "source/model_source.h"

#include <QFileInfo>
#include <QFrame>
#include <QLabel>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>

namespace tmmu::studio {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

PlanSummary PlanSummary::of(const Plan& plan, const LoadedModel* model) {
    PlanSummary s;
    s.model = QFileInfo(QString::fromStdString(plan.source)).completeBaseName();
    s.modelTip = QString::fromStdString(plan.source);
    if (model && !model->description.empty())
        s.modelTip += QStringLiteral("\n") + QString::fromStdString(model->description);
    s.mode = plan.mode ? qs(mode_name(*plan.mode)) : QObject::tr("offset problem");
    s.modeTip = QObject::tr("Liveness mode");
    // A rank's plan holds a share of the model: say so where the mode is, the notes in the tip.
    if (!plan.shard.single_rank()) {
        s.mode += QObject::tr(", rank %1/%2").arg(plan.shard.rank).arg(plan.shard.world_size);
        s.modeTip += QStringLiteral("; ") + QString::fromStdString(describe_shard_spec(plan.shard));
        for (const std::string& note : plan.notes)
            s.modeTip += QStringLiteral("\n") + QString::fromStdString(note);
    }
    // A plan of a model with dynamic shapes is for one binding: "inference, batch=1 seq=512".
    if (!plan.dims.empty()) {
        QStringList dims;
        for (const auto& [name, value] : plan.dims)
            dims << QStringLiteral("%1=%2").arg(qs(name)).arg(value);
        s.mode += QStringLiteral(", ") + dims.join(' ');
        s.modeTip += QObject::tr("; dynamic dimensions bound at %1 (Plan > Dimensions)")
                         .arg(dims.join(QStringLiteral(", ")));
    }
    s.strategy = QString::fromStdString(plan.strategy);
    QStringList winners;
    for (const ArenaPlan& a : plan.arenas)
        winners << QObject::tr("%1: %2, height %3")
                       .arg(QString::fromStdString(a.config.name),
                            QString::fromStdString(a.strategy),
                            QString::fromStdString(format_bytes(a.metrics.peak_bytes)));
    s.strategyTip = QObject::tr("Strategy per arena:\n") + winners.join('\n');
    const PlanTotals totals = plan_totals(plan);
    const uint64_t height = totals.peak_bytes, bound = totals.lower_bound;
    s.height = QObject::tr("height %1").arg(QString::fromStdString(format_bytes(height)));
    const ArenaReuse reuse = plan_reuse(plan);
    s.heightTip =
        QObject::tr("Sum of the arenas' peaks. Reuse saves %1 of the %2 the buffers need with "
                    "no reuse; %3 pairs of buffers share bytes at different times.")
            .arg(QString::fromStdString(format_bytes(reuse.saved_bytes)),
                 QString::fromStdString(format_bytes(reuse.isolated_bytes)))
            .arg(reuse.sharing_pairs);
    if (const std::string retained = retention_text(plan); !retained.empty())
        s.heightTip += QObject::tr("\nActivation retention: %1.").arg(qs(retained));
    const auto percent_over = [height](uint64_t b) {
        return b == 0 ? 0.0 : 100.0 * (double(height) - double(b)) / double(b);
    };
    s.overBound = QObject::tr("+%1% over lower bound").arg(percent_over(bound), 0, 'f', 3);
    s.overBoundTip = QObject::tr("Height above the sum of the arenas' lower bounds");
    // Padding no plan avoids: said beside the plain figure, which sessions store and compare.
    const uint64_t aligned = aligned_bound(plan);
    if (aligned > bound) {
        s.overBound += QObject::tr(" (+%1% over aligned)").arg(percent_over(aligned), 0, 'f', 3);
        s.overBoundTip +=
            QObject::tr(".\nAligned, the buffers pad to multiples of their alignment, "
                        "which the lower bound does not count: no plan is below %1.")
                .arg(QString::fromStdString(format_bytes(aligned)));
    }
    std::string hex = to_hex(plan.plan_hash);
    s.hash = QString::fromStdString(hex.substr(0, 8));
    s.hashTip = QObject::tr("plan hash %1").arg(QString::fromStdString(hex));
    return s;
}

StudioStatusBar::StudioStatusBar(QWidget* parent)
    : QStatusBar(parent), bar_(new QProgressBar(this)), cancel_(new QToolButton(this)),
      delay_(new QTimer(this)) {
    bar_->setObjectName(QStringLiteral("jobProgress"));
    bar_->setRange(0, 1000);
    bar_->setMaximumWidth(220);
    bar_->setTextVisible(true);
    cancel_->setObjectName(QStringLiteral("cancelJob"));
    cancel_->setText(tr("Cancel"));
    addWidget(bar_);
    addWidget(cancel_);
    bar_->hide();
    cancel_->hide();
    addField("model", 14);
    addField("mode", 8);
    addField("strategy", 10);
    addField("height", 16);
    addField("over", 22);
    addField("hash", 8);
    delay_->setSingleShot(true);
    delay_->setInterval(kProgressDelayMs);
    connect(delay_, &QTimer::timeout, this, [this] {
        if (!running_) return;
        bar_->show();
        cancel_->show();
    });
    connect(cancel_, &QToolButton::clicked, this, &StudioStatusBar::cancelRequested);
    connect(this, &QStatusBar::messageChanged, this, &StudioStatusBar::fitMessage);
}

QLabel* StudioStatusBar::addField(const char* name, int minChars) {
    QFrame* rule = nullptr;
    if (field("model")) { // a thin rule between fields
        rule = new QFrame(this);
        rule->setFrameShape(QFrame::VLine);
        rule->setFrameShadow(QFrame::Sunken);
        addPermanentWidget(rule);
    }
    auto* label = new QLabel(this);
    label->setContentsMargins(4, 0, 4, 0);
    label->setObjectName(QString::fromLatin1("status_%1").arg(QLatin1String(name)));
    label->setMinimumWidth(label->fontMetrics().averageCharWidth() * minChars);
    addPermanentWidget(label);
    fields_.push_back({label, rule});
    return label;
}

void StudioStatusBar::fitMessage() {
    const QString message = currentMessage();
    setToolTip(message); // the whole message, even where fields had to stay
    for (const Field& f : fields_) {
        f.label->show();
        if (f.rule) f.rule->show();
    }
    if (message.isEmpty()) return;
    // The message takes what the fields leave; fields give way, least telling first, until the
    // message fits (the plan's height and distance from the bound stay longest).
    auto widthOf = [](const QWidget* w) {
        return w ? std::max(w->sizeHint().width(), w->minimumWidth()) + 6 : 0;
    };
    int left = width() - fontMetrics().horizontalAdvance(message) - 24;
    for (const Field& f : fields_)
        left -= widthOf(f.label) + widthOf(f.rule);
    for (const char* name : {"hash", "mode", "model", "strategy", "over"}) {
        if (left >= 0) break;
        for (const Field& f : fields_)
            if (f.label == field(name)) {
                left += widthOf(f.label) + widthOf(f.rule);
                f.label->hide();
                if (f.rule) f.rule->hide();
            }
    }
}

void StudioStatusBar::resizeEvent(QResizeEvent* event) {
    QStatusBar::resizeEvent(event);
    fitMessage();
}

QLabel* StudioStatusBar::field(const char* name) const {
    return findChild<QLabel*>(QString::fromLatin1("status_%1").arg(QLatin1String(name)));
}

void StudioStatusBar::showPlan(const Plan& plan, const LoadedModel* model) {
    PlanSummary s = PlanSummary::of(plan, model);
    auto set = [this](const char* name, const QString& text, const QString& tip) {
        QLabel* label = field(name);
        label->setText(text);
        label->setToolTip(tip);
    };
    set("model", s.model, s.modelTip);
    set("mode", s.mode, s.modeTip);
    set("strategy", s.strategy, s.strategyTip);
    set("height", s.height, s.heightTip);
    set("over", s.overBound, s.overBoundTip);
    set("hash", s.hash, s.hashTip);
}

void StudioStatusBar::clearPlan() {
    for (const Field& f : fields_) {
        f.label->clear();
        f.label->setToolTip({});
    }
}

void StudioStatusBar::jobStarted(const QString& title) {
    if (!running_) delay_->start();
    running_ = true;
    bar_->setValue(0);
    bar_->setFormat(title);
    bar_->setToolTip(title); // progress replaces the title with the engine's stage
    cancel_->setToolTip(tr("Stop “%1”; the plan on screen stays").arg(title));
}

void StudioStatusBar::jobProgress(double fraction, const QString& stage) {
    bar_->setValue(int(fraction * 1000));
    bar_->setFormat(stage + QStringLiteral(" %p%"));
}

void StudioStatusBar::jobsStopped() {
    running_ = false;
    delay_->stop();
    bar_->hide();
    cancel_->hide();
}

bool StudioStatusBar::progressVisible() const {
    return bar_->isVisible();
}

} // namespace tmmu::studio
