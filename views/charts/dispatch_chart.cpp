#include "charts/dispatch_chart.h"

#include "charts/memory_chart.h"
#include "runtime/opcode.h"
#include "style/palette.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBoxLayout>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QStackedBarSeries>
#include <QStackedLayout>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>

namespace tmmu::views {

using runtime::DispatchCounters;
using runtime::Opcode;
using runtime::RunStep;
using runtime::StepPhase;

namespace {

bool counted(const runtime::RunResult& run) {
    return std::any_of(run.steps.begin(), run.steps.end(),
                       [](const RunStep& s) { return s.dispatches.total > 0; });
}

// The opcodes the run dispatched at all, in opcode order: the chart's categories.
std::vector<Opcode> usedOpcodes(const runtime::RunResult& run) {
    DispatchCounters all = run.prefill_counters;
    all += run.decode_counters;
    std::vector<Opcode> out;
    for (Opcode op : runtime::kAllOpcodes)
        if (all.per_opcode[uint8_t(op)]) out.push_back(op);
    return out;
}

// "90 dispatches", and on a GPU "90 dispatches in 5 launches (1 per step), 12.345 ms on the
// device" over `steps` steps.
QString countsText(const DispatchCounters& c, int steps) {
    QString text = c.total == 1 ? DispatchChart::tr("1 dispatch")
                                : DispatchChart::tr("%1 dispatches").arg(c.total);
    if (c.launches > 0)
        text +=
            (c.launches == 1 ? DispatchChart::tr(" in 1 launch (%2 per step)")
                             : DispatchChart::tr(" in %1 launches (%2 per step)").arg(c.launches))
                .arg(double(c.launches) / std::max(1, steps), 0, 'g', 3);
    double device = 0;
    for (double s : c.device_seconds)
        device += s;
    if (device > 0) text += DispatchChart::tr(", %1 ms on the device").arg(device * 1e3, 0, 'f', 3);
    return text;
}

// "step 4 (decode) of steps 0-11", numbered as `tmmu session replay-run` numbers them.
QString stepName(const RunStep& s, int index, size_t steps) {
    const QString phase = s.phase == StepPhase::Prefill
                              ? QObject::tr("prefill of sequence %1").arg(s.sequence)
                              : QObject::tr("decode");
    return QObject::tr("step %1 (%2) of steps 0\u2013%3").arg(index).arg(phase).arg(steps - 1);
}

} // namespace

DispatchChart::DispatchChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)),
      modeBox_(new QComboBox(this)), slider_(new QSlider(Qt::Horizontal, this)),
      caption_(new QLabel(this)), message_(new QLabel(this)), stack_(new QStackedLayout) {
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setMargins(QMargins(2, 2, 2, 2));
    chart_->legend()->setAlignment(Qt::AlignRight); // the dock is wider than it is tall
    view_->setObjectName(QStringLiteral("dispatchChartView"));
    modeBox_->addItem(tr("Cumulative"));
    modeBox_->addItem(tr("Per step"));
    modeBox_->setToolTip(tr("Dispatches through the chosen step, or of that step alone"));
    slider_->setToolTip(tr("The step whose dispatches are shown"));
    caption_->setWordWrap(true);
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    auto* top = new QHBoxLayout;
    top->addWidget(modeBox_);
    top->addWidget(slider_, 1);
    auto* chartPage = new QWidget(this);
    auto* column = new QVBoxLayout(chartPage);
    column->setContentsMargins(0, 0, 0, 0);
    column->addLayout(top);
    column->addWidget(caption_);
    column->addWidget(view_, 1);
    stack_->addWidget(chartPage);
    stack_->addWidget(message_);
    setLayout(stack_);
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMode(i == 0 ? Mode::Cumulative : Mode::PerStep); });
    connect(slider_, &QSlider::valueChanged, this, &DispatchChart::setStep);
    showMessage(tr("Run a model (Run panel) to see its dispatches per opcode"));
}

void DispatchChart::setRun(std::shared_ptr<const runtime::RunResult> run) {
    run_ = std::move(run);
    if (!run_ || run_->steps.empty() || !counted(*run_)) {
        showMessage(tr("This run did not count dispatches: run it with \"Count dispatches\" on"));
        return;
    }
    const QSignalBlocker block(slider_);
    slider_->setRange(0, int(run_->steps.size()) - 1);
    step_ = int(run_->steps.size()) - 1;
    slider_->setValue(step_);
    rebuild();
    stack_->setCurrentIndex(0);
}

void DispatchChart::showMessage(const QString& message) {
    message_->setText(message);
    stack_->setCurrentWidget(message_);
}

