#include "dialog_parts.h"

#include "style/palette.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace tmmu::studio {

QLabel* wrappedLabel(const QString& text, QWidget* parent, bool plain) {
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    if (plain) label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QLabel* refusalLabel(const QString& objectName, QWidget* parent) {
    QLabel* label = wrappedLabel(QString(), parent, true);
    label->setObjectName(objectName);
    QPalette warning = label->palette();
    warning.setColor(QPalette::WindowText, views::ViewPalette::fromApplication().warning());
    label->setPalette(warning);
    label->hide();
    return label;
}

void showRefusal(QLabel* refusal, const QString& text, QWidget* field) {
    refusal->setText(text);
    refusal->show();
    if (!field) return;
    field->setFocus();
    if (auto* edit = qobject_cast<QLineEdit*>(field)) edit->selectAll();
}

QDialogButtonBox* planButtons(QDialog* dialog, const QString& okText) {
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
    buttons->button(QDialogButtonBox::Ok)->setText(okText);
    QObject::connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    return buttons;
}

} // namespace tmmu::studio
