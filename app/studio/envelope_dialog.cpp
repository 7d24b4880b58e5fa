#include "envelope_dialog.h"

#include "core/failure.h"
#include "dialog_parts.h"
#include "plan_choices.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace tmmu::studio {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

EnvelopeDialog::EnvelopeDialog(const QString& modelName, const Graph& model, QWidget* parent)
    : QDialog(parent), model_(model), error_(refusalLabel(QStringLiteral("envelopeError"), this)),
      binding_(binding_of(model)) {
    setObjectName(QStringLiteral("envelopeDialog"));
    setWindowTitle(tr("Dimensions of %1").arg(modelName));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(
        wrappedLabel(tr("Plan <b>%1</b> with these values of its dynamic dimensions. "
                        "The plan fits every iteration whose dimensions are no larger; "
                        "the envelope's max fits them all.")
                         .arg(modelName.toHtmlEscaped()),
                     this));
    auto* group = new QGroupBox(tr("Dynamic dimensions"), this);
    auto* form = new QFormLayout(group);
    for (const DynamicDim& d : model.dims) {
        auto* field = new QLineEdit(QString::number(d.value), this);
        field->setObjectName(QStringLiteral("dim_%1").arg(qs(d.name)));
        field->setPlaceholderText(tr("%1 to %2").arg(d.min).arg(d.max));
        form->addRow(tr("%1  (%2 to %3)").arg(qs(d.name)).arg(d.min).arg(d.max), field);
        connect(field, &QLineEdit::textChanged, error_, &QWidget::hide);
        fields_.insert(qs(d.name), field);
    }
    layout->addWidget(group);
    layout->addWidget(wrappedLabel(tr("Replan policy: %1 (the model's own; tmmu plan --iteration "
                                      "runs it over iterations)")
                                       .arg(qs(replan_policy_name(model.replan_policy))),
                                   this));
    layout->addWidget(error_);
    layout->addWidget(planButtons(this, tr("Plan")));
    setMinimumWidth(fontMetrics().averageCharWidth() * 64);
}

void EnvelopeDialog::accept() {
    DimBinding read;
    QLineEdit* field = nullptr;
    try {
        for (auto it = fields_.cbegin(); it != fields_.cend(); ++it) {
            field = it.value();
            const std::string name = it.key().toStdString();
            // The name stays out of the parsed text (it may hold '='), as in the ONNX dialog.
            read[name] = app::parse_dim_binding("_=" + field->text().trimmed().toStdString(),
                                                "--dim " + name)
                             .second;
            check_binding(model_, {{name, read[name]}}, "--dim " + name);
        }
        field = nullptr; // a graph that does not hold there is no one field's fault
        (void)bound_at(model_, read, "--dim");
    } catch (const Failure& f) {
        showRefusal(error_, qs(f.where() + ": " + f.message()), field);
        return;
    }
    binding_ = std::move(read);
    QDialog::accept();
}

} // namespace tmmu::studio