void DispatchChart::setMode(Mode mode) {
    if (mode == mode_) return;
    mode_ = mode;
    const QSignalBlocker block(modeBox_);
    modeBox_->setCurrentIndex(mode == Mode::Cumulative ? 0 : 1);
    rebuild();
}

void DispatchChart::setStep(int step) {
    if (!run_ || run_->steps.empty()) return;
    step = std::clamp(step, 0, int(run_->steps.size()) - 1);
    if (step == step_ && slider_->value() == step) return;
    step_ = step;
    const QSignalBlocker block(slider_);
    slider_->setValue(step);
    rebuild();
}

QString DispatchChart::caption() const {
    return caption_->text();
}

void DispatchChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) rebuild();
}

void DispatchChart::rebuild() {
    clearChart(chart_);
    if (!run_ || run_->steps.empty()) return;
    const ViewPalette palette = ViewPalette::fromApplication();
    const std::vector<Opcode> opcodes = usedOpcodes(*run_);
    // Cumulative: prefill and decode stacked; per step: the one step, in its phase's colour.
    DispatchCounters prefill, decode;
    const int first = mode_ == Mode::Cumulative ? 0 : step_;
    for (int s = first; s <= step_; ++s) {
        const RunStep& step = run_->steps[size_t(s)];
        (step.phase == StepPhase::Prefill ? prefill : decode) += step.dispatches;
    }
    auto* prefillSet = new QBarSet(tr("prefill"));
    auto* decodeSet = new QBarSet(tr("decode"));
    prefillSet->setColor(palette.slot(0));
    decodeSet->setColor(palette.slot(1));
    QStringList categories;
    double top = 0;
    for (Opcode op : opcodes) {
        const uint64_t p = prefill.per_opcode[uint8_t(op)], d = decode.per_opcode[uint8_t(op)];
        prefillSet->append(double(p));
        decodeSet->append(double(d));
        top = std::max(top, double(p + d));
        // Rich text: "multihead_<br>attention" keeps six opcodes readable in a narrow dock.
        categories << QString::fromUtf8(runtime::opcode_name(op).data())
                          .replace(QLatin1Char('_'), QStringLiteral("_<br>"));
    }
    auto* bars = new QStackedBarSeries;
    bars->append(prefillSet);
    bars->append(decodeSet);
    bars->setBarWidth(0.7);
    chart_->addSeries(bars);
    auto* axisX = new QBarCategoryAxis;
    axisX->append(categories);
    QFont small = axisX->labelsFont();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1.5));
    axisX->setLabelsFont(small);
    auto* axisY = new QValueAxis; // the caption says what is counted: no title taking room
    axisY->setRange(0, std::max(1.0, top * 1.1));
    axisY->setLabelFormat(QStringLiteral("%.0f"));
    axisY->setLabelsFont(small);
    axisY->setTickCount(3); // a short dock fits three labels without eliding them
    axisY->applyNiceNumbers();
    chart_->addAxis(axisX, Qt::AlignBottom);
    chart_->addAxis(axisY, Qt::AlignLeft);
    bars->attachAxis(axisX);
    bars->attachAxis(axisY);
    applyChartPalette(chart_, palette);
    // Names are cut in a narrow dock: hovering a bar says which opcode and what it counted.
    connect(bars, &QStackedBarSeries::hovered, this,
            [this, opcodes, prefill, decode](bool on, int index, QBarSet*) {
                if (!on || index < 0 || size_t(index) >= opcodes.size()) {
                    QToolTip::hideText();
                    return;
                }
                const uint8_t op = uint8_t(opcodes[size_t(index)]);
                QString text =
                    tr("%1: prefill %2, decode %3")
                        .arg(QString::fromUtf8(runtime::opcode_name(opcodes[size_t(index)]).data()))
                        .arg(prefill.per_opcode[op])
                        .arg(decode.per_opcode[op]);
                const double device = prefill.device_seconds[op] + decode.device_seconds[op];
                if (device > 0) text += tr("; %1 ms on the device").arg(device * 1e3, 0, 'f', 3);
                QToolTip::showText(QCursor::pos(), text, this);
            });
    const RunStep& shown = run_->steps[size_t(step_)];
    DispatchCounters both = prefill;
    both += decode;
    const QString name = stepName(shown, step_, run_->steps.size());
    caption_->setText((mode_ == Mode::Cumulative ? tr("Through %1: %2") : tr("Only %1: %2"))
                          .arg(name, countsText(both, step_ - first + 1)));
}

} // namespace tmmu::views
