#include "run_panel.h"

#include "job_runner.h"
#include "studio_options.h"

#include "core/failure.h"
#include "runtime/run_summary.h"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

namespace tmmu::studio {

namespace {

QSpinBox* spinBox(int lo, int hi, int value, const QString& tip, QWidget* parent) {
    auto* box = new QSpinBox(parent);
    box->setRange(lo, hi);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QString runLabel(const sessions::RunSummary& r) {
    return QObject::tr("#%1  %2  %3 on %4%5%6")
        .arg(r.id)
        .arg(QString::fromStdString(r.created), QString::fromStdString(r.model),
             QString::fromStdString(r.backend),
             r.title.empty() ? QString() : QStringLiteral("  ") + QString::fromStdString(r.title),
             r.altered_reason.empty() ? QString() : QObject::tr("  ALTERED"));
}

} // namespace

RunPanel::RunPanel(JobRunner* jobs, std::function<QString()> sessionsPath, QWidget* parent)
    : QWidget(parent), jobs_(jobs), sessionsPath_(std::move(sessionsPath)),
      config_(new QLabel(this)), backend_(new QComboBox(this)),
      batch_(spinBox(1, 64, 1, tr("Sequences decoded together, one slot each"), this)),
      prompt_(spinBox(1, 4096, 16, tr("Length of each seeded random prompt"), this)),
      decode_(spinBox(1, 4096, 32, tr("Tokens to generate per sequence (greedy)"), this)),
      seed_(spinBox(1, 1'000'000, 1, tr("Seed of the weights and prompts"), this)),
      counters_(new QCheckBox(tr("Count dispatches"), this)),
      checkMemory_(new QCheckBox(tr("Check memory (guards and poison; slow)"), this)),
      record_(new QCheckBox(tr("Record in sessions"), this)),
      compare_(new QCheckBox(tr("Compare with CPU (every step's logits)"), this)),
      precision_(new QComboBox(this)), run_(new QPushButton(tr("Run"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)), replay_(new QPushButton(tr("Replay"), this)),
      recorded_(new QComboBox(this)), progress_(new QProgressBar(this)),
      summary_(new QPlainTextEdit(this)) {
    setObjectName(QStringLiteral("runPanel"));
    auto* model = new QStandardItemModel(backend_);
    for (const BackendChoice& b : backend_choices()) {
        auto* item = new QStandardItem(
            b.available ? QString::fromStdString(b.label)
                        : tr("%1 (unavailable: %2)")
                              .arg(QString::fromStdString(b.label),
                                   QString::fromStdString(b.unavailable_because)));
        item->setData(QString::fromStdString(b.name), Qt::UserRole);
        item->setToolTip(item->text());
        if (!b.available) item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
        model->appendRow(item);
    }
    backend_->setModel(model);
    // The reasons are long ("no CUDA driver (cudaErrorInsufficientDriver: CUDA driver version
    // is insufficient for CUDA runtime version)"): they must not widen the panel and with it the
    // window's minimum width. The box sizes to the labels; its list opens wide enough for the whole
    // texts.
    backend_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    backend_->setMinimumContentsLength(20);
    backend_->view()->setMinimumWidth(backend_->view()->sizeHintForColumn(0) + 16);
    counters_->setChecked(true);
    // Comparing needs another backend than the CPU's: the box follows the picker.
    compare_->setToolTip(tr("Runs the CPU backend too, then this backend on the CPU's tokens, and "
                            "compares every step (the CPU parity chart)"));
    precision_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    recorded_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    precision_->addItem(tr("f32"), QStringLiteral("f32"));
    precision_->addItem(tr("f16 matrices and tables (GPU backends)"), QStringLiteral("f16"));
    precision_->setToolTip(tr("How a GPU backend stores the weights: f16 halves the bytes a "
                              "token reads; sums stay f32. The CPU backend is the f32 reference."));
    const auto followBackend = [this] {
        const bool gpu = backend_->currentData().toString() != QStringLiteral("cpu");
        compare_->setEnabled(gpu);
        precision_->setEnabled(gpu);
    };
    connect(backend_, &QComboBox::currentIndexChanged, this, followBackend);
    followBackend();
    counters_->setToolTip(tr("Needed for the dispatch chart; off, the step loop counts nothing"));
    record_->setChecked(true);
    summary_->setReadOnly(true);
    summary_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    summary_->setLineWrapMode(QPlainTextEdit::NoWrap);
    summary_->setPlaceholderText(tr("Run a GPT-2, Llama, Mistral or Qwen2 config.json: its prompt "
                                    "and generated ids, throughput, memory and dispatches appear "
                                    "here."));
    progress_->setRange(0, 100);
    progress_->setTextVisible(true);
    recorded_->setPlaceholderText(tr("No recorded runs"));
    recorded_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    recorded_->setMinimumContentsLength(16);

    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(buildSettings());
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    buttons->addWidget(progress_, 1);
    column->addLayout(buttons);
    auto* replays = new QHBoxLayout;
    replays->addWidget(new QLabel(tr("Recorded:"), this));
    replays->addWidget(recorded_, 1);
    replays->addWidget(replay_);
    column->addLayout(replays);
    column->addWidget(summary_, 1);

    connect(run_, &QPushButton::clicked, this, &RunPanel::run);
    connect(cancel_, &QPushButton::clicked, this, [this] { jobs_->cancel(kModelRunKey); });
    connect(replay_, &QPushButton::clicked, this, [this] {
        if (recorded_->currentIndex() >= 0) replay(recorded_->currentData().toLongLong());
    });
    connect(jobs_, &JobRunner::jobProgress, this, [this](double fraction, const QString& stage) {
        if (!running_) return;
        progress_->setValue(int(fraction * 100));
        progress_->setFormat(stage + QStringLiteral(" %p%"));
    });
    setConfigPath(default_model_path());
    setRunning(false);
}

QWidget* RunPanel::buildSettings() {
    auto* box = new QWidget(this);
    auto* form = new QFormLayout(box);
    form->setContentsMargins(0, 0, 0, 0);
    auto* choose = new QPushButton(tr("Choose…"), box);
    choose->setToolTip(tr("A Hugging Face GPT-2, Llama, Mistral or Qwen2 config.json"));
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Model config to run"), QFileInfo(configPath_).absolutePath(),
            tr("Transformer configs (*.json);;All files (*)"));
        if (!path.isEmpty()) setConfigPath(path);
    });
    auto* model = new QHBoxLayout;
    model->addWidget(config_, 1);
    model->addWidget(choose);
    form->addRow(tr("Model"), model);
    form->addRow(tr("Backend"), backend_);
    // A row each, so the panel (and the dock column it shares) stays narrow.
    form->addRow(tr("Batch"), batch_);
    form->addRow(tr("Prompt tokens"), prompt_);
    form->addRow(tr("Decode tokens"), decode_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Weights"), precision_);
    // Across both columns: the boxes' texts are the widest things in the panel.
    for (QCheckBox* check : {counters_, checkMemory_, record_, compare_})
        form->addRow(check);
    return box;
}

void RunPanel::setConfigPath(const QString& path) {
    configPath_ = path;
    config_->setText(QFileInfo(path).fileName());
    config_->setToolTip(path);
}

RunJob RunPanel::job() const {
    RunJob job;
    job.config_path = configPath_.toStdString();
    job.backend = backend_->currentData().toString().toStdString();
    job.request.batch = uint32_t(batch_->value());
    job.request.prompt_tokens = uint32_t(prompt_->value());
    job.request.decode_tokens = uint32_t(decode_->value());
    job.request.seed = uint64_t(seed_->value());
    job.request.counters = counters_->isChecked();
    job.request.check_memory = checkMemory_->isChecked();
    job.compare_cpu = compare_->isChecked() && compare_->isEnabled();
    if (precision_->isEnabled() && precision_->currentData().toString() == QStringLiteral("f16"))
        job.request.weight_precision = runtime::WeightPrecision::F16;
    if (record_->isChecked() && record_->isEnabled())
        job.sessions_path = sessionsPath_().toStdString();
    return job;
}

void RunPanel::run() {
    const RunJob j = job();
    submit(tr("Running %1").arg(QFileInfo(configPath_).fileName()),
           [j](const Progress& p) { return execute_run(j, p); });
}

void RunPanel::replay(int64_t runId) {
    const std::string path = sessionsPath_().toStdString();
    submit(tr("Replaying run %1").arg(runId),
           [path, runId](const Progress& p) { return replay_recorded_run(path, runId, p); });
}

void RunPanel::refreshRecordedRuns() {
    const QString path = sessionsPath_();
    record_->setEnabled(!path.isEmpty());
    record_->setToolTip(path.isEmpty() ? tr("No sessions database is open")
                                       : tr("Recorded in %1").arg(path));
    if (path.isEmpty()) return;
    jobs_->submit(
        {tr("Listing recorded runs"), QString(), this},
        [p = path.toStdString()](const Progress&) { return recorded_runs(p); },
        [this](const std::vector<sessions::RunSummary>& runs) {
            recorded_->clear();
            for (const sessions::RunSummary& r : runs)
                recorded_->addItem(runLabel(r), qlonglong(r.id));
            recorded_->setCurrentIndex(runs.empty() ? -1 : 0); // the newest
            replay_->setEnabled(!running_ && !runs.empty());
        },
        [this](const JobFailure& f) { recorded_->setPlaceholderText(f.text()); });
}

QString RunPanel::summaryText() const {
    return summary_->toPlainText();
}

void RunPanel::setRunning(bool on, const QString& what) {
    running_ = on;
    run_->setEnabled(!on);
    cancel_->setEnabled(on);
    replay_->setEnabled(!on && recorded_->count() > 0);
    progress_->setValue(0);
    progress_->setFormat(on ? what : tr("idle"));
}

void RunPanel::submit(const QString& title, std::function<RunShown(const Progress&)> work) {
    setRunning(true, title);
    jobs_->submit(
        {title, kModelRunKey, this}, std::move(work),
        [this](const RunShown& shown) { onShown(shown); },
        [this](const JobFailure& f) { onFailed(f); });
}

void RunPanel::onShown(const RunShown& shown) {
    setRunning(false);
    QString text = QString::fromStdString(runtime::format_run(*shown.record));
    if (shown.replay)
        text = tr("replay of run %1: %2\n")
                   .arg(shown.run_id)
                   .arg(QString::fromStdString(
                            runtime::format_replay(*shown.replay, shown.record->result))
                            .trimmed()) +
               text;
    else if (shown.run_id)
        text += tr("recorded   run %1\n").arg(shown.run_id);
    summary_->setPlainText(text);
    emit runShown(shown);
    if (shown.run_id && !shown.replay) refreshRecordedRuns();
}

void RunPanel::onFailed(const JobFailure& failure) {
    if (failure.superseded) return; // the newer run owns the panel, and is running
    setRunning(false);
    const QString text = failure.cancelled() ? tr("Run cancelled") : failure.text();
    summary_->setPlainText(text);
    emit runFailed(text);
}

} // namespace tmmu::studio
