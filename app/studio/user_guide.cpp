#include "user_guide.h"

#include "studio_options.h"

#include <QBoxLayout>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QMessageBox>
#include <QTextBrowser>
#include <QUrl>

namespace tmmu::studio {

QString user_guide_path() {
    return resource_dir() + QStringLiteral("/docs/user-guide.md");
}

QWidget* show_user_guide(QWidget* parent) {
    const QString path = user_guide_path();
    if (!QFileInfo::exists(path)) {
        auto* box = new QMessageBox(
            QMessageBox::Warning, QObject::tr("User guide"),
            QObject::tr("The user guide is not installed: %1 is missing.").arg(path),
            QMessageBox::Ok, parent);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->show();
        return box;
    }
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("userGuide"));
    dialog->setWindowTitle(QObject::tr("TMMU Studio user guide"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    auto* browser = new QTextBrowser(dialog);
    browser->setOpenExternalLinks(true);
    // Markdown: its images and links resolve against the file, so the screenshots show.
    browser->setSource(QUrl::fromLocalFile(path), QTextDocument::MarkdownResource);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(browser);
    layout->addWidget(buttons);
    dialog->resize(900, 700);
    dialog->show();
    return dialog;
}

} // namespace tmmu::studio
