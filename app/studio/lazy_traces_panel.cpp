#include "lazy_traces_panel.h"

#include "job_runner.h"
#include "lazy_jobs.h"

#include <QBoxLayout>
#include <QComboBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>

namespace tmmu::studio {
namespace {

using sessions::LazyTraceSummary;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

LazyTracesPanel::LazyTracesPanel(JobRunner* jobs, std::function<QString()> sessionsPath,
                                 QWidget* parent)
    : QWidget(parent), jobs_(jobs), sessionsPath_(std::move(sessionsPath)),
      where_(new QLabel(this)), traces_(new QComboBox(this)),
      replay_(new QPushButton(tr("Replay"), this)), refresh_(new QPushButton(tr("Refresh"), this)),
      summary_(new QPlainTextEdit(this)) {
    setObjectName(QStringLiteral("lazyTracesPanel"));
    where_->setWordWrap(true);
    traces_->setPlaceholderText(tr("No recorded lazy traces"));
    traces_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    traces_->setMinimumContentsLength(16);
    replay_->setToolTip(tr("Run the selected program again from the text stored with it, as it "
                           "was recorded (eager, checkpoints, compile), show its trace and say "
                           "whether it matches the recording"));
    summary_->setReadOnly(true);
    summary_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    // The dock is narrow: long paths, hashes and the first difference wrap.
    summary_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    summary_->setPlaceholderText(
        tr("Lazy programs the studio runs while Sessions > Record runs is on, and those `tmmu "
           "lazy run --record` runs, are listed here."));

    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(where_);
    auto* row = new QHBoxLayout;
    row->addWidget(traces_, 1);
    row->addWidget(replay_);
    row->addWidget(refresh_);
    column->addLayout(row);
    column->addWidget(summary_, 1);

    refresh_->setToolTip(tr("List the traces again (those `tmmu lazy run --record` added since, "
                            "say)"));
    connect(refresh_, &QPushButton::clicked, this, &LazyTracesPanel::refresh);
    connect(traces_, &QComboBox::currentIndexChanged, this, &LazyTracesPanel::showSelected);
    connect(replay_, &QPushButton::clicked, this, [this] {
        if (traces_->currentIndex() >= 0) emit replayRequested(traces_->currentData().toLongLong());
    });
    refresh();
}

void LazyTracesPanel::refresh() {
    const QString path = sessionsPath_();
    where_->setText(path.isEmpty() ? tr("No sessions database is open")
                                   : tr("Recorded in %1").arg(path));
    replay_->setEnabled(false);
    refresh_->setEnabled(!path.isEmpty());
    if (path.isEmpty()) {
        traces_->clear();
        return;
    }
    jobs_->submit(
        {tr("Listing lazy traces"), QString(), this},
        [p = path.toStdString()](const Progress&) { return recorded_lazy_traces(p); },
        [this](const std::vector<LazyTraceSummary>& traces) {
            const QSignalBlocker quiet(traces_);
            traces_->clear();
            for (const LazyTraceSummary& t : traces) {
                traces_->addItem(qs(lazy_trace_label(t)), qlonglong(t.id));
                traces_->setItemData(traces_->count() - 1, qs(lazy_trace_details(t)),
                                     Qt::ToolTipRole);
            }
            traces_->setCurrentIndex(traces.empty() ? -1 : 0); // the newest
            showSelected();
        },
        [this](const JobFailure& f) {
            traces_->clear(); // what was listed may not be in the database named now
            showSelected();
            where_->setText(f.text());
        });
}

void LazyTracesPanel::showSelected() {
    replay_->setEnabled(traces_->currentIndex() >= 0);
    summary_->setPlainText(traces_->currentData(Qt::ToolTipRole).toString());
}

void LazyTracesPanel::showReplay(const ReplayedLazyTrace& replayed) {
    summary_->setPlainText(
        qs(lazy_trace_details(replayed.recorded) + "\n" + lazy_replay_report(replayed)));
}

QString LazyTracesPanel::summaryText() const {
    return summary_->toPlainText();
}

} // namespace tmmu::studio
