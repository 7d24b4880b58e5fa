#pragma once
// Plan > Dimensions for an IR graph with a shape envelope (seed 000 II.H): a value for each
// dynamic dimension inside its [min, max], what `tmmu plan --dim NAME=VALUE` takes. The fields
// start at the binding shown; the replan policy is shown, not edited (it is the model's).
//
// Invariant: binding() is what the fields say only once accept() bound a copy of the model there
// (bound_at: the rules and messages of `tmmu --dim`, the envelope and the graph at those
// shapes); a binding it refuses keeps the dialog open with the message shown.
#include "ir/dynamic_dims.h"

#include <QDialog>
#include <QMap>
#include <QString>

QT_BEGIN_NAMESPACE
class QLabel;
class QLineEdit;
QT_END_NAMESPACE

namespace tmmu::studio {

class EnvelopeDialog : public QDialog {
    Q_OBJECT
  public:
    // `model`: the graph as shown, bound; its dims give the envelope and the starting values.
    EnvelopeDialog(const QString& modelName, const Graph& model, QWidget* parent = nullptr);

    DimBinding binding() const { return binding_; }

    // For tests: a dimension's field (null for an undeclared name) and the validation message.
    QLineEdit* dimField(const QString& name) const { return fields_.value(name); }
    QLabel* errorLabel() const { return error_; }

  public slots:
    void accept() override;

  private:
    Graph model_; // bound copies of it check the fields
    QMap<QString, QLineEdit*> fields_;
    QLabel* error_;
    DimBinding binding_;
};

} // namespace tmmu::studio
