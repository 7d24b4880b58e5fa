#include "planning_controls.h"

#include "core/units.h"
#include "plan/strategy.h"

#include <QBoxLayout>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace tmmu::studio {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QLabel* caption(const QString& text, QWidget* buddy, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setBuddy(buddy);
    return label;
}

// A text field of comma-separated settings, as wide as `chars` characters at least.
void setUpListField(QLineEdit* edit, const QString& placeholder, const QString& tip, int chars) {
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(tip);
    edit->setClearButtonEnabled(true);
    edit->setMinimumWidth(edit->fontMetrics().averageCharWidth() * chars);
}

} // namespace

PlanningControls::PlanningControls(QWidget* parent)
    : QWidget(parent), mode_(new QComboBox(this)), strategy_(new QComboBox(this)),
      alignment_(new QComboBox(this)), batch_(new QSpinBox(this)), seq_(new QSpinBox(this)),
      arenas_(new QLineEdit(this)), routes_(new QLineEdit(this)),
      dims_(new QPushButton(tr("&Dims…"), this)), replan_(new QPushButton(tr("Re-plan"), this)) {
    for (Mode m : {Mode::Inference, Mode::Forward, Mode::Training})
        mode_->addItem(qs(mode_name(m)), int(m));
    mode_->setToolTip(tr("Liveness mode: inference (forward only), forward (saved tensors kept "
                         "for a later backward), training (forward, backward, optimizer)"));
    for (const OffsetStrategy* s : all_strategies()) {
        strategy_->addItem(qs(s->name()));
        strategy_->setItemData(strategy_->count() - 1, qs(s->description()), Qt::ToolTipRole);
    }
    strategy_->setToolTip(tr("Offset strategy (auto: the best per arena)"));
    alignment_->addItem(tr("default"), qulonglong(0));
    for (int a : {1, 8, 16, 32, 64, 128, 256, 512, 1024, 4096})
        alignment_->addItem(QString::number(a), qulonglong(a));
    alignment_->setToolTip(tr("Alignment of every arena in bytes (default: 128 for graphs, 1 for "
                              "CSV); an alignment in Arenas overrides it there"));
    batch_->setRange(1, kMaxShape);
    seq_->setRange(1, kMaxShape);
    batch_->setToolTip(tr("Batch size (transformer configs)"));
    seq_->setToolTip(tr("Sequence length (transformer configs)"));
    // Placeholders are short examples, whole down to 1280 px; the tooltips give the syntax.
    setUpListField(arenas_, tr("e.g. activations=8GiB:256"),
                   tr("Arena capacities, alignments and page sizes NAME=CAPACITY[:ALIGN[:PAGE]], "
                      "separated by commas; parameters=:4KiB sets only an alignment, which "
                      "overrides Align there; activations=8GiB::2MiB backs an arena with whole "
                      "2 MiB pages. Arenas: parameters, activations, gradients, optimizer (CSV: "
                      "arena)"),
                   20);
    setUpListField(routes_, tr("e.g. workspace=scratch"),
                   tr("Send a role's tensors to another arena, ROLE=ARENA separated by commas; "
                      "a new name makes a new arena, which Arenas may then size. Roles: "
                      "parameter, input, output, activation, gradient, optimizer_state, "
                      "workspace (model graphs only)"),
                   14);
    dims_->setToolTip(tr("Bind an ONNX model's symbolic dimensions and input shapes, and choose "
                         "whether views and in-place ops alias; or an IR graph's dynamic "
                         "dimensions inside their shape envelope"));
    replan_->setDefault(true);
    dims_->setEnabled(false); // until an ONNX model or a dynamic IR graph is shown

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 0);
    layout->addWidget(caption(tr("&Mode"), mode_, this));
    layout->addWidget(mode_);
    layout->addWidget(caption(tr("S&trategy"), strategy_, this));
    layout->addWidget(strategy_);
    layout->addWidget(caption(tr("&Align"), alignment_, this));
    layout->addWidget(alignment_);
    layout->addWidget(caption(tr("&Batch"), batch_, this));
    layout->addWidget(batch_);
    layout->addWidget(caption(tr("Se&q"), seq_, this));
    layout->addWidget(seq_);
    layout->addWidget(caption(tr("A&renas"), arenas_, this));
    layout->addWidget(arenas_, 3);
    layout->addWidget(caption(tr("Ro&utes"), routes_, this));
    layout->addWidget(routes_, 2);
    layout->addWidget(dims_);
    layout->addWidget(replan_);

    connect(dims_, &QPushButton::clicked, this, &PlanningControls::bindingsRequested);
    connect(replan_, &QPushButton::clicked, this, &PlanningControls::replanRequested);
    connect(arenas_, &QLineEdit::returnPressed, this, &PlanningControls::replanRequested);
    connect(routes_, &QLineEdit::returnPressed, this, &PlanningControls::replanRequested);
    setSettings(PlanSettings{});
}

