#pragma once
// Parts the studio's planning dialogs (dims, envelope, distributed run) share, so they look and
// behave alike: wrapped selectable text, a hidden warning-coloured message line, and OK/Cancel
// buttons whose OK says what it plans.
#include <QString>

QT_BEGIN_NAMESPACE
class QDialog;
class QDialogButtonBox;
class QLabel;
class QWidget;
QT_END_NAMESPACE

namespace tmmu::studio {

// Word-wrapped, selectable; rich text unless `plain`.
QLabel* wrappedLabel(const QString& text, QWidget* parent, bool plain = false);
// Plain, wrapped, in the palette's warning colour and hidden until a refusal shows it.
QLabel* refusalLabel(const QString& objectName, QWidget* parent);
// Shows `text` in a refusalLabel and puts the focus on the field at fault (a line edit's text
// selected, so typing replaces it); null when no one field is.
void showRefusal(QLabel* refusal, const QString& text, QWidget* field);
// OK (labelled `okText`) runs the dialog's accept(), Cancel its reject().
QDialogButtonBox* planButtons(QDialog* dialog, const QString& okText);

} // namespace tmmu::studio
