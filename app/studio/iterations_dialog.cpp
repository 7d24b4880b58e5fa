#include "iterations_dialog.h"

#include "core/failure.h"
#include "dialog_parts.h"
#include "plan_choices.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace tmmu::studio {

IterationsDialog::IterationsDialog(const QString& modelName, const Graph& model,
                                   const QString& envelope, const QString& lines, QWidget* parent)
    : QDialog(parent), model_(model), lines_(new QPlainTextEdit(lines, this)),
      command_(wrappedLabel(QString(), this, true)),
      error_(refusalLabel(QStringLiteral("iterationsError"), this)) {
    setObjectName(QStringLiteral("iterationsDialog"));
    setWindowTitle(tr("Run iterations of %1").arg(modelName));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(wrappedLabel(
        tr("Run <b>%1</b> over iterations of these shapes, one iteration per line (e.g. "
           "<tt>seq=512</tt> or <tt>batch=2, seq=1024</tt>), from the plan on screen. An "
           "iteration that fits the plan in force runs on it; one that needs a larger "
           "dimension gets a new plan at the safepoint before it under REPLAN_AT_SAFEPOINT, "
           "or stops the run under ABORT.")
            .arg(modelName.toHtmlEscaped()),
        this));
    layout->addWidget(wrappedLabel(envelope, this, true));
    lines_->setObjectName(QStringLiteral("iterationLines"));
    lines_->setPlaceholderText(QStringLiteral("seq=512\nseq=1024"));
    lines_->setTabChangesFocus(true);
    layout->addWidget(lines_);
    command_->setObjectName(QStringLiteral("iterationsCommand"));
    layout->addWidget(command_);
    layout->addWidget(error_);
    layout->addWidget(planButtons(this, tr("Run")));
    connect(lines_, &QPlainTextEdit::textChanged, this, &IterationsDialog::linesChanged);
    setMinimumWidth(fontMetrics().averageCharWidth() * 64);
    linesChanged();
}

QString IterationsDialog::lines() const {
    return lines_->toPlainText();
}

// Each line without its blanks ("batch=2, seq = 512" reads "batch=2,seq=512", one argument of
// --iteration); blank lines are skipped.
QStringList IterationsDialog::packedLines() const {
    QStringList out;
    for (const QString& line : lines_->toPlainText().split(u'\n')) {
        QString packed;
        for (QChar c : line)
            if (!c.isSpace()) packed += c;
        if (!packed.isEmpty()) out << packed;
    }
    return out;
}

// Also clears a refusal: it was about lines that have changed since.
void IterationsDialog::linesChanged() {
    error_->hide();
    QString args;
    for (const QString& line : packedLines())
        args += QStringLiteral(" --iteration ") + line;
    command_->setText(args.isEmpty() ? tr("No iterations yet.") : tr("As tmmu plan%1").arg(args));
}

void IterationsDialog::accept() {
    std::vector<DimBinding> read;
    const QStringList lines = packedLines();
    try {
        if (lines.isEmpty())
            fail(FailureCode::InvalidArgument, "iterations",
                 "give at least one iteration, e.g. seq=512");
        for (qsizetype i = 0; i < lines.size(); ++i) {
            const std::string where = "iteration " + std::to_string(i);
            read.push_back(app::parse_iteration(lines[i].toStdString(), where));
            check_binding(model_, read.back(), where);
        }
    } catch (const Failure& f) {
        showRefusal(error_, QString::fromStdString(f.where() + ": " + f.message()), lines_);
        return;
    }
    iterations_ = std::move(read);
    QDialog::accept();
}

} // namespace tmmu::studio
