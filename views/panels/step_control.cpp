#include "panels/step_control.h"

#include "context/plan_context.h"

#include <QBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>

#include <unordered_map>

namespace tmmu::views {

StepControl::StepControl(PlanContext* ctx, QWidget* parent)
    : QWidget(parent), ctx_(ctx), slider_(new QSlider(Qt::Horizontal, this)),
      spin_(new QSpinBox(this)), axisName_(new QLabel(tr("Step"), this)),
      position_(new QLabel(this)), node_(new QLabel(this)) {
    slider_->setObjectName(QStringLiteral("stepSlider"));
    spin_->setObjectName(QStringLiteral("stepSpin"));
    axisName_->setObjectName(QStringLiteral("stepAxisName"));
    spin_->setKeyboardTracking(false);
    position_->setMinimumWidth(position_->fontMetrics().horizontalAdvance("step 000000 of 000000"));
    node_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    node_->setMinimumWidth(node_->fontMetrics().averageCharWidth() * 40);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(axisName_);
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_);
    layout->addWidget(position_);
    layout->addWidget(node_);

    connect(slider_, &QSlider::valueChanged, this,
            [this](int v) { ctx_->setCurrentEvent(uint64_t(std::max(0, v))); });
    connect(spin_, &QSpinBox::valueChanged, this,
            [this](int v) { ctx_->setCurrentEvent(uint64_t(std::max(0, v))); });
    connect(ctx_, &PlanContext::planChanged, this, &StepControl::onPlanChanged);
    connect(ctx_, &PlanContext::eventAxisChanged, this, &StepControl::onAxisChanged);
    connect(ctx_, &PlanContext::currentEventChanged, this, &StepControl::onEventChanged);
    onPlanChanged();
    onAxisChanged();
}

void StepControl::onPlanChanged() {
    nodeOfStep_.clear();
    const Plan* plan = ctx_->plan();
    const LoadedModel* model = ctx_->model();
    if (plan && model && model->graph) {
        std::unordered_map<std::string, int> nodeById;
        for (size_t n = 0; n < model->graph->nodes.size(); ++n)
            nodeById.emplace(model->graph->nodes[n].id, int(n));
        nodeOfStep_.reserve(plan->execution_order.size());
        for (const std::string& id : plan->execution_order) {
            auto it = nodeById.find(id);
            nodeOfStep_.push_back(it == nodeById.end() ? -1 : it->second);
        }
    }
}

void StepControl::onAxisChanged() {
    const EventAxis& axis = ctx_->eventAxis();
    int last = int(std::max<uint64_t>(axis.count(), 1) - 1);
    {
        QSignalBlocker a(slider_), b(spin_);
        slider_->setRange(0, last);
        slider_->setPageStep(std::max(1, last / 20));
        spin_->setRange(0, last);
    }
    QString name = axis.label().isEmpty() ? tr("step") : axis.label();
    axisName_->setText(name.left(1).toUpper() + name.mid(1));
    slider_->setToolTip(tr("Current %1 (Left/Right, Home/End)").arg(name));
    spin_->setToolTip(slider_->toolTip());
    setEnabled(axis.count() > 0);
    onEventChanged();
}

void StepControl::onEventChanged() {
    int event = int(ctx_->currentEvent());
    {
        QSignalBlocker a(slider_), b(spin_);
        slider_->setValue(event);
        spin_->setValue(event);
    }
    position_->setText(positionText());
    node_->setText(nodeText());
}

QString StepControl::positionText() const {
    // A lazy program that allocated no buffers has events to step through but no plan.
    if (!ctx_->plan() && ctx_->eventCount() == 0) return tr("no plan");
    return tr("%1 %2 of %3")
        .arg(ctx_->eventAxis().label())
        .arg(ctx_->currentEvent())
        .arg(ctx_->eventCount());
}

QString StepControl::nodeText() const {
    const Plan* plan = ctx_->plan();
    if (!plan) return {};
    const uint64_t step = ctx_->currentTime();
    QString liveText = tr("%1 live").arg(ctx_->liveAt(step).size());
    if (step >= plan->execution_order.size()) return liveText;
    QString id = QString::fromStdString(plan->execution_order[step]);
    int n = step < nodeOfStep_.size() ? nodeOfStep_[step] : -1;
    if (n < 0) return tr("node '%1', %2").arg(id, liveText);
    const Node& node = ctx_->model()->graph->nodes[size_t(n)];
    return tr("node '%1' (%2, %3), %4")
        .arg(id, QString::fromStdString(node.opcode),
             QString::fromUtf8(phase_name(node.phase).data(),
                               qsizetype(phase_name(node.phase).size())),
             liveText);
}

} // namespace tmmu::views
