// Menus, shortcuts, files (open dialog, recent files, drag and drop) and message boxes.
#include "main_window.h"

#include "about_text.h"
#include "context/plan_context.h"
#include "job_runner.h"
#include "panels/tensor_table_panel.h"
#include "planning_controls.h"
#include "session_actions.h"
#include "studio_options.h"
#include "studio_status_bar.h"
#include "user_guide.h"

#include <QAbstractSpinBox>
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTextEdit>
#include <QToolBar>

namespace tmmu::studio {
namespace {

const QString kRecentKey = QStringLiteral("recentFiles");

// Keys typed into a text field belong to it, not to the step shortcuts.
bool textFieldHasFocus() {
    QWidget* w = QApplication::focusWidget();
    if (!w) return false;
    if (auto* edit = qobject_cast<QTextEdit*>(w)) return !edit->isReadOnly();
    if (auto* combo = qobject_cast<QComboBox*>(w)) return combo->isEditable();
    return qobject_cast<QLineEdit*>(w) || qobject_cast<QAbstractSpinBox*>(w) ||
           qobject_cast<QPlainTextEdit*>(w);
}

QString firstLocalFile(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isFile()) return url.toLocalFile();
    return {};
}

} // namespace

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openFileDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    sessions_->addExportAction(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* plan = menuBar()->addMenu(tr("&Plan"));
    QAction* replanAction = plan->addAction(tr("&Re-plan"), this, &MainWindow::replan);
    replanAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    plan->addAction(tr("&Cancel planning"), this, [this] { jobs_->cancel(kShownPlanKey); });
    bindingsAction_ = plan->addAction(tr("&Dimensions…"), this, &MainWindow::editBindings);
    bindingsAction_->setEnabled(false);
    shardAction_ = plan->addAction(tr("Distributed &run…"), this, &MainWindow::editShard);
    iterationsAction_ = plan->addAction(tr("Run &iterations…"), this, &MainWindow::runIterations);
    iterationsAction_->setStatusTip(tr("Run an IR graph with a shape envelope or a transformer "
                                       "config over iterations of other shapes, as tmmu plan "
                                       "--iteration"));
    iterationsAction_->setEnabled(false);
    plan->addSeparator();
    applyAction_ = plan->addAction(tr("&Apply to host memory…"), this, &MainWindow::applyToHost);
    applyAction_->setStatusTip(
        tr("Bind, fill and read back every tensor in host memory, as tmmu plan --apply"));
    applyAction_->setEnabled(false);
    connect(ctx_, &views::PlanContext::planChanged, this,
            [this] { applyAction_->setEnabled(ctx_->plan() != nullptr); });
    connect(controls_, &PlanningControls::bindingsRequested, this, &MainWindow::editBindings);
    menuBar()->addMenu(sessions_->buildMenu(this));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* find = view->addAction(tr("&Find tensor…"), this, [this] {
        dock(QStringLiteral("tensorTableDock"))->show();
        dock(QStringLiteral("tensorTableDock"))->raise();
        table_->focusSearch();
    });
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::ApplicationShortcut);
    view->addSeparator();
    for (QDockWidget* d : docks())
        view->addAction(d->toggleViewAction());
    for (QToolBar* bar : findChildren<QToolBar*>(QString(), Qt::FindDirectChildrenOnly))
        view->addAction(bar->toggleViewAction());
    view->addSeparator();
    QMenu* colour = view->addMenu(tr("&Colour by"));
    colorModes_ = new QActionGroup(this);
    for (auto [mode, text] : {std::pair(views::ColorMode::Role, tr("&Role")),
                              std::pair(views::ColorMode::Slot, tr("&Slot"))}) {
        QAction* a = colour->addAction(text);
        a->setCheckable(true);
        a->setData(int(mode));
        a->setChecked(ctx_->colorMode() == mode);
        colorModes_->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode] { ctx_->setColorMode(mode); });
    }
    connect(ctx_, &views::PlanContext::colorModeChanged, this, [this] {
        for (QAction* a : colorModes_->actions())
            a->setChecked(a->data().toInt() == int(ctx_->colorMode()));
    });
    QMenu* themeMenu = view->addMenu(tr("&Theme"));
    themes_ = new QActionGroup(this);
    for (auto [theme, text] :
         {std::pair(Theme::System, tr("&System")), std::pair(Theme::Light, tr("&Light")),
          std::pair(Theme::Dark, tr("&Dark"))}) {
        QAction* a = themeMenu->addAction(text);
        a->setCheckable(true);
        a->setData(int(theme));
        a->setChecked(theme == theme_);
        themes_->addAction(a);
        connect(a, &QAction::triggered, this, [this, theme] {
            setTheme(theme);
            if (persist_) QSettings().setValue(QStringLiteral("view/theme"), theme_name(theme));
        });
    }
    view->addAction(tr("Reset &layout"), this, &MainWindow::resetLayout);

    buildStepShortcuts(menuBar()->addMenu(tr("&Go")));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&User guide"), this, [this] { show_user_guide(this); });
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&Keyboard shortcuts"), this, &MainWindow::showShortcuts);
    QAction* about = help->addAction(tr("&About TMMU Studio"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    rebuildRecentMenu();
}

void MainWindow::setTheme(Theme theme) {
    theme_ = theme;
    apply_theme(theme);
    for (QAction* a : themes_->actions())
        a->setChecked(a->data().toInt() == int(theme));
}

void MainWindow::buildStepShortcuts(QMenu* menu) {
    struct Step {
        QString text;
        Qt::Key key;
        std::function<void()> move;
    };
    const std::vector<Step> steps{
        {tr("&Previous step"), Qt::Key_Left, [this] { ctx_->stepBy(-1); }},
        {tr("&Next step"), Qt::Key_Right, [this] { ctx_->stepBy(1); }},
        {tr("&First step"), Qt::Key_Home, [this] { ctx_->setCurrentEvent(0); }},
        {tr("&Last step"), Qt::Key_End, [this] { ctx_->setCurrentEvent(UINT64_MAX); }},
    };
    for (const Step& s : steps) {
        QAction* a = menu->addAction(s.text);
        a->setShortcut(QKeySequence(s.key));
        // Application-wide so the keys work in floating docks too. Text fields claim these
        // keys through ShortcutOverride; the check below covers widgets that do not.
        a->setShortcutContext(Qt::ApplicationShortcut);
        addAction(a);
        connect(a, &QAction::triggered, this, [key = s.key, move = s.move] {
            if (!textFieldHasFocus()) {
                move();
                return;
            }
            QKeyEvent press(QEvent::KeyPress, key, Qt::NoModifier);
            QCoreApplication::sendEvent(QApplication::focusWidget(), &press);
        });
    }
}

void MainWindow::openFileDialog() {
    QString dir = modelPath_.isEmpty() ? resource_dir() + QStringLiteral("/models")
                                       : QFileInfo(modelPath_).absolutePath();
    QString path = QFileDialog::getOpenFileName(
        this, tr("Open model"), dir,
        tr("Models and programs (*.json *.csv *.onnx *.cbor *.ckpt);;Native IR JSON (*.json);;"
           "Transformer config (*.json);;ONNX model (*.onnx);;Offset-assignment CSV (*.csv);;Lazy "
           "program (*.json);;Exported session (*.json);;Plan checkpoint (*.cbor *.ckpt);;All "
           "files "
           "(*)"));
    if (!path.isEmpty()) openModel(path);
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::rememberFile(const QString& path) {
    if (!persist_) return;
    QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList files = recentFiles();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    QSettings().setValue(kRecentKey, files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_) return;
    recentMenu_->clear();
    const QStringList files = recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        QAction* a = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1 < 10 ? QString::number(i + 1) : QString("1&0"),
                                         QFileInfo(files[i]).fileName()),
            this, [this, path = files[i]] { openModel(path); });
        a->setToolTip(files[i]);
        a->setStatusTip(files[i]);
    }
    if (!files.isEmpty()) recentMenu_->addSeparator();
    QAction* clear = recentMenu_->addAction(tr("&Clear list"), this, [this] {
        QSettings().remove(kRecentKey);
        rebuildRecentMenu();
    });
    clear->setEnabled(!files.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!firstLocalFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QString path = firstLocalFile(event->mimeData());
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    openModel(path);
}

