// The distributed-run dialog's part of the main window: which rank to plan and what is sharded
// across the ranks, kept in the toolbar for this and later re-plans.
#include "main_window.h"

#include "planning_controls.h"
#include "shard_dialog.h"

namespace tmmu::studio {

ShardDialog* MainWindow::shardDialog() const {
    return shardDialog_;
}

void MainWindow::editShard() {
    delete shardDialog_;
    auto* dialog = new ShardDialog(controls_->shard(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        controls_->setShard(dialog->spec());
        replan();
    });
    shardDialog_ = dialog;
    // Window-modal and non-blocking, as the dims dialog: tests drive it in the event loop.
    dialog->open();
}

} // namespace tmmu::studio
