#pragma once
// The dims dialog: binds an ONNX model's symbolic dimensions and whole input shapes before it is
// planned (issue 15). It lists the inputs as the file declares them ("x: N × 3 × ? × ?"), asks
// for a value per symbolic dim and, optionally, a whole shape per input (for dims an exporter
// left unknown and unnamed), and whether views and in-place ops alias as ONNX runtimes do.
//
// Invariant: bindings() is what the fields say only once accept() validated them; an entry that
// does not parse (the same text `tmmu --dim` and `--input-shape` refuse, with the same
// messages) keeps the dialog open with the message shown and its field focused.
#include "planning.h"

#include "ir/annotations.h"

#include <QDialog>
#include <QMap>
#include <QString>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QFormLayout;
class QLabel;
class QLineEdit;
QT_END_NAMESPACE

namespace tmmu::studio {

class DimsDialog : public QDialog {
    Q_OBJECT
  public:
    // `declared`: declared_inputs() of the model; `current`: the bindings to start from;
    // `problem`: why the dialog is shown (an UNBOUND_DIMENSION message), empty when asked for.
    DimsDialog(const QString& modelName, const ModelAnnotations& declared,
               const DimBindings& current, const QString& problem, QWidget* parent = nullptr);

    DimBindings bindings() const { return bindings_; }

    // For tests: the field of a symbolic dim or an input (null when the model has none such),
    // the aliasing switch and the validation message.
    QLineEdit* dimField(const QString& name) const { return dims_.value(name); }
    QLineEdit* shapeField(const QString& input) const { return shapes_.value(input); }
    QCheckBox* aliasingBox() const { return aliasing_; }
    QLabel* errorLabel() const { return error_; }

  public slots:
    void accept() override;

  private:
    void addInputs(const ModelAnnotations& declared, const DimBindings& current);
    void addDims(const ModelAnnotations& declared, const DimBindings& current);
    // Parses every field into bindings_; false (with the message shown) on the first bad one.
    bool readFields();
    void showError(const QString& text, QLineEdit* field);

    QFormLayout* inputsForm_ = nullptr;
    QFormLayout* dimsForm_ = nullptr;
    QMap<QString, QLineEdit*> dims_;   // symbolic name -> value field
    QMap<QString, QLineEdit*> shapes_; // input name -> whole-shape field
    QCheckBox* aliasing_ = nullptr;
    QLabel* error_ = nullptr;
    DimBindings bindings_;
};

} // namespace tmmu::studio
