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
      spin_(new QSpinBox(this)), position_(new QLabel(this)), node_(new QLabel(this)) {
    slider_->setObjectName(QStringLiteral("stepSlider"));
    spin_->setObjectName(QStringLiteral("stepSpin"));
    slider_->setToolTip(tr("Current step (Left/Right, Home/End)"));
    spin_->setToolTip(slider_->toolTip());
    spin_->setKeyboardTracking(false);
    position_->setMinimumWidth(position_->fontMetrics().horizontalAdvance("step 000000 of 000000"));
    node_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    node_->setMinimumWidth(node_->fontMetrics().averageCharWidth() * 40);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(new QLabel(tr("Step"), this));
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_);
    layout->addWidget(position_);
    layout->addWidget(node_);

    connect(slider_, &QSlider::valueChanged, this,
            [this](int v) { ctx_->setCurrentStep(uint64_t(std::max(0, v))); });
    connect(spin_, &QSpinBox::valueChanged, this,
            [this](int v) { ctx_->setCurrentStep(uint64_t(std::max(0, v))); });
    connect(ctx_, &PlanContext::planChanged, this, &StepControl::onPlanChanged);
    connect(ctx_, &PlanContext::currentStepChanged, this, &StepControl::onStepChanged);
    onPlanChanged();
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
    int last = int(std::max<uint64_t>(ctx_->stepCount(), 1) - 1);
    {
        QSignalBlocker a(slider_), b(spin_);
        slider_->setRange(0, last);
        slider_->setPageStep(std::max(1, last / 20));
        spin_->setRange(0, last);
    }
    setEnabled(plan != nullptr);
    onStepChanged();
}

void StepControl::onStepChanged() {
    int step = int(ctx_->currentStep());
    {
        QSignalBlocker a(slider_), b(spin_);
        slider_->setValue(step);
        spin_->setValue(step);
    }
    position_->setText(positionText());
    node_->setText(nodeText());
}

QString StepControl::positionText() const {
    if (!ctx_->plan()) return tr("no plan");
    const bool graph = ctx_->plan()->mode.has_value();
    return (graph ? tr("step %1 of %2") : tr("time %1 of %2"))
        .arg(ctx_->currentStep())
        .arg(ctx_->stepCount());
}

QString StepControl::nodeText() const {
    const Plan* plan = ctx_->plan();
    if (!plan) return {};
    size_t live = ctx_->liveAt(ctx_->currentStep()).size();
    QString liveText = tr("%1 live").arg(live);
    uint64_t step = ctx_->currentStep();
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
