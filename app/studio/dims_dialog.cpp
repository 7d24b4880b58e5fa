#include "dims_dialog.h"

#include "core/failure.h"
#include "dialog_parts.h"
#include "plan_choices.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace tmmu::studio {
namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// "N × 3 × ? × ?" as the file declares it; "scalar" for no dims.
QString declaredShape(const std::vector<std::string>& dims) {
    if (dims.empty()) return QObject::tr("scalar");
    QStringList parts;
    for (const std::string& d : dims)
        parts << qs(d);
    return parts.join(QStringLiteral(" \u00d7 "));
}

QString shapeEntry(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (int64_t d : shape)
        parts << QString::number(d);
    return parts.join('x');
}

// A field's text through the parsers behind --dim and --input-shape, so the dialog accepts and
// refuses exactly what `tmmu` does, with its messages. The name is left out of the parsed text
// (an ONNX name may hold '='); the failure's `where` names it instead.
int64_t parsedDim(const QString& text, const QString& name) {
    return app::parse_dim_binding("_=" + text.toStdString(),
                                  QStringLiteral("symbolic dimension '%1'").arg(name).toStdString())
        .second;
}

std::vector<int64_t> parsedShape(const QString& text, const QString& input) {
    return app::parse_input_shape("_=" + text.toStdString(),
                                  QStringLiteral("shape of input '%1'").arg(input).toStdString())
        .second;
}

// An UNBOUND_DIMENSION message lists every use of every name: a few lines, scrolled, so a
// large model's message cannot push the fields off the screen.
QPlainTextEdit* problemBox(const QString& text, QWidget* parent) {
    auto* box = new QPlainTextEdit(text, parent);
    box->setObjectName(QStringLiteral("dimsProblem"));
    box->setReadOnly(true);
    // Tensor names run long without spaces: break them rather than scroll sideways.
    box->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    box->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    QPalette muted = box->palette();
    muted.setColor(QPalette::Text, muted.color(QPalette::PlaceholderText));
    box->setPalette(muted);
    box->ensurePolished(); // the style sets the frame
    const int margins = 2 * (int(box->document()->documentMargin()) + box->frameWidth());
    box->setFixedHeight(box->fontMetrics().lineSpacing() * 3 + margins);
    return box;
}

} // namespace

DimsDialog::DimsDialog(const QString& modelName, const ModelAnnotations& declared,
                       const DimBindings& current, const QString& problem, QWidget* parent)
    : QDialog(parent), aliasing_(new QCheckBox(tr("Alias views and in-place ops like ONNX "
                                                  "runtimes"),
                                               this)),
      error_(refusalLabel(QStringLiteral("dimsError"), this)), bindings_(current) {
    setObjectName(QStringLiteral("dimsDialog"));
    setWindowTitle(tr("Dimensions of %1").arg(modelName));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(wrappedLabel(tr("Give each symbolic dimension of <b>%1</b> a value, or an "
                                      "input its whole shape, to plan the model with those sizes.")
                                       .arg(modelName.toHtmlEscaped()),
                                   this));
    if (!problem.isEmpty()) layout->addWidget(problemBox(problem, this));
    auto* inputs = new QGroupBox(tr("Inputs"), this);
    inputsForm_ = new QFormLayout(inputs);
    addInputs(declared, current);
    layout->addWidget(inputs);
    auto* dims = new QGroupBox(tr("Symbolic dimensions"), this);
    dimsForm_ = new QFormLayout(dims);
    addDims(declared, current);
    layout->addWidget(dims);

    aliasing_->setChecked(current.aliasing);
    aliasing_->setToolTip(tr("Reshape, Flatten, Squeeze, Unsqueeze and Identity outputs share "
                             "their input's bytes, and single-consumer elementwise ops write in "
                             "place (off: every tensor gets bytes of its own, --no-aliasing)"));
    layout->addWidget(aliasing_);
    layout->addWidget(error_);
    layout->addWidget(planButtons(this, tr("Plan")));
    setMinimumWidth(fontMetrics().averageCharWidth() * 84);
}

void DimsDialog::addInputs(const ModelAnnotations& declared, const DimBindings& current) {
    for (const ModelAnnotations::Input& in : declared.inputs) {
        auto* field = new QLineEdit(this);
        field->setPlaceholderText(tr("whole shape, e.g. 1x3x640x640 (optional)"));
        field->setClearButtonEnabled(true);
        if (auto it = current.input_shapes.find(in.name); it != current.input_shapes.end())
            field->setText(shapeEntry(it->second));
        const QString name = qs(in.name);
        inputsForm_->addRow(QStringLiteral("%1  (%2)").arg(name, declaredShape(in.dims)), field);
        connect(field, &QLineEdit::textChanged, error_, &QWidget::hide);
        shapes_.insert(name, field);
    }
    if (declared.inputs.empty()) inputsForm_->addRow(new QLabel(tr("none declared"), this));
}

void DimsDialog::addDims(const ModelAnnotations& declared, const DimBindings& current) {
    for (const std::string& name : declared.symbolic_dims) {
        auto* field = new QLineEdit(this);
        field->setPlaceholderText(tr("positive integer"));
        field->setClearButtonEnabled(true);
        if (auto it = current.dims.find(name); it != current.dims.end())
            field->setText(QString::number(it->second));
        dimsForm_->addRow(qs(name), field);
        connect(field, &QLineEdit::textChanged, error_, &QWidget::hide);
        dims_.insert(qs(name), field);
    }
    if (declared.symbolic_dims.empty())
        dimsForm_->addRow(new QLabel(tr("none: the file names no dimensions"), this));
}

bool DimsDialog::readFields() {
    DimBindings read;
    read.aliasing = aliasing_->isChecked();
    QLineEdit* field = nullptr;
    try {
        for (auto it = dims_.cbegin(); it != dims_.cend(); ++it) {
            field = it.value();
            const QString text = field->text().trimmed();
            if (text.isEmpty()) continue;
            read.dims[it.key().toStdString()] = parsedDim(text, it.key());
        }
        for (auto it = shapes_.cbegin(); it != shapes_.cend(); ++it) {
            field = it.value();
            const QString text = field->text().trimmed();
            if (text.isEmpty()) continue;
            read.input_shapes[it.key().toStdString()] = parsedShape(text, it.key());
        }
    } catch (const Failure& f) {
        showError(qs(f.where() + ": " + f.message()), field);
        return false;
    }
    bindings_ = std::move(read);
    return true;
}

void DimsDialog::showError(const QString& text, QLineEdit* field) {
    showRefusal(error_, text, field);
}

void DimsDialog::accept() {
    if (readFields()) QDialog::accept();
}

} // namespace tmmu::studio