PlanSettings PlanningControls::settings() const {
    PlanSettings s;
    s.mode = Mode(mode_->currentData().toInt());
    s.batch = uint64_t(batch_->value());
    s.seq = uint64_t(seq_->value());
    s.strategy = strategy_->currentText().toStdString();
    s.alignment = alignment_->currentData().toULongLong();
    s.arenas = parse_arena_settings(arenas_->text().toStdString());
    // Greyed for a problem (no roles): its text waits for the next graph instead of failing.
    if (routes_->isEnabledTo(this)) s.routes = parse_routes(routes_->text().toStdString());
    s.bindings = bindings_;
    s.memory_budget = memoryBudget_;
    s.shard = shard_;
    return s;
}

void PlanningControls::setSettings(const PlanSettings& s) {
    mode_->setCurrentIndex(std::max(0, mode_->findData(int(s.mode))));
    strategy_->setCurrentIndex(
        std::max(0, strategy_->findText(QString::fromStdString(s.strategy))));
    // A session may hold an alignment the list does not offer: add it rather than show another.
    const QVariant alignment = qulonglong(s.alignment);
    if (alignment_->findData(alignment) < 0)
        alignment_->addItem(QString::number(s.alignment), alignment);
    alignment_->setCurrentIndex(alignment_->findData(alignment));
    batch_->setValue(int(s.batch));
    seq_->setValue(int(s.seq));
    arenas_->setText(QString::fromStdString(format_arena_settings(s.arenas)));
    routes_->setText(QString::fromStdString(format_routes(s.routes)));
    setBindings(s.bindings);
    memoryBudget_ = s.memory_budget;
    shard_ = s.shard;
    updateReplanTip();
}

void PlanningControls::setShard(const ShardSpec& shard) {
    shard_ = shard;
    updateReplanTip();
}

void PlanningControls::updateReplanTip() {
    QString also;
    if (!shard_.single_rank() && !problem_)
        also += tr(" for %1 (--world-size, --rank, --shard)")
                    .arg(QString::fromStdString(describe_shard_spec(shard_)));
    if (memoryBudget_ != 0)
        also += tr(" within the memory budget of %1 (--memory-budget)")
                    .arg(QString::fromStdString(format_bytes(memoryBudget_)));
    replan_->setToolTip(tr("Plan the model again with these settings%1 (Ctrl+R)").arg(also));
}

void PlanningControls::setBindings(const DimBindings& bindings) {
    bindings_ = bindings;
}

void PlanningControls::setModelKind(std::optional<ModelKind> kind, bool dynamicDims) {
    const bool config = kind == ModelKind::TransformerConfig;
    batch_->setEnabled(config);
    seq_->setEnabled(config);
    mode_->setEnabled(kind != ModelKind::DsaCsv);
    routes_->setEnabled(kind != ModelKind::DsaCsv); // a problem's buffers have no roles
    problem_ = kind == ModelKind::DsaCsv;           // nor ranks: the shard waits, unmentioned
    updateReplanTip();
    dims_->setEnabled(kind == ModelKind::Onnx || dynamicDims);
}

} // namespace tmmu::studio