void MainWindow::closeOnPlanChange(QDialog* dialog, const QString& what) {
    // The dialog is the connection's context: the connection goes with it. An accepted dialog
    // lingers hidden until deleted, and the plan its own job shows must not report it.
    connect(ctx_, &views::PlanContext::planChanged, dialog, [this, dialog, what] {
        if (!dialog->isVisible()) return;
        dialog->reject();
        // Queued, after whatever the window says of the new plan (an ALTERED session, say),
        // which this adds to rather than replaces.
        QMetaObject::invokeMethod(
            this,
            [this, what] {
                const QString closed =
                    tr("%1 closed: another plan is shown now; open it again for that plan")
                        .arg(what);
                const QString now = status_->currentMessage();
                status_->showMessage(now.isEmpty() ? closed : now + QStringLiteral(" — ") + closed);
            },
            Qt::QueuedConnection);
    });
}

void MainWindow::showResultBox(QMessageBox::Icon icon, const QString& title, const QString& html) {
    if (!resultBox_) {
        resultBox_ = new QMessageBox(this);
        resultBox_->setObjectName(QStringLiteral("resultBox"));
        resultBox_->setStandardButtons(QMessageBox::Ok);
        resultBox_->setTextFormat(Qt::RichText);
        resultBox_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    resultBox_->setIcon(icon);
    resultBox_->setWindowTitle(title);
    resultBox_->setText(html);
    resultBox_->open();
}

void MainWindow::showAbout() {
    auto* box = new QMessageBox(QMessageBox::Information, tr("About TMMU Studio"), aboutText(),
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("aboutBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showShortcuts() {
    const QList<std::pair<QString, QString>> rows{
        {QStringLiteral("Left / Right"), tr("previous / next step")},
        {QStringLiteral("Home / End"), tr("first / last step")},
        {QStringLiteral("W / S, + / -"), tr("zoom in / out (timelines)")},
        {QStringLiteral("A / D"), tr("pan left / right (timelines)")},
        {QStringLiteral("Wheel, drag"), tr("zoom and pan (timelines)")},
        {QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText), tr("find tensor")},
        {QKeySequence(Qt::CTRL | Qt::Key_R).toString(QKeySequence::NativeText), tr("re-plan")},
        {QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText), tr("open model")},
        {QKeySequence(QKeySequence::HelpContents).toString(QKeySequence::NativeText),
         tr("user guide")},
    };
    QString html = QStringLiteral("<table cellpadding=3>");
    for (const auto& [keys, what] : rows)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys, what);
    html += QStringLiteral("</table>");
    auto* box =
        new QMessageBox(QMessageBox::NoIcon, tr("Keyboard shortcuts"), html, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showFailureBox(const QString& text) {
    // One non-blocking box, reused: a failure never stops the event loop (or a test).
    if (!failureBox_) {
        failureBox_ = new QMessageBox(QMessageBox::Warning, tr("Planning failed"), QString(),
                                      QMessageBox::Ok, this);
        failureBox_->setObjectName(QStringLiteral("failureBox"));
    }
    failureBox_->setText(text);
    failureBox_->setInformativeText(ctx_->plan() ? tr("The previous plan is still shown.")
                                                 : QString());
    failureBox_->open();
}

} // namespace tmmu::studio
